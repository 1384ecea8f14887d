"""The SPEC grids ``brainlab tune`` tries: each threshold alone over a range around its SPEC value.

One threshold moves at a time (the others stay at the current values), so a candidate is
one ``name=value`` change a person can read, and a threshold that changes no alert over its
range is reported as "no effect in this range" rather than given a value. The ranges cover
the SPEC default with a step a practitioner would set by hand; the grid step is the
precision a recommendation can claim.
"""

from __future__ import annotations


def _steps(low: float, high: float, step: float) -> list[float]:
    count = int(round((high - low) / step))
    return [round(low + i * step, 6) for i in range(count + 1)]


# SPEC §3.3 signal thresholds (and §3.2's saturation cut-offs): what session alerts depend on.
SESSION_GRID: dict[str, list] = {
    "saturation_peak_use": _steps(60, 95, 5),  # SPEC 80
    "saturation_peak_build": _steps(65, 95, 5),  # SPEC 85
    "ratio_window": [3, 5, 7, 10, 14],  # SPEC 7 (days)
    "ratio_window_unit": ["days", "sessions"],
    "ratio_explore_weight": [0.25, 0.5, 0.75, 1.0],  # SPEC 0.5
    "ratio_healthy": _steps(0.8, 1.4, 0.1),  # SPEC 1.0
    "ratio_watch": _steps(0.3, 0.7, 0.05),  # SPEC 0.5
    "coach_ratio": _steps(0.2, 0.6, 0.05),  # SPEC 0.40
    "coach_health": _steps(0.5, 1.2, 0.1),  # SPEC 0.80
    "coach_last_n": [1, 2, 3, 4, 5],  # SPEC 3
    "coach_health_mode": ["each", "mean"],
    "conserve_peak": _steps(50, 90, 5),  # SPEC 70
    "conserve_health": _steps(0.5, 1.5, 0.25),  # SPEC 1.0
    "conserve_close": _steps(30, 80, 5),  # SPEC 60
}

# SPEC §4.4 breath alert thresholds.
BREATH_GRID: dict[str, list] = {
    "context_load_max": _steps(1.0, 3.0, 0.25),  # SPEC 2.0
    "stale_ratio_max": _steps(0.1, 0.6, 0.05),  # SPEC 0.30
    "exhale_rate_min": _steps(0.2, 0.8, 0.1),  # SPEC 0.50
    "breath_depth_rising_sprints": [2, 3, 4, 5, 6],  # SPEC 3
}

# SPEC §6.5 limits and admission rules (and §6.3's escalation of a stop with no new fact).
TICKET_GRID: dict[str, list] = {
    "max_relance_same_stop": [1, 2, 3, 4, 5],  # SPEC 3
    "max_refusals": [0, 1, 2, 3],  # SPEC 1
    "max_fiche_reasks": [0, 1, 2],  # SPEC 1
    "max_question_rounds": [2, 3, 4, 5, 6],  # SPEC 4
    "max_reviews": [2, 3, 4, 5],  # SPEC 3
    "max_regulator_stops": [1, 2, 3, 4, 5],  # SPEC 3
    "escalate_without_new_fact": [True, False],
    "refuse_hors_titre": [True, False],
    "refuse_developpeur_avant_testwriter": [True, False],
    "refuse_critere_sans_depuis_testwriter": [True, False],
    "refuse_fait_faux": [True, False],
    "refuse_repetition_sans_fait_nouveau": [True, False],
}


def grid_step(values: list) -> float | None:
    """The smallest gap between two numeric values of a grid entry (None for words)."""
    numbers = sorted(v for v in values if isinstance(v, int | float) and not isinstance(v, bool))
    gaps = [b - a for a, b in zip(numbers, numbers[1:], strict=False)]
    return min(gaps) if gaps else None


def points(grid: dict[str, list], current: dict) -> list[tuple[str, object]]:
    """Every one-threshold change of ``grid`` away from ``current`` (name, value), grid order."""
    return [(name, value) for name, values in grid.items() for value in values
            if value != current[name]]
