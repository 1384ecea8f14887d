"""Settings loaded once: SPEC defaults (brainlab.spec) overridden by one TOML file.

The file is ``--config PATH`` (a group-level option of the ``brainlab`` command), else
``$BRAINLAB_CONFIG``, else ``brainlab.toml`` in the working directory when present. It may
hold ``[thresholds]`` (fields of :class:`~brainlab.spec.thresholds.Thresholds`),
``[regulator]`` (fields of :class:`~brainlab.spec.regulator.RegulatorRules`), ``[paths]``
(``db``, ``reports``, ``prices``; relative to the file's folder), ``timezone`` and ``start_of_week``. The CLI
puts the loaded :class:`Settings` on click's context and exports ``BRAINLAB_CONFIG``, so
notebooks and reports run by a command read the same file. A bad file or key is one
ConfigError naming both.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from brainlab.common.errors import ConfigError
from brainlab.common.paths import (  # noqa: F401  (DEFAULT_DB, DEFAULT_REPORTS, DEMO_DIR re-exported)
    CONFIG_ENV,
    DEFAULT_CONFIG,
    DEFAULT_DB,
    DEFAULT_REPORTS,
    DEMO_DIR,
    config_requested,
)
from brainlab.spec.regulator import RegulatorRules
from brainlab.spec.thresholds import CONTEXT_WINDOW_TOKENS, Thresholds  # noqa: F401
from brainlab.spec.values import parse_overrides, typed_value  # noqa: F401  (re-exported)
from brainlab.spec.weeks import FIRST_DAYS

PATH_KEYS = ("db", "reports", "prices")
TOP_KEYS = ("thresholds", "regulator", "paths", "timezone", "start_of_week")


@dataclass(frozen=True)
class Settings:
    """Everything a command needs to know besides its arguments."""

    thresholds: Thresholds = field(default_factory=Thresholds)
    rules: RegulatorRules = field(default_factory=RegulatorRules)  # base of --rules specs
    db: Path | None = None  # [paths] db: the store commands use when --db is not given
    reports: Path | None = None  # [paths] reports: where `report weekly` writes
    prices: Path | None = None  # [paths] prices: a price file (as --prices / $BRAINLAB_PRICES)
    timezone: str | None = None  # IANA zone of dated views (None: the machine's)
    start_of_week: str | None = None  # "monday" (ISO, default) or "sunday"
    source: Path | None = None  # the TOML file these settings came from, if any


def config_file(path: str | os.PathLike | None = None) -> Path | None:
    """The settings file to read: ``path``, else ``$BRAINLAB_CONFIG``, else ``./brainlab.toml``.

    None when no path is given and the default file does not exist (SPEC defaults).
    """
    if path:
        return Path(path)
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV])
    return DEFAULT_CONFIG if config_requested() else None


def load_settings(path: str | os.PathLike | None = None) -> Settings:
    """Read settings from :func:`config_file` (``path`` first), else the SPEC defaults."""
    candidate = config_file(path)
    if candidate is None:
        return Settings()
    if not candidate.is_file():
        raise ConfigError(f"config file not found: {candidate} (give an existing TOML file)")
    import tomllib

    try:
        data = tomllib.loads(candidate.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"{candidate}: not a readable TOML file ({exc})") from exc
    try:
        return _settings(data, candidate)
    except ConfigError as exc:
        raise ConfigError(f"{candidate}: {exc}") from exc


def _settings(data: dict[str, Any], source: Path) -> Settings:
    """Check every key of a parsed file and build its Settings."""
    unknown = sorted(set(data) - set(TOP_KEYS))
    if unknown:
        raise ConfigError(f"unknown key(s) {', '.join(unknown)}; known: {', '.join(TOP_KEYS)}")
    tables = {name: data.get(name, {}) for name in ("thresholds", "regulator", "paths")}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise ConfigError(f"{name} must be a table ([{name}]), got {table!r}")
    paths = tables["paths"]
    unknown = sorted(set(paths) - set(PATH_KEYS))
    if unknown:
        raise ConfigError(f"unknown path(s) {', '.join(unknown)}; known: {', '.join(PATH_KEYS)}")
    resolved = {}
    for key, value in paths.items():
        if not isinstance(value, str) or not value:
            raise ConfigError(f"path {key} expects a file or folder name, got {value!r}")
        resolved[key] = (source.parent / Path(value).expanduser())
    timezone = data.get("timezone")
    if timezone is not None and not isinstance(timezone, str):
        raise ConfigError(f"timezone expects a name such as Europe/Paris, got {timezone!r}")
    start_of_week = data.get("start_of_week")
    if start_of_week is not None and start_of_week not in FIRST_DAYS:
        raise ConfigError(f"start_of_week expects monday or sunday, got {start_of_week!r}")
    return Settings(thresholds=Thresholds().replace(**tables["thresholds"]),
                    rules=RegulatorRules().replace(**tables["regulator"]),
                    timezone=timezone, start_of_week=start_of_week, source=source, **resolved)
