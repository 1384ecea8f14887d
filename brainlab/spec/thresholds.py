"""SPEC §3.3 metabolism thresholds and §4.4 breath alerts: :class:`Thresholds`, SPEC defaults.

A user's ``brainlab.toml`` ``[thresholds]`` table and ``--threshold key=value`` options
override fields by name (:mod:`brainlab.settings` loads the file; the validator is
:func:`brainlab.spec.values.replace_fields`).

The SQL models never repeat a default: a macro parameter's default is written
``{{ thresholds.<field> }}`` in its model file and the store fills in this class's value
(:mod:`brainlab.store.spec_sql`); :data:`SIGNAL_PARAMETERS` names the Thresholds field each
parameter of the signal macros takes, for the Python callers that pass a whole set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from brainlab.spec.values import replace_fields

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
        """Return a copy with some fields changed; every value checked (ConfigError naming it).

        Unknown names, wrong types, non-finite numbers and values outside
        :data:`THRESHOLD_RANGES` / :data:`THRESHOLD_CHOICES` are refused.
        """
        return replace_fields(self, "threshold", changes, ranges=THRESHOLD_RANGES,
                              choices=THRESHOLD_CHOICES)

    def signal_arguments(self) -> tuple[str, list]:
        """``name := ?, ...`` of :data:`SIGNAL_PARAMETERS` and these thresholds' values.

        The named arguments session_signals_for / weekly_health_for take from a threshold set
        (formula and basis are the caller's).
        """
        return (", ".join(f"{name} := ?" for name, _ in SIGNAL_PARAMETERS),
                [getattr(self, field) for _, field in SIGNAL_PARAMETERS])


# SPEC §3.3: the parameters of the SQL macros session_signals_for and weekly_health_for (in
# their order) and the Thresholds field each one takes.
SIGNAL_PARAMETERS: tuple[tuple[str, str], ...] = (
    ("ratio_window", "ratio_window"), ("ratio_unit", "ratio_window_unit"),
    ("explore_weight", "ratio_explore_weight"), ("ratio_healthy", "ratio_healthy"),
    ("ratio_watch", "ratio_watch"), ("coach_ratio", "coach_ratio"),
    ("coach_health", "coach_health"), ("coach_last_n", "coach_last_n"),
    ("coach_health_mode", "coach_health_mode"), ("conserve_peak", "conserve_peak"),
    ("conserve_health", "conserve_health"), ("conserve_close", "conserve_close"),
    ("saturation_peak_use", "saturation_peak_use"),
    ("saturation_peak_build", "saturation_peak_build"))


# Each threshold's accepted range (low, high, why), inclusive; a value outside it, ``nan``,
# ``inf`` or an integer no BIGINT holds is one ConfigError naming the file and the key
# (issue 47 item 6). docs/settings.md shows this table (written by brainlab.docgen).
_PERCENT = (0.0, 100.0, "a share of the context window, in percent")
_SHARE = (0.0, 1.0, "a share of sessions or loads, 0 to 1")
_RATIO = (0.0, 1000.0, "a ratio of session counts: 0 or more, 1000 is far past any brain")
_DAYS = (1, 3660, "days or sessions in a window: at least 1, at most ten years of days")
_COUNT = (1, 1000, "a number of sessions or sprints: at least 1")
THRESHOLD_RANGES: dict[str, tuple[float, float, str]] = {
    "saturation_peak_use": _PERCENT, "saturation_peak_build": _PERCENT,
    "ratio_window": _DAYS,
    "ratio_explore_weight": (0.0, 10.0, "how many build sessions one explore session counts"
                                        " for (SPEC §3.3: 0.5)"),
    "ratio_healthy": _RATIO, "ratio_watch": _RATIO, "coach_ratio": _RATIO,
    "coach_health": (0.0, 1e6, "a health score: 0 or more, unbounded by SPEC §3.2"),
    "coach_last_n": _COUNT,
    "conserve_peak": _PERCENT,
    "conserve_health": (0.0, 1e6, "a health score: 0 or more, unbounded by SPEC §3.2"),
    "conserve_close": _PERCENT,
    "cold_start_window": _COUNT, "cold_start_stable": _SHARE, "cold_start_watch": _SHARE,
    "always_loaded_share": _SHARE, "little_use_share": _SHARE,
    "context_load_max": (0.0, 1e6, "loaded over referenced files: 0 or more"),
    "stale_ratio_max": _SHARE, "exhale_rate_min": _SHARE,
    "breath_depth_rising_sprints": _COUNT,
}
THRESHOLD_CHOICES: dict[str, tuple[str, ...]] = {
    "ratio_window_unit": ("days", "sessions"),
    "coach_health_mode": ("each", "mean"),
}
