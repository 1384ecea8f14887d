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
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable

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
        return broker.load_sprints(db)
    except SimulationError:
        return None


def _sprints(source) -> SprintSet:
    if isinstance(source, SprintSet):
        return source
    return broker.load_sprints(source)


def _sprint_starts(ss: SprintSet) -> pd.Series:
    """Earliest agent start per sprint index (naive UTC timestamps; NaT when undated)."""
    started = pd.to_datetime(ss.rows["started_at"], errors="coerce", utc=True)
    started = started.dt.tz_convert("UTC").dt.tz_localize(None)
    return started.groupby(ss.row_sprint).min()


def sprint_alerts(sprints, thresholds: Thresholds | None = None,
                  policy: str = DEFAULT_POLICY) -> pd.DataFrame:
    """One row per sprint: breath metrics, the four SPEC §4.4 alerts, ``is_alert``, its week."""
    ss = _sprints(sprints)
    frame = broker.replay(ss, [policy], thresholds=thresholds or Thresholds()).sprints.copy()
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
