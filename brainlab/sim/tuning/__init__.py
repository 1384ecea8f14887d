"""Tuning: score alerts against outcome labels, sweep a grid, recommend (SPEC §3.3, §4.4, §6.5).

One package, its scoring at the bottom (:mod:`~brainlab.sim.tuning.scoring`), one module per
kind above it: session thresholds against ``session_outcomes``
(:mod:`~brainlab.sim.tuning.sessions`, re-exported here: ``tuning.evaluate``, ...), regulator
limits against ``ticket_outcomes`` (:mod:`~brainlab.sim.tuning.tickets`) and breath alerts
per week (:mod:`~brainlab.sim.tuning.breath`). :func:`sweep` reaches all three.

Judging a change (``brainlab tune``, notebook 04): each module's ``tune`` tries the SPEC grid
(:mod:`~brainlab.sim.tuning.grids`) and decides on held-out weeks through the engine
(:mod:`~brainlab.sim.tuning.engine`: splits, intervals), its alert view
(:mod:`~brainlab.sim.tuning.judge`, sessions and breath) or its frontier view
(:mod:`~brainlab.sim.tuning.frontier`, tickets); :mod:`~brainlab.sim.tuning.apply` writes a
recommendation into the settings file. docs/tuning.md states the method.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from brainlab.common.errors import ConfigError
from brainlab.sim.tuning import sessions
from brainlab.sim.tuning.scoring import DB, METRIC_COLUMNS, TICKET_METRIC_COLUMNS, recommend, score
from brainlab.sim.tuning.sessions import (
    DEFAULT_ALERTS,
    SESSION_SIGNALS,
    SIGNAL_FIELDS,
    breath_alert_flags,
    default_grid,
    evaluate,
    label_alerts,
    outcomes,
    weekly_alerts,
)

__all__ = ["DB", "DEFAULT_ALERTS", "METRIC_COLUMNS", "SESSION_SIGNALS", "SIGNAL_FIELDS",
           "TICKET_METRIC_COLUMNS", "breath_alert_flags", "default_grid", "evaluate",
           "label_alerts", "outcomes", "recommend", "score", "sweep", "weekly_alerts"]


def sweep(db: DB, grid: dict[str, Iterable], base=None,
          alert_on: Sequence[str] = DEFAULT_ALERTS, formula: str = "v2",
          bad_health: float = sessions.BAD_HEALTH, *, kind: str = "sessions", **options) -> pd.DataFrame:
    """Score every combination of ``grid`` over ``base``; ``kind`` picks what is scored.

    - ``"sessions"`` (default): SPEC §3.3 session signals against ``session_outcomes``
      (:func:`brainlab.sim.tuning.sessions.sweep`).
    - ``"tickets"``: SPEC §6.5 regulator limits (grid keys are RegulatorRules fields, ``base`` a
      RegulatorRules) against ``ticket_outcomes``; ``options``: draws, seed, journals. See
      :mod:`brainlab.sim.tuning.tickets` (bad_tickets replaces bad_sessions).
    - ``"breath"``: SPEC §4.4 breath thresholds, alert volume per week only (no labels);
      ``db`` may be a SprintSet; ``options``: policy. See :mod:`brainlab.sim.tuning.breath`.
    """
    if kind == "tickets":
        from brainlab.sim.tuning import tickets  # the regulator replay: loaded when asked

        return tickets.sweep(db, grid, base, **options)
    if kind == "breath":
        from brainlab.sim.tuning import breath  # the broker replay: loaded when asked

        return breath.sweep(db, grid, base, **options)
    if kind != "sessions":
        raise ConfigError(f"kind must be sessions, tickets or breath; got {kind!r}")
    return sessions.sweep(db, grid, base, alert_on, formula, bad_health, **options)
