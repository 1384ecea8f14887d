"""The weekly report's headline: each figure of a week beside the week before, how sure it is.

One row per headline figure (``metrics.report.HEADLINE_FIGURES``): this week's value with
its n and 95% interval, the previous week's, and the change with its interval and verdict:
"within noise" when the interval holds 0, else better/worse by the metric's direction
(``spec/trend_direction.py``; up/down for a metric without a better side). Means carry
bootstrap intervals, shares of sessions (coach triggers, inefficient...) Wilson intervals
(their change Newcombe's), the session count a Poisson interval on its change; the ratio at
the last session and the lowest ratio are single values: no interval, no verdict.

The figures are the per-session rows of ``session_signals_for`` of the two weeks; their
point values are the same as ``weekly_health_for``'s (a test compares them).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from brainlab.metrics.intervals import (
    Estimate,
    bootstrap,
    bootstrap_difference,
    newcombe,
    poisson_difference,
    wilson,
)
from brainlab.metrics.report import DB, HEADLINE_FIGURES, signal_args
from brainlab.spec.thresholds import Thresholds
from brainlab.spec.trend_direction import DIRECTIONS
from brainlab.spec.weeks import Week
from brainlab.store import query

SHARES = {"coach_triggers": "coach_triggered", "inefficient": "is_inefficient",
          "conserve_next": "recommend_conserve_next", "narcissistic": "is_narcissistic",
          "saturated": "saturation_flag"}
SINGLE = ("last_ratio", "min_ratio")  # one value of the week: shown without an interval


def sessions_of(db: DB, week: Week, thresholds: Thresholds | None = None,
                basis: str = "best") -> pd.DataFrame:
    """The per-session signals of ``week`` and the week before (column ``this_week``)."""
    args, values = signal_args(thresholds or Thresholds(), basis=basis)
    previous = week.shifted(-1)
    return query(db, f"""
        SELECT sess_id, started_at, category, health_score, ratio, coach_triggered,
               is_inefficient, recommend_conserve_next, is_narcissistic, saturation_flag,
               started_at >= ? AS this_week
        FROM session_signals_for({args})
        WHERE started_at >= ? AND started_at < ?
        ORDER BY started_at, sess_id""", [week.start_at, *values, previous.start_at,
                                          week.end_at])


def _single(rows: pd.DataFrame, figure: str) -> Estimate:
    ratio = rows.dropna(subset=["ratio"])
    if ratio.empty:
        return Estimate(None, 0)
    if figure == "min_ratio":
        return Estimate(float(ratio["ratio"].min()), 1)
    return Estimate(float(ratio.sort_values("started_at")["ratio"].iloc[-1]), 1)


def _share(rows: pd.DataFrame, column: str) -> tuple[int, int]:
    flags = rows[column].fillna(False).astype(bool)
    return int(flags.sum()), len(rows)


def figure_estimates(rows: pd.DataFrame, figure: str) -> Estimate:
    """One headline figure of one week's rows, with its n and interval."""
    if figure == "sessions":
        return Estimate(float(len(rows)), len(rows))
    if figure in ("mean_health", "median_health"):
        return bootstrap(rows["health_score"].to_numpy(dtype=float),
                         "median" if figure == "median_health" else "mean")
    if figure in SINGLE:
        return _single(rows, figure)
    k, n = _share(rows, SHARES[figure])
    share = wilson(k, n)
    return Estimate(float(k), n, share.low, share.high, "Wilson")


def change_of(this: pd.DataFrame, prev: pd.DataFrame, figure: str) -> Estimate:
    """The change of one figure from the previous week's rows to this week's."""
    if figure == "sessions":
        return poisson_difference(len(this), len(prev))
    if figure in ("mean_health", "median_health"):
        return bootstrap_difference(this["health_score"].to_numpy(dtype=float),
                                    prev["health_score"].to_numpy(dtype=float),
                                    "median" if figure == "median_health" else "mean")
    if figure in SINGLE:
        a, b = _single(this, figure), _single(prev, figure)
        value = None if a.value is None or b.value is None else a.value - b.value
        return Estimate(value, 2)
    k1, n1 = _share(this, SHARES[figure])
    k2, n2 = _share(prev, SHARES[figure])
    return newcombe(k1, n1, k2, n2)  # a change of shares (the page shows counts beside)


def verdict(figure: str, change: Estimate) -> str:
    """Within noise, better, worse (or up, down); "" for a single value (no interval)."""
    if change.value is None or figure in SINGLE:
        return ""
    if not change.excludes_zero:
        return "within noise"
    better = DIRECTIONS[figure].higher_is_better
    up = change.value > 0
    if better is None:
        return "up" if up else "down"
    return "better" if up == better else "worse"


def headline(db: DB, week: Week, thresholds: Thresholds | None = None,
             basis: str = "best") -> pd.DataFrame:
    """One row per headline figure: estimates of this and the previous week, the change.

    Columns: key, figure, kind (count/mean/share/single), this_week, this_n, this_low,
    this_high, previous_week, previous_n, previous_low, previous_high, change, change_low,
    change_high, method, verdict. A share's value is its count (k of n sessions) and its
    interval is the share's.
    """
    rows = sessions_of(db, week, thresholds, basis)
    this, prev = rows[rows["this_week"]], rows[~rows["this_week"]]
    out = []
    for key, label in HEADLINE_FIGURES:
        a, b = figure_estimates(this, key), figure_estimates(prev, key)
        change = change_of(this, prev, key)
        kind = ("count" if key == "sessions" else "single" if key in SINGLE
                else "share" if key in SHARES else "mean")
        out.append((key, label, kind, a.value, a.n, a.low, a.high, b.value, b.n, b.low,
                    b.high, change.value, change.low, change.high, change.method,
                    verdict(key, change)))
    frame = pd.DataFrame(out, columns=[
        "key", "figure", "kind", "this_week", "this_n", "this_low", "this_high",
        "previous_week", "previous_n", "previous_low", "previous_high", "change",
        "change_low", "change_high", "method", "verdict"])
    return frame.replace({None: np.nan})
