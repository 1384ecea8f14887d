"""Session-threshold tuning: score the SPEC §3.3 alerts against outcome labels, sweep a grid.

Alerts come from :func:`brainlab.metrics.signals` (the SQL macro ``session_signals_for``) under
a trial :class:`~brainlab.spec.thresholds.Thresholds` set; labels come from the ``session_outcomes`` view
(brainlab/store/models/marts/session_outcomes.sql); the tuning label is its column
is_next_unhealthy: the next scored session's health is below :data:`BAD_HEALTH` (:data:`LABEL_DEFINITION`).
Python only joins the two and counts. :func:`tune` judges the SPEC grid on held-out weeks
(``brainlab tune sessions``, :mod:`brainlab.sim.tuning.judge`).

Definitions (documented in docs/notebooks.md):

- an *alert* is a session on which at least one of ``alert_on`` signals is true;
- *alerts per week* = alerts / weeks spanned, where weeks spanned counts every ISO week from
  the first session's to the last session's, empty weeks included;
- *precision* = alerted bad sessions / alerted labelled sessions (NaN when nothing is alerted);
- *recall* = alerted bad sessions / bad sessions (NaN when no session is bad).
Unlabelled sessions (``is_bad`` NULL) count as alerts but not in precision or recall.

The counting (:func:`brainlab.sim.tuning.scoring.score`) is shared with the regulator limits
(:mod:`brainlab.sim.tuning.tickets`); :func:`brainlab.sim.tuning.sweep` reaches all three kinds.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import Iterable, Sequence
from contextlib import contextmanager

import numpy as np
import pandas as pd

from brainlab import metrics
from brainlab.common.errors import ConfigError
from brainlab.sim.tuning.scoring import DB, METRIC_COLUMNS, score
from brainlab.spec.thresholds import Thresholds
from brainlab.store import query
from brainlab.store.connection import held

# the health cut of the outcome label: the SPEC §3.3 coach health default, fixed whatever
# thresholds are tried (the label is what followed a session, not what an alert said)
BAD_HEALTH: float = Thresholds().coach_health

# SPEC §3.3 signals computed per session by session_signals_for; each is one alert kind.
SESSION_SIGNALS = ("coach_triggered", "is_inefficient", "recommend_conserve_next",
                   "is_narcissistic", "saturation_flag")
# The default alert set: the boot and conserve signals. saturation_flag is left out because
# it is half of the "bad" label (under the SPEC defaults), so it would score itself.
DEFAULT_ALERTS = ("coach_triggered", "is_inefficient", "recommend_conserve_next",
                  "is_narcissistic")
# Thresholds fields that change session_signals_for's output (SPEC §3.3, §3.2).
SIGNAL_FIELDS = frozenset({
    "saturation_peak_use", "saturation_peak_build", "ratio_window", "ratio_window_unit",
    "ratio_explore_weight", "ratio_healthy", "ratio_watch", "coach_ratio", "coach_health",
    "coach_last_n", "coach_health_mode", "conserve_peak", "conserve_health", "conserve_close",
})
# What each signal of session_signals_for reads (brainlab/store/models/marts/
# session_signals_for.sql): a threshold outside the chosen signals' inputs cannot change an
# alert, so tune() reports it as "no effect" without running the query (ratio_healthy only
# sets ratio_band, which no signal reads).
SIGNAL_INPUTS: dict[str, frozenset[str]] = {
    "coach_triggered": frozenset({"ratio_window", "ratio_window_unit", "ratio_explore_weight",
                                  "coach_ratio", "coach_health", "coach_last_n",
                                  "coach_health_mode"}),
    "is_inefficient": frozenset({"conserve_peak", "conserve_health"}),
    "recommend_conserve_next": frozenset({"conserve_close"}),
    "is_narcissistic": frozenset({"ratio_window", "ratio_window_unit", "ratio_explore_weight",
                                  "ratio_watch"}),
    "saturation_flag": frozenset({"saturation_peak_use", "saturation_peak_build"}),
}


def outcomes(db: DB, bad_health: float = BAD_HEALTH) -> pd.DataFrame:
    """Return every session's outcome label (view ``session_outcomes``, brainlab's own labels)."""
    return query(db, "SELECT * FROM session_outcomes_for(bad_health := ?) "
                     "ORDER BY started_at, sess_id", [bad_health])


def _check_alerts(alert_on: Sequence[str]) -> tuple[str, ...]:
    names = tuple(alert_on)
    unknown = sorted(set(names) - set(SESSION_SIGNALS))
    if not names or unknown:
        raise ConfigError(f"alert_on must name signals among {SESSION_SIGNALS}; got {names}")
    return names


def label_alerts(signals: pd.DataFrame, labels: pd.DataFrame,
                 alert_on: Sequence[str] = DEFAULT_ALERTS) -> pd.DataFrame:
    """Join per-session signals with labels: one row per session, ``is_alert`` and ``is_bad``.

    ``is_bad`` is the tuning label (LABEL_DEFINITION): the next scored session is unhealthy,
    what followed the session. A saturated session (SPEC §3.3) is seen by its own
    saturation_flag; counting it bad too would make a label the session's own figures
    decide, which the alerts read as well.
    """
    names = _check_alerts(alert_on)
    frame = signals[["sess_id", *names]].merge(
        labels[["sess_id", "started_at", "week_start", "iso_week", "is_next_unhealthy"]],
        on="sess_id", how="inner").rename(columns={"is_next_unhealthy": "is_bad"})
    frame["is_alert"] = frame[list(names)].fillna(False).astype(bool).any(axis=1)
    return frame


def evaluate(db: DB, thresholds: Thresholds | None = None,
             alert_on: Sequence[str] = DEFAULT_ALERTS, formula: str = "v2",
             labels: pd.DataFrame | None = None, signals: pd.DataFrame | None = None) -> dict:
    """Score one threshold set: alerts per week, precision, recall against the outcome labels.

    ``signals``: the set's ``metrics.signals`` frame when the caller already has it (a widget
    drawing the weekly chart too), so the SQL runs once per slider move.
    """
    labels = outcomes(db) if labels is None else labels
    if signals is None:
        signals = metrics.signals(db, thresholds or Thresholds(), formula)
    return score(label_alerts(signals, labels, alert_on))


def weekly_alerts(db: DB, thresholds: Thresholds | None = None,
                  alert_on: Sequence[str] = DEFAULT_ALERTS, formula: str = "v2",
                  labels: pd.DataFrame | None = None,
                  signals: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per ISO week: sessions, alerts by signal, any-alert count, bad sessions, true positives.

    ``signals`` as for :func:`evaluate`.
    """
    names = _check_alerts(alert_on)
    labels = outcomes(db) if labels is None else labels
    if signals is None:
        signals = metrics.signals(db, thresholds or Thresholds(), formula)
    frame = label_alerts(signals, labels, names)
    frame["is_bad_flag"] = frame["is_bad"].fillna(False).astype(bool)
    frame["is_hit"] = frame["is_alert"] & frame["is_bad_flag"]
    agg = {name: (name, lambda c: int(c.fillna(False).astype(bool).sum())) for name in names}
    weekly = frame.groupby(["week_start", "iso_week"], as_index=False).agg(
        sessions=("sess_id", "count"), alerts=("is_alert", "sum"),
        bad_sessions=("is_bad_flag", "sum"), true_positives=("is_hit", "sum"), **agg)
    return weekly.sort_values("week_start").reset_index(drop=True)


def _grid_points(grid: dict[str, Iterable]) -> list[dict]:
    if not grid:
        return [{}]
    keys = list(grid)
    known = {f.name for f in dataclasses.fields(Thresholds)}
    unknown = [k for k in keys if k not in known]
    if unknown:
        raise ConfigError(f"unknown threshold(s) in grid: {unknown}; known: {sorted(known)}")
    inert = [k for k in keys if k not in SIGNAL_FIELDS]
    if inert:
        raise ConfigError(f"{inert} do not change the session signals (SPEC §3.3); sweep only "
                          f"{sorted(SIGNAL_FIELDS)}")
    values = [list(grid[k]) for k in keys]
    if any(not v for v in values):
        raise ConfigError("every grid entry needs at least one value")
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*values)]


def sweep(db: DB, grid: dict[str, Iterable], base: Thresholds | None = None,
          alert_on: Sequence[str] = DEFAULT_ALERTS, formula: str = "v2",
          bad_health: float = BAD_HEALTH, **options) -> pd.DataFrame:
    """Score every combination of ``grid`` (threshold name -> values) over ``base``.

    SPEC §3.3 session signals against ``session_outcomes``. One row per combination: the
    grid values, then weeks, alerts, alerts_per_week, labelled_alerts, true/false
    positives, false negatives, bad_sessions, precision, recall. Signals are computed once
    per distinct threshold set (in SQL, via metrics.signals).
    """
    if options:
        raise ConfigError(f"unexpected options for session tuning: {sorted(options)}")
    base = base or Thresholds()
    names = _check_alerts(alert_on)
    points = _grid_points(grid)
    cache: dict[Thresholds, dict] = {}
    rows = []
    with held(db) as store:  # one connection for every set's query, not one each
        labels = outcomes(store, bad_health)
        for point in points:
            thresholds = base.replace(**point)
            if thresholds not in cache:
                signals = metrics.signals(store, thresholds, formula)
                cache[thresholds] = score(label_alerts(signals, labels, names))
            rows.append({**point, **cache[thresholds]})
    return pd.DataFrame(rows, columns=[*grid.keys(), *METRIC_COLUMNS])


def default_grid(thresholds: Thresholds | None = None) -> dict[str, list]:
    """Return a small grid around the SPEC §3.3 defaults (what notebook 04 sweeps first)."""
    t = thresholds or Thresholds()
    return {
        "coach_ratio": [0.3, t.coach_ratio, 0.5],
        "coach_health": [t.coach_health, 1.0],
        "conserve_close": [t.conserve_close, 70.0, 80.0],
    }


def breath_alert_flags(context_load: float | None, stale_ratio: float | None,
                       exhale_rate: float | None, thresholds: Thresholds | None = None) -> dict:
    """Apply the SPEC §4.4 alert thresholds to one sprint's breath metrics (None = not measured)."""
    t = thresholds or Thresholds()
    return {
        "overload": context_load is not None and context_load > t.context_load_max,
        "noise": stale_ratio is not None and stale_ratio > t.stale_ratio_max,
        "retention": exhale_rate is not None and exhale_rate < t.exhale_rate_min,
    }


LABEL_DEFINITION = (
    "bad = the next scored session (use-, build- or explore-brain with a health score, SPEC "
    "§2.2) has health_score below {bad_health} (SPEC §3.2 v2; " f"{BAD_HEALTH:.2f}"
    " is the SPEC §3.3 coach health threshold); unlabelled when no scored session follows."
    " It is what followed the session, so it stays the same whatever thresholds are tried"
    " (view session_outcomes, column is_next_unhealthy)")


def week_index(week_starts: pd.Series, iso_weeks: pd.Series) -> tuple[list[str], np.ndarray]:
    """Every week spanned (labels, empty weeks included) and each row's index in it (-1: none)."""
    starts = pd.to_datetime(week_starts)
    if starts.dropna().empty:
        return [], np.full(len(starts), -1)
    first = starts.min()
    index = ((starts - first).dt.days // 7).fillna(-1).astype(int).to_numpy()
    n = int(index.max()) + 1
    names = dict(zip(index, iso_weeks, strict=False))
    labels = [names.get(i) or (first + pd.Timedelta(days=7 * i)).strftime("%G-W%V")
              for i in range(n)]
    return labels, index


def tune(db: DB, thresholds: Thresholds | None = None, budget: float = 3.0,
         alert_on: Sequence[str] = DEFAULT_ALERTS, grid: dict | None = None,
         formula: str = "v2", bad_health: float = BAD_HEALTH, confirm_share: float | None = None,
         seed: int = 0) -> dict:
    """Judge every one-threshold change of the SPEC grid on held-out weeks (``tune sessions``).

    The result is plain data (see :func:`brainlab.sim.tuning.judge.judge_alerts`).

    ``thresholds``: the values in force (the settings'), which candidates must beat.
    """
    from brainlab.sim.tuning import engine, judge
    from brainlab.sim.tuning.grids import SESSION_GRID

    names = _check_alerts(alert_on)
    current = thresholds or Thresholds()
    grid = dict(SESSION_GRID if grid is None else grid)
    _grid_points({k: v[:1] for k, v in grid.items()})  # the names are SPEC §3.3 fields
    values = dataclasses.asdict(current)
    grid = {k: [type(values[k])(v) for v in vs] for k, vs in grid.items()}  # 45 -> 45.0
    inputs = frozenset().union(*(SIGNAL_INPUTS[n] for n in names))
    inert = [k for k in grid if k not in inputs]  # cannot move the chosen signals
    grid = {k: (v if k in inputs else [values[k]]) for k, v in grid.items()}
    with held(db) as store, _basis_once(store, lent=not isinstance(db, str | os.PathLike)):
        labels = outcomes(store, bad_health)
        order = labels["sess_id"].to_numpy()
        cache: dict[Thresholds, np.ndarray] = {}

        def alert_for(changes: dict) -> np.ndarray:
            trial = current.replace(**changes)
            if trial not in cache:
                signals = metrics.signals(store, trial, formula,
                                          columns=("sess_id", *names)).set_index("sess_id")
                flags = signals[list(names)].fillna(False).astype(bool).any(axis=1)
                cache[trial] = flags.reindex(order, fill_value=False).to_numpy()
            return cache[trial]

        weeks, week_of = week_index(labels["week_start"], labels["iso_week"])
        is_bad = labels["is_next_unhealthy"].astype("float64").to_numpy()
        labelled = int((~np.isnan(is_bad)).sum())
        label = {"definition": LABEL_DEFINITION.format(bad_health=f"{bad_health:.2f}"),
                 "spec": "§2.2, §3.2, §3.3", "sessions": len(labels), "labelled": labelled,
                 "bad": int(np.nansum(is_bad)), "unlabelled": len(labels) - labelled,
                 "alert": f"a session on which any of {', '.join(names)} fires (SPEC §3.3)"}
        if labels.empty:
            return {"target": "sessions", "label": label, "split": {"weeks": 0},
                    "base_rate": None, "defaults": {"values": {k: values[k] for k in grid}},
                    "candidates": [], "recommended": None, "no_effect": [],
                    "reason": "keep the defaults: this store holds no session with metabolism "
                              "figures (SPEC §3.1); `brainlab ingest brain PATH` adds them",
                    "table": "thresholds", "unit": "sessions",
                    "budget": {"alerts_per_week": budget}}
        result = judge.judge_alerts(
            target="sessions", unit="sessions", label=label, weeks=weeks, week_of=week_of,
            is_bad=is_bad, alert_for=alert_for, grid=grid, current=values, budget=budget,
            table="thresholds", seed=seed,
            confirm_share=engine.CONFIRM_SHARE if confirm_share is None else confirm_share)
    if inert:
        result["notes"].append(f"{', '.join(inert)}: not read by the chosen signals "
                               f"({', '.join(names)}), so no effect whatever the value")
    return result


@contextmanager
def _basis_once(store, lent: bool):
    """Compute basis_sessions once for a sweep's many session_signals_for queries.

    A temporary macro of the same name (DuckDB looks in ``temp`` before ``main``) reads a
    temporary table of ``main.basis_sessions(basis := 'best')``, so the SQL model stays the
    one definition and each threshold set skips re-joining logs and transcripts (half of a
    query's time). Only on the sweep's own connection (``lent``: the caller's, left alone);
    another basis raises rather than read the cached rows.
    """
    if lent:
        yield
        return
    query(store, "CREATE TEMP TABLE _tune_basis AS "
                 "SELECT * FROM main.basis_sessions(basis := 'best')")
    query(store, "CREATE TEMP MACRO basis_sessions(basis := 'best') AS TABLE "
                 "SELECT * FROM temp._tune_basis WHERE CASE WHEN basis = 'best' THEN true "
                 "ELSE error('tuning caches basis best only') END")
    try:
        yield
    finally:
        query(store, "DROP MACRO TABLE temp.basis_sessions")
        query(store, "DROP TABLE temp._tune_basis")
