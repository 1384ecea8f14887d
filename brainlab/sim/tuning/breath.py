"""Breath-alert tuning: the SPEC §4.4 alerts of the recorded sprints, per week, under trial thresholds.

The alerts are the broker replay's own columns (:func:`brainlab.sim.broker.replay`, one row
per sprint): ``alert_overload`` (context_load > context_load_max), ``alert_noise``
(stale_ratio > stale_ratio_max), ``alert_retention`` (exhale_rate < exhale_rate_min) and
``alert_accumulation`` (breath_depth rising over ``breath_depth_rising_sprints`` consecutive
sprints of a project). The sprints are replayed under the ``recorded`` policy by default: what
the broker actually loaded.

- a sprint *alerts* when any of the four fires;
- alerts per week = alerting sprints / ISO weeks spanned from the first dated sprint's week to
  the last one's (empty weeks included); a sprint is dated by its earliest agent start, and
  undated sprints count in the totals but in no week.
Breath alerts have no outcome label: brainlab scores them by volume only (no precision or
recall), so :func:`brainlab.sim.tuning.recommend` refuses a breath sweep.

A replay is a pure function of its sprints, thresholds and policy: :func:`sprint_alerts`
keeps each one it ran for a SprintSet (as long as that SprintSet lives), so the notebook's
panel, sweep, baseline and :func:`tune` given the same ``sprints`` replay each threshold set
once (notebook 04 replayed the defaults five times and loaded the sprints twice).
"""

from __future__ import annotations

import itertools
import math
import weakref
from collections.abc import Iterable

import numpy as np
import pandas as pd

from brainlab.common.errors import ConfigError, SimulationError
from brainlab.sim import broker
from brainlab.sim.sprintset import SprintSet
from brainlab.spec.thresholds import Thresholds

BREATH_ALERTS = ("alert_overload", "alert_noise", "alert_retention", "alert_accumulation")
BREATH_FIELDS = ("context_load_max", "stale_ratio_max", "exhale_rate_min",
                 "breath_depth_rising_sprints")
BREATH_METRIC_COLUMNS = ["weeks", "sprints", "alerts", "alerts_per_week",
                         *(f"{a}_per_week" for a in BREATH_ALERTS)]
DEFAULT_POLICY = "recorded"


def load(db) -> SprintSet | None:
    """The store's sprints for replay, or None when it holds none."""
    try:
        return broker.load_sprints(db, scoped=False)  # what the broker recorded, all
    except SimulationError:
        return None


def _sprints(source) -> SprintSet:
    if isinstance(source, SprintSet):
        return source
    return broker.load_sprints(source, scoped=False)


def _sprint_starts(ss: SprintSet) -> pd.Series:
    """Earliest agent start per sprint index (naive UTC timestamps; NaT when undated)."""
    started = pd.to_datetime(ss.rows["started_at"], errors="coerce", utc=True)
    started = started.dt.tz_convert("UTC").dt.tz_localize(None)
    return started.groupby(ss.row_sprint).min()


# id(SprintSet) -> {(thresholds, policy): sprint_alerts frame}; an entry goes with its SprintSet
_REPLAYS: dict[int, dict[tuple[Thresholds, str], pd.DataFrame]] = {}
MAX_REPLAYS = 64  # threshold sets kept per SprintSet (a tune grid holds ~20)


def _replays_of(ss: SprintSet) -> dict[tuple[Thresholds, str], pd.DataFrame]:
    key = id(ss)
    if key not in _REPLAYS:
        _REPLAYS[key] = {}
        weakref.finalize(ss, _REPLAYS.pop, key, None)
    return _REPLAYS[key]


def sprint_alerts(sprints, thresholds: Thresholds | None = None,
                  policy: str = DEFAULT_POLICY) -> pd.DataFrame:
    """One row per sprint: breath metrics, the four SPEC §4.4 alerts, ``is_alert``, its week.

    Replayed once per SprintSet, thresholds and policy (see the module's docstring); each
    call returns its own copy.
    """
    ss = _sprints(sprints)
    thresholds = thresholds or Thresholds()
    kept = _replays_of(ss)
    if (thresholds, policy) not in kept:
        if len(kept) >= MAX_REPLAYS:
            kept.pop(next(iter(kept)))
        kept[(thresholds, policy)] = _replay_alerts(ss, thresholds, policy)
    return kept[(thresholds, policy)].copy()


def _replay_alerts(ss: SprintSet, thresholds: Thresholds, policy: str) -> pd.DataFrame:
    frame = broker.replay(ss, [policy], thresholds=thresholds).sprints.copy()
    # one policy: the replay's sprint rows are in sprint index order 0 .. n-1
    frame["started_at"] = pd.Series(range(len(frame))).map(_sprint_starts(ss)).to_numpy()
    week = frame["started_at"].dt.to_period("W-SUN").dt.start_time
    frame["week_start"] = week.dt.date
    frame["iso_week"] = frame["started_at"].dt.strftime("%G-W%V")
    frame["is_alert"] = frame[list(BREATH_ALERTS)].any(axis=1)
    return frame


def _weeks(frame: pd.DataFrame) -> int:
    starts = pd.to_datetime(frame["week_start"]).dropna()
    return int((starts.max() - starts.min()).days // 7 + 1) if len(starts) else 0


def score(frame: pd.DataFrame) -> dict:
    """Alerts per week overall and by kind of a :func:`sprint_alerts` frame (see module doc)."""
    weeks = _weeks(frame)
    alerts = int(frame["is_alert"].sum())
    out = {"weeks": weeks, "sprints": len(frame), "alerts": alerts,
           "alerts_per_week": alerts / weeks if weeks else math.nan}
    for name in BREATH_ALERTS:
        out[f"{name}_per_week"] = int(frame[name].sum()) / weeks if weeks else math.nan
    return out


def evaluate(sprints, thresholds: Thresholds | None = None,
             policy: str = DEFAULT_POLICY) -> dict:
    """Alert volume of one threshold set: weeks, sprints, alerts, per week overall and by kind."""
    return score(sprint_alerts(sprints, thresholds, policy))


def weekly_alerts(sprints, thresholds: Thresholds | None = None,
                  policy: str = DEFAULT_POLICY) -> pd.DataFrame:
    """Per ISO week: sprints, alerting sprints, and sprints per alert kind."""
    frame = sprint_alerts(sprints, thresholds, policy).dropna(subset=["started_at"])
    agg = {name: (name, "sum") for name in BREATH_ALERTS}
    weekly = frame.groupby(["week_start", "iso_week"], as_index=False).agg(
        sprints=("sprint_id", "count"), alerts=("is_alert", "sum"), **agg)
    return weekly.sort_values("week_start").reset_index(drop=True)


def sweep(sprints, grid: dict[str, Iterable], base: Thresholds | None = None,
          policy: str = DEFAULT_POLICY) -> pd.DataFrame:
    """Alert volume for every combination of a ``{breath threshold: [values]}`` grid."""
    base = base or Thresholds()
    inert = [k for k in grid if k not in BREATH_FIELDS]
    if inert:
        raise ConfigError(f"{inert} are not SPEC §4.4 breath thresholds; sweep only "
                          f"{list(BREATH_FIELDS)}")
    values = [list(v) for v in grid.values()]
    if any(not v for v in values):
        raise ConfigError("every grid entry needs at least one value")
    ss = _sprints(sprints)
    rows, cache = [], {}
    for combo in itertools.product(*values) if grid else [()]:
        point = dict(zip(grid, combo, strict=True))
        thresholds = base.replace(**point)
        if thresholds not in cache:
            cache[thresholds] = evaluate(ss, thresholds, policy)
        rows.append({**point, **cache[thresholds]})
    return pd.DataFrame(rows, columns=[*grid.keys(), *BREATH_METRIC_COLUMNS])


LABEL_DEFINITION = (
    "bad = a file the sprint released at expire (SPEC §4.3 libérer, the recorded release "
    "map) is referenced again (read, searched or edited, SPEC §4.4) in the project's next "
    "sprint: released too early, the next sprint paid for it on demand (a miss, SPEC §4.5). "
    "Unlabelled: a sprint without a recorded release map, or the last sprint of its project")


def rereleased_labels(ss: SprintSet) -> np.ndarray:
    """Per sprint index: 1.0 bad, 0.0 good, NaN unlabelled (see LABEL_DEFINITION)."""
    n = int(ss.row_sprint.max()) + 1 if ss.n_rows else 0
    starts = _sprint_starts(ss).reindex(range(n))
    first = ss.rows.groupby("sprint_idx").agg(project=("project", "first"),
                                              expired=("has_recorded_expire", "any"))
    first = first.reindex(range(n))
    order = sorted(range(n), key=lambda s: (pd.isna(starts[s]), starts[s] if not pd.isna(
        starts[s]) else pd.Timestamp(0), s))
    next_of = np.full(n, -1)
    last: dict[str, int] = {}
    for s in reversed(order):
        project = first["project"].iloc[s]
        next_of[s] = last.get(project, -1)
        last[project] = s
    n_files = max(ss.n_files, 1)
    referenced = np.unique(ss.row_sprint[ss.ref_row].astype(np.int64) * n_files + ss.ref_file)
    nxt = next_of[ss.rel_sprint]
    keys = nxt.astype(np.int64) * n_files + ss.rel_file
    again = (nxt >= 0) & np.isin(keys, referenced)
    bad = np.bincount(ss.rel_sprint[again], minlength=n) > 0
    labelled = first["expired"].fillna(False).to_numpy().astype(bool) & (next_of >= 0)
    return np.where(labelled, bad.astype(float), np.nan)


def tune(db, thresholds: Thresholds | None = None, budget: float = 3.0,
         policy: str = DEFAULT_POLICY, grid: dict | None = None,
         confirm_share: float | None = None, seed: int = 0,
         sprints: SprintSet | None = None) -> dict:
    """Judge every one-threshold change of the SPEC §4.4 grid on held-out weeks (``tune breath``).

    Alerts as :func:`sprint_alerts`; the label is what followed the sprint
    (:func:`rereleased_labels`); the decision is :func:`brainlab.sim.tuning.judge.judge_alerts`.
    ``sprints``: the store's sprints already loaded (:func:`load`), so a caller that holds
    them (notebook 04) neither loads nor replays them again; ``db`` is then not read.
    """
    import dataclasses

    from brainlab.sim.tuning import engine, judge
    from brainlab.sim.tuning.grids import BREATH_GRID
    from brainlab.sim.tuning.sessions import week_index

    current = thresholds or Thresholds()
    values = dataclasses.asdict(current)
    grid = dict(BREATH_GRID if grid is None else grid)
    inert = [k for k in grid if k not in BREATH_FIELDS]
    if inert:
        raise ConfigError(f"{inert} are not SPEC §4.4 breath thresholds")
    grid = {k: [type(values[k])(v) for v in vs] for k, vs in grid.items()}
    ss = sprints if sprints is not None else (
        db if isinstance(db, SprintSet) else load(db))
    label = {"definition": LABEL_DEFINITION, "spec": "§4.3, §4.4, §4.5", "sprints": 0,
             "labelled": 0, "bad": 0, "unlabelled": 0,
             "alert": "a sprint raising any SPEC §4.4 alert (overload, noise, retention, "
                      f"accumulation), replayed under the {policy!r} policy"}
    if ss is None or not ss.n_rows:
        return {"target": "breath", "unit": "sprints", "table": "thresholds", "label": label,
                "split": {"weeks": 0}, "base_rate": None,
                "defaults": {"values": {k: values[k] for k in grid}}, "candidates": [],
                "recommended": None, "no_effect": [], "notes": [],
                "budget": {"alerts_per_week": budget},
                "reason": "keep the defaults: this store holds no sprint (SPEC §4.5); "
                          "`brainlab ingest brain PATH` adds recorded sprints, `brainlab "
                          "ingest claude` rebuilds them from transcripts"}
    is_bad = rereleased_labels(ss)
    base = sprint_alerts(ss, current, policy)
    weeks, week_of = week_index(base["week_start"], base["iso_week"])
    cache: dict[Thresholds, np.ndarray] = {}

    def alert_for(changes: dict) -> np.ndarray:
        trial = current.replace(**changes)
        if trial not in cache:
            cache[trial] = sprint_alerts(ss, trial, policy)["is_alert"].to_numpy(dtype=bool)
        return cache[trial]

    labelled = int((~np.isnan(is_bad)).sum())
    label.update(sprints=len(is_bad), labelled=labelled, bad=int(np.nansum(is_bad)),
                 unlabelled=len(is_bad) - labelled)
    return judge.judge_alerts(
        target="breath", unit="sprints", label=label, weeks=weeks, week_of=week_of,
        is_bad=is_bad, alert_for=alert_for, grid=grid, current=values, budget=budget,
        table="thresholds", seed=seed,
        confirm_share=engine.CONFIRM_SHARE if confirm_share is None else confirm_share)
