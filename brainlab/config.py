"""Paths, thresholds and rule defaults: SPEC values in frozen dataclasses, overridable by TOML.

A user file (``brainlab.toml`` in the working directory, or ``--config PATH``) may hold a
``[thresholds]`` table whose keys are the field names of :class:`Thresholds`.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from brainlab.errors import ConfigError
from brainlab.paths import DEFAULT_DB, DEFAULT_REPORTS, DEMO_DIR  # noqa: F401  (re-exported)
from brainlab.spec.thresholds import CONTEXT_WINDOW_TOKENS, Thresholds  # noqa: F401
from brainlab.spec.values import parse_overrides, typed_value  # noqa: F401  (re-exported)


@dataclass(frozen=True)
class Settings:
    """Everything a command needs to know besides its arguments."""

    thresholds: Thresholds = field(default_factory=Thresholds)
    source: Path | None = None  # the TOML file these settings came from, if any


def load_settings(path: str | os.PathLike | None = None) -> Settings:
    """Read settings from ``path`` (or ``./brainlab.toml`` when present), else the defaults."""
    candidate = Path(path) if path else Path("brainlab.toml")
    if not candidate.exists():
        if path:
            raise ConfigError(f"config file not found: {candidate}")
        return Settings()
    try:
        data = tomllib.loads(candidate.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{candidate}: {exc}") from exc
    thresholds = Thresholds().replace(**data.get("thresholds", {}))
    return Settings(thresholds=thresholds, source=candidate)

