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
        """Return a copy with some fields changed; unknown names raise ConfigError."""
        return replace_fields(self, "threshold", changes)

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
