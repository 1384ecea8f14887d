"""Paths, thresholds and rule defaults: SPEC values in frozen dataclasses, overridable by TOML.

A user file (``brainlab.toml`` in the working directory, or ``--config PATH``) may hold a
``[thresholds]`` table whose keys are the field names of :class:`Thresholds`, and top-level
``timezone`` (IANA name) and ``start_of_week`` keys for the dated usage views.
"""

from __future__ import annotations

import dataclasses
import numbers
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from brainlab.errors import ConfigError
from brainlab.paths import DEFAULT_DB, DEFAULT_REPORTS, DEMO_DIR  # noqa: F401  (re-exported)

CONTEXT_WINDOW_TOKENS = 200_000  # SPEC §2.5 / §7: budget reference and default window


@dataclass(frozen=True)
class Thresholds:
    """Every metabolism threshold of SPEC §3.3 and breath alert of SPEC §4.4, with SPEC defaults."""

    # SPEC §3.3 saturation_flag by profile
    saturation_peak_use: float = 80.0  # use-brain: peak > this and todos_closed = 0
    saturation_peak_build: float = 85.0  # build-brain: peak > this and kernel_files_touched = 0
    # SPEC §3.3 rolling ratio n_use / (n_build + 0.5 n_explore)
    ratio_window: int = 7  # size of the window
    ratio_window_unit: str = "days"  # "days" (calendar, default) or "sessions"
    ratio_explore_weight: float = 0.5
    ratio_healthy: float = 1.0  # >= healthy
    ratio_watch: float = 0.5  # >= watch, below: narcissistic loop
    # SPEC §3.3 coach auto-trigger at boot
    coach_ratio: float = 0.40  # ratio <= this
    coach_health: float = 0.80  # health < this over the last N sessions
    coach_last_n: int = 3
    coach_health_mode: str = "each"  # "each" of the last N, or their "mean"
    # SPEC §3.3 conserve mode
    conserve_peak: float = 70.0  # peak > this and health < conserve_health: inefficient session
    conserve_health: float = 1.0
    conserve_close: float = 60.0  # context_at_close > this: conserve next session
    # SPEC §3.3 cold-start KPI
    cold_start_window: int = 7
    cold_start_stable: float = 0.80
    cold_start_watch: float = 0.60
    # SPEC §2.5 agent cost: "always loaded" share of sessions, "little use" share of loads
    always_loaded_share: float = 0.80
    little_use_share: float = 0.10
    # SPEC §4.4 breath alerts
    context_load_max: float = 2.0
    stale_ratio_max: float = 0.30
    exhale_rate_min: float = 0.50
    breath_depth_rising_sprints: int = 3

    def replace(self, **changes: Any) -> Thresholds:
        """Return a copy with some fields changed; unknown names raise ConfigError."""
        known = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise ConfigError(f"unknown threshold(s): {', '.join(unknown)}; known: {sorted(known)}")
        clean = {name: typed_value(f"threshold {name}", getattr(self, name), value)
                 for name, value in changes.items()}
        return dataclasses.replace(self, **clean)


@dataclass(frozen=True)
class Settings:
    """Everything a command needs to know besides its arguments."""

    thresholds: Thresholds = field(default_factory=Thresholds)
    source: Path | None = None  # the TOML file these settings came from, if any
    timezone: str | None = None  # IANA zone of dated usage views (None: the machine's)
    start_of_week: str | None = None  # "monday" (ISO, default) or "sunday"


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
    return Settings(thresholds=thresholds, source=candidate, timezone=data.get("timezone"),
                    start_of_week=data.get("start_of_week"))


def _is_flag(value: Any) -> bool:
    """True for Python and numpy booleans (numpy not imported: read commands start fast)."""
    return isinstance(value, bool) or type(value).__name__ == "bool_"


def typed_value(what: str, default: Any, value: Any) -> Any:
    """``value`` as the type of ``default`` (a number for a number, true/false for a flag).

    A value of the wrong type would only fail later, deep in a replay, with a traceback;
    here it is a ConfigError naming ``what``. Integers are accepted for float fields.
    """
    if isinstance(default, bool):
        if not _is_flag(value):
            raise ConfigError(f"{what} expects true or false, got {value!r}")
        return bool(value)
    if isinstance(default, int | float):
        if _is_flag(value) or not isinstance(value, numbers.Real):
            raise ConfigError(f"{what} expects a number, got {value!r}")
        if isinstance(default, int):
            if not float(value).is_integer():
                raise ConfigError(f"{what} expects an integer, got {value!r}")
            return int(value)
        return float(value)
    return value


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """Turn ``["key=value", ...]`` into a dict, parsing numbers and booleans."""
    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise ConfigError(f"expected key=value, got {pair!r}")
        key, raw = pair.split("=", 1)
        out[key.strip()] = _parse_scalar(raw.strip())
    return out


def _parse_scalar(raw: str) -> Any:
    low = raw.lower()
    if low in {"true", "false"}:
        return low == "true"
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            pass
    return raw
