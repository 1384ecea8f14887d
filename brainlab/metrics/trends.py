"""Trends that say how sure they are (issue 43): points with intervals, change points.

Also comparisons of weeks, and agents classified (new, gone, growing, shrinking, stable).

Every series is drawn from one SQL model, ``trend_observations_for`` (one row per series
and observed session, store/models/marts/trend_observations_for.sql); this module groups
those rows by week or day, puts an interval on each point (a mean: bootstrap; a share:
Wilson), scans each series for change points (:mod:`brainlab.metrics.changepoints`),
compares chosen weeks with a baseline, and classifies agents. ``until`` cuts every
computation at a moment (a week's end): a report of a past week reads nothing after it.
"""

from __future__ import annotations

import os
from datetime import date, datetime, timedelta

import numpy as np
import pandas as pd

from brainlab.metrics import changepoints
from brainlab.metrics.intervals import Estimate, bootstrap, bootstrap_difference, newcombe, wilson
from brainlab.spec.thresholds import Thresholds
from brainlab.spec.trend_direction import direction_of
from brainlab.spec.weeks import Week
from brainlab.store import query

DB = str | os.PathLike

# the series every scan covers, in display order (agent:<name> series follow agent_load_cost)
SERIES = ("health:use-brain", "health:build-brain", "health:explore-brain", "ratio",
          "share:use-brain", "share:build-brain", "share:explore-brain", "coach_triggers",
          "tokens_per_session", "cost_per_session", "agent_load_cost", "logged_gap")
PERIODS = ("week", "day")
# 7-day rolling quantities (SPEC §3.3): a day's point repeats most of the day before's, so
# their daily series would read the window's memory as steps; they are scanned weekly only
WEEKLY_ONLY = ("ratio", "coach_triggers")


def kind_of(series: str) -> str:
    """How a series' observations are read: "share" (0/1), "loads" (an agent's), "mean"."""
    if series.startswith("agent:"):
        return "loads"
    return "share" if direction_of(series).kind == "share" else "mean"


def observations(db: DB, thresholds: Thresholds | None = None, basis: str = "best",
                 first_day: str = "monday", until: datetime | None = None) -> pd.DataFrame:
    """Rows of ``trend_observations_for`` started before ``until`` (None: every row).

    The macro computes every row whatever ``until`` (its rolling ratio reads the sessions
    before each one), so the rows are fetched whole and cut here (:func:`cut`): a caller
    holding the whole history (the report, once per store) cuts it per week the same way.
    """
    from brainlab.metrics.report import signal_args

    args, values = signal_args(thresholds or Thresholds(), basis=basis)
    frame = query(db, f"SELECT series, metric, subject, started_at, day, iso_week, week_start,"
                      f" project, value FROM trend_observations_for({args}, first_day := ?)"
                      f" ORDER BY series, started_at, subject", [*values, first_day])
    frame["day"] = pd.to_datetime(frame["day"]).dt.date
    frame["week_start"] = pd.to_datetime(frame["week_start"]).dt.date
    return cut(frame, until)


def cut(obs: pd.DataFrame, until: datetime | None) -> pd.DataFrame:
    """The rows of :func:`observations`' frame started before ``until`` (None: all of them)."""
    if until is None:
        return obs
    return obs[(obs["started_at"] < pd.Timestamp(until)).to_numpy(dtype=bool)].reset_index(
        drop=True)


# --- points with n and interval ---------------------------------------------------------------

def period_labels(obs: pd.DataFrame, period: str, first_day: str = "monday",
                  until: date | None = None) -> list[tuple[str, date]]:
    """Every period (label, first day) from the first observation to the last, empty ones too."""
    if obs.empty:
        return []
    first = min(obs["day"])
    last = max(obs["day"]) if until is None else max(until - timedelta(days=1), min(obs["day"]))
    if period == "day":
        days = pd.date_range(first, last, freq="D").date
        return [(d.isoformat(), d) for d in days]
    week, end = Week.of(first, first_day), Week.of(last, first_day)
    out = []
    while week.start <= end.start:
        out.append((week.label, week.start))
        week = week.shifted(1)
    return out


def _label_column(period: str) -> str:
    return "iso_week" if period == "week" else "day_label"


def _with_labels(obs: pd.DataFrame, period: str) -> pd.DataFrame:
    if period == "day" and "day_label" not in obs:
        obs = obs.assign(day_label=[d.isoformat() for d in obs["day"]])
    return obs


def points(obs: pd.DataFrame, period: str = "week", first_day: str = "monday",
           series: list[str] | None = None) -> pd.DataFrame:
    """One row per series and period, empty periods included (n = 0, value NaN).

    Columns: series, metric, period, period_start, n, value, low, high, method (the
    interval's: bootstrap for a mean, Wilson for a share), k (a share's count, else NaN).
    """
    obs = _with_labels(obs, period)
    label = _label_column(period)
    rows = []
    grid = period_labels(obs, period, first_day)
    grouped = grouped_values(obs, label)
    for name in ordered_series(obs) if series is None else series:
        labels, values_of = grouped.get(name, ([], []))
        groups = dict(zip(labels, values_of, strict=True))
        kind = kind_of(name)
        metric = direction_of(name).metric
        for text, start in grid:
            values = groups.get(text)
            if values is None or len(values) == 0:
                rows.append((name, metric, text, start, 0, np.nan, np.nan, np.nan, "", np.nan))
                continue
            est = (wilson(int(values.sum()), len(values)) if kind == "share"
                   else bootstrap(values))
            rows.append((name, metric, text, start, est.n, est.value,
                         np.nan if est.low is None else est.low,
                         np.nan if est.high is None else est.high, est.method,
                         float(values.sum()) if kind == "share" else np.nan))
    return pd.DataFrame(rows, columns=["series", "metric", "period", "period_start", "n",
                                       "value", "low", "high", "method", "k"])


def grouped_values(obs: pd.DataFrame, label: str) -> dict[str, tuple[list, list[np.ndarray]]]:
    """Per series: its period labels with data, in order, and each one's values (numpy)."""
    frame = obs[["series", label, "value"]].sort_values(["series", label], kind="stable")
    names, labels = frame["series"].to_numpy(), frame[label].to_numpy()
    values = frame["value"].to_numpy(dtype=float)
    if len(values) == 0:
        return {}
    starts = np.flatnonzero(np.r_[True, (names[1:] != names[:-1]) | (labels[1:] != labels[:-1])])
    out: dict[str, tuple[list, list[np.ndarray]]] = {}
    for start, group in zip(starts, np.split(values, starts[1:]), strict=True):
        entry = out.setdefault(names[start], ([], []))
        entry[0].append(labels[start])
        entry[1].append(group)
    return out


def ordered_series(obs: pd.DataFrame) -> list[str]:
    """The series present in ``obs``: :data:`SERIES` order, then agents by name."""
    present = set(obs["series"].unique()) if not obs.empty else set()
    return ([s for s in SERIES if s in present]
            + sorted(s for s in present if s.startswith("agent:")))


# --- change points ----------------------------------------------------------------------------

CHANGE_COLUMNS = ["series", "metric", "period", "week", "direction", "before", "after",
                  "difference", "low", "high", "verdict"]


def changes(obs: pd.DataFrame, period: str = "week", first_day: str = "monday",
            beta: float = changepoints.BETA) -> pd.DataFrame:
    """Every confirmed change point of every series (module :mod:`changepoints`).

    An agent's series is scanned between its first and last load only (new and gone are
    :func:`agent_classes`' words, not change points). Columns: series, metric, period (the
    week or day the change starts), week (that period's week), direction (up/down),
    before, after, difference (after - before) with its 95% interval low/high, verdict
    (better, worse, or up/down for a metric without a better side: spec/trend_direction.py).
    """
    obs = _with_labels(obs, period)
    grouped = grouped_values(obs, _label_column(period))
    rows = []
    for name in ordered_series(obs):
        if period == "day" and name in WEEKLY_ONLY:
            continue
        labels, groups = grouped[name]
        kind = kind_of(name)
        if kind == "loads":
            loaded = [i for i, g in enumerate(groups) if (g > 0).any()]
            if not loaded:
                continue
            labels, groups = labels[loaded[0]:loaded[-1] + 1], groups[loaded[0]:loaded[-1] + 1]
        for change in changepoints.scan(name, labels, groups, kind, beta,
                                            memory=name in WEEKLY_ONLY):
            week = (change.period if period == "week"
                    else Week.of(date.fromisoformat(change.period), first_day).label)
            rows.append((name, direction_of(name).metric, change.period, week,
                         change.direction, change.before, change.after,
                         change.difference.value, change.difference.low,
                         change.difference.high, judge(name, change.difference)))
    return pd.DataFrame(rows, columns=CHANGE_COLUMNS)


STORED_SCALES = ("week", "day")  # what trend_change_scan holds: trends --json --daily


def store_changes(db: DB, thresholds: Thresholds) -> int:
    """Scan every series (weeks and days) and write the changes to the store; return how many.

    The store's view ``trend_changes`` (models/marts/trend_changes.sql) reads them: the
    scan is PELT in Python (ruptures), so its result is stored once per ingest rather than
    recomputed in SQL; the rows are :func:`scan`'s, the ones ``brainlab trends --json
    --daily`` prints with the same thresholds (basis best, Monday weeks, all history).
    Called after each ``brainlab ingest brain|sprints|circuits``, by ``brainlab trends
    --refresh`` and by ``brainlab demo``; the table is rewritten whole in one transaction,
    with the store state the scan read (:mod:`brainlab.store.trend_scan`: a later write
    makes it stale).
    """
    from brainlab.store import open_writer, trend_scan

    seen = trend_scan.inputs_seen(db)  # before the scan reads: a write during it is after
    found = scan(db, thresholds, periods=STORED_SCALES)
    con = open_writer(db)
    try:
        trend_scan.write(con, found[["scale", *CHANGE_COLUMNS]], seen, thresholds)
    finally:
        con.close()
    return len(found)


def judge(series: str, difference: Estimate) -> str:
    """"within noise" when the interval holds 0, else better/worse (or up/down: no side).

    "no data" when a side has no observation.
    """
    if difference.value is None:
        return "no data"
    if not difference.excludes_zero:
        return "within noise"
    up = difference.value > 0
    better = direction_of(series).higher_is_better
    if better is None:
        return "up" if up else "down"
    return "better" if up == better else "worse"


def scan(db: DB, thresholds: Thresholds | None = None, basis: str = "best",
         first_day: str = "monday", until: datetime | None = None,
         periods: tuple[str, ...] = ("week",)) -> pd.DataFrame:
    """:func:`changes` of every series, for each period of ``periods``, from the store."""
    obs = observations(db, thresholds, basis, first_day, until)
    frames = [changes(obs, p, first_day).assign(scale=p) for p in periods]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=[*CHANGE_COLUMNS, "scale"])
    return pd.concat(frames, ignore_index=True)


def since_line(found: pd.DataFrame, week: str | None = None) -> list[str]:
    """Headline phrases: "since 2026-W43: ratio down 1.48 -> 0.38 (worse)", newest first.

    ``week``: only the changes that start in that week or before it.
    """
    if found.empty:
        return []
    rows = found[found["week"] <= week] if week else found
    out = []
    for r in rows.sort_values(["week", "series"], ascending=[False, True]).itertuples():
        out.append(f"since {r.period}: {r.series} {r.direction} {_num(r.before)} -> "
                   f"{_num(r.after)} ({r.verdict})")
    return out


def change_marks(found: pd.DataFrame, series: tuple[str, ...] | None = None,
                 prefix: str | None = None, weeks: list[str] | None = None,
                 first_day: str = "monday") -> pd.DataFrame:
    """The change points a chart draws: one row per change, with its legend and tooltip text.

    ``series`` (names) or ``prefix`` (``"health:"``) choose the chart's series; ``weeks``
    keeps the changes that start in the chart's weeks. Columns: series, iso_week (the week
    the change starts), week_start (its first day), direction, mark (the legend entry:
    "change point (up)"), since (the tooltip: "since 2026-W43: ratio down 1.48 -> 0.38
    (worse)", :func:`since_line`'s words).
    """
    columns = ["series", "iso_week", "week_start", "direction", "mark", "since"]
    if found.empty:
        return pd.DataFrame(columns=columns)
    keep = pd.Series(False, index=found.index)
    if series:
        keep |= found["series"].isin(series)
    if prefix:
        keep |= found["series"].str.startswith(prefix)
    rows = found[keep]
    if weeks is not None:
        rows = rows[rows["week"].isin(weeks)]
    out = []
    for r in rows.itertuples():
        start = Week.parse(r.week, first_day).start
        out.append((r.series, r.week, start, r.direction, f"change point ({r.direction})",
                    f"since {r.period}: {r.series} {r.direction} {_num(r.before)} -> "
                    f"{_num(r.after)} ({r.verdict})"))
    return pd.DataFrame(out, columns=columns)


def _num(x: float | None) -> str:
    if x is None or pd.isna(x):
        return "-"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:,.2f}"


# --- notebook 01's weekly table and ratio chart ---------------------------------------------

WEEKLY_TABLE = ["iso_week", "sessions", "n_use", "n_build", "n_explore", "mean_health",
                "health_n", "health_low", "health_high", "min_ratio", "mean_ratio", "ratio_n",
                "ratio_low", "ratio_high", "coach_triggers", "coach_share", "coach_low",
                "coach_high", "narcissistic", "inefficient", "saturated"]


def _interval_row(values: np.ndarray, share: bool) -> tuple:
    est = wilson(int(values.sum()), len(values)) if share else bootstrap(values)
    return (est.n, np.nan if est.value is None else est.value,
            np.nan if est.low is None else est.low, np.nan if est.high is None else est.high)


def weekly_table(weekly: pd.DataFrame, obs: pd.DataFrame) -> pd.DataFrame:
    """``weekly_health``'s rows with n and a 95% interval beside each mean and share.

    Mean health (over the week's scored sessions: the ``health:*`` series together) and the
    mean rolling ratio at each session: bootstrap; the share of sessions that fired the coach:
    Wilson (``coach_triggers`` stays the count). Columns :data:`WEEKLY_TABLE`; a week
    without a scored session has n 0 and no interval.
    """
    rows = []
    health = _values_by_week(obs[obs["series"].str.startswith("health:")])
    ratio = _values_by_week(obs[obs["series"] == "ratio"])
    coach = _values_by_week(obs[obs["series"] == "coach_triggers"])
    none = np.empty(0)
    for week in weekly["iso_week"]:
        hn, _, hl, hh = _interval_row(health.get(week, none), False)
        rows.append((week, hn, hl, hh, *_interval_row(ratio.get(week, none), False),
                     *_interval_row(coach.get(week, none), True)))
    extra = pd.DataFrame(rows, columns=[
        "iso_week", "health_n", "health_low", "health_high", "ratio_n", "mean_ratio",
        "ratio_low", "ratio_high", "coach_n", "coach_share", "coach_low", "coach_high"])
    out = weekly.merge(extra, on="iso_week", how="left")
    return out[WEEKLY_TABLE]


def _values_by_week(rows: pd.DataFrame) -> dict[str, np.ndarray]:
    """Each week's values, in the rows' order (one pass instead of a filter per week)."""
    return {week: group.to_numpy(dtype=float)
            for week, group in rows.groupby("iso_week", sort=False)["value"]}


# --- comparisons -------------------------------------------------------------------------------

def week_range(text: str, first_day: str = "monday") -> list[Week]:
    """``2026-W40..2026-W42`` (or one week) as its weeks, in order."""
    if ".." in text:
        a, b = (Week.parse(part.strip(), first_day) for part in text.split("..", 1))
    else:
        a = b = Week.parse(text.strip(), first_day)
    if b.start < a.start:
        a, b = b, a
    out = [a]
    while out[-1].start < b.start:
        out.append(out[-1].shifted(1))
    return out


def compare(obs: pd.DataFrame, target: list[Week], baseline: list[Week],
            series: list[str] | None = None) -> pd.DataFrame:
    """Each series in the ``target`` weeks beside the ``baseline`` weeks, with the difference.

    Columns: series, metric, target (value), target_n, target_low/high, baseline (value),
    baseline_n, baseline_low/high, difference (target - baseline), low, high, method,
    verdict (within noise / better / worse / up / down).
    """
    t_labels = {w.label for w in target}
    b_labels = {w.label for w in baseline}
    rows = []
    chosen = obs[obs["iso_week"].isin(t_labels | b_labels)]  # one pass over the history
    in_target = chosen["iso_week"].isin(t_labels).to_numpy()
    in_baseline = chosen["iso_week"].isin(b_labels).to_numpy()
    values = chosen["value"].to_numpy(dtype=float)
    at = {name: np.asarray(i) for name, i in
          chosen.reset_index(drop=True).groupby("series", sort=False).indices.items()}
    none = np.empty(0, dtype=int)
    for name in series or ordered_series(obs):
        rows_of = at.get(name, none)
        a = values[rows_of[in_target[rows_of]]]
        b = values[rows_of[in_baseline[rows_of]]]
        if len(a) == 0 and len(b) == 0:
            continue
        if kind_of(name) == "share":
            ta, tb = wilson(int(a.sum()), len(a)), wilson(int(b.sum()), len(b))
            diff = newcombe(int(a.sum()), len(a), int(b.sum()), len(b))
        else:
            ta, tb, diff = bootstrap(a), bootstrap(b), bootstrap_difference(a, b)
        rows.append((name, direction_of(name).metric, ta.value, ta.n, ta.low, ta.high,
                     tb.value, tb.n, tb.low, tb.high, diff.value, diff.low, diff.high,
                     diff.method, judge(name, diff)))
    return pd.DataFrame(rows, columns=[
        "series", "metric", "target", "target_n", "target_low", "target_high", "baseline",
        "baseline_n", "baseline_low", "baseline_high", "difference", "low", "high", "method",
        "verdict"])


# --- agents: new, gone, growing, shrinking, stable -------------------------------------------

AGENT_RULE = (
    "An agent is new when the earlier weeks never load it and the later ones do, gone when "
    "the earlier weeks load it and the later ones never do; otherwise growing or shrinking "
    "when its share of sessions loading it changed with a 95% Newcombe interval that "
    "excludes 0 (its tokens per session move with that share: one size per agent), else "
    "stable. Earlier / later: the first and second half of the history's weeks, or the "
    "baseline and the compared weeks.")


def agent_classes(obs: pd.DataFrame, earlier: list[str] | None = None,
                  later: list[str] | None = None) -> pd.DataFrame:
    """Each agent classified by :data:`AGENT_RULE`; ``earlier``/``later``: week labels.

    Default: the history's weeks split in half (an odd week out goes to the earlier half).
    Columns: agent, class, earlier_share, later_share, difference, low, high,
    earlier_tokens, later_tokens (mean tokens per session), first_week, last_week.
    """
    agents = obs[obs["series"].str.startswith("agent:")]
    if agents.empty:
        return pd.DataFrame(columns=["agent", "class", "earlier_share", "later_share",
                                     "difference", "low", "high", "earlier_tokens",
                                     "later_tokens", "first_week", "last_week"])
    if earlier is None or later is None:
        weeks = sorted(obs["iso_week"].unique())
        half = (len(weeks) + 1) // 2
        earlier, later = weeks[:half], weeks[half:]
    rows = []
    early, late = set(earlier), set(later)
    for name, (labels, groups) in grouped_values(agents, "iso_week").items():
        a = np.concatenate([g for w, g in zip(labels, groups, strict=True) if w in early]
                           or [np.empty(0)])
        b = np.concatenate([g for w, g in zip(labels, groups, strict=True) if w in late]
                           or [np.empty(0)])
        ka, kb = int((a > 0).sum()), int((b > 0).sum())
        loaded_weeks = [w for w, g in zip(labels, groups, strict=True) if (g > 0).any()]
        diff = newcombe(kb, len(b), ka, len(a))
        if ka == 0 and kb > 0:
            kind = "new"
        elif ka > 0 and kb == 0:
            kind = "gone"
        elif ka == 0 and kb == 0:
            kind = "not loaded"
        elif diff.excludes_zero:
            kind = "growing" if diff.value > 0 else "shrinking"
        else:
            kind = "stable"
        rows.append((name.removeprefix("agent:"), kind, ka / len(a) if len(a) else np.nan,
                     kb / len(b) if len(b) else np.nan, diff.value, diff.low, diff.high,
                     a.mean() if len(a) else np.nan, b.mean() if len(b) else np.nan,
                     loaded_weeks[0] if loaded_weeks else None,
                     loaded_weeks[-1] if loaded_weeks else None))
    order = {"new": 0, "growing": 1, "shrinking": 2, "gone": 3, "stable": 4, "not loaded": 5}
    frame = pd.DataFrame(rows, columns=["agent", "class", "earlier_share", "later_share",
                                        "difference", "low", "high", "earlier_tokens",
                                        "later_tokens", "first_week", "last_week"])
    return frame.sort_values(["class", "agent"], key=lambda c: c.map(order) if c.name == "class"
                             else c).reset_index(drop=True)


def indexed_agents(obs: pd.DataFrame, agents: list[str]) -> pd.DataFrame:
    """Each agent's weekly tokens per session indexed to its own first loaded week (= 100).

    An agent's change is visible whatever its size (helloWorld's 8k tokens a load beside a
    400-token agent). Columns: agent, iso_week, week_start, n, tokens, index.
    """
    pts = points(obs, "week", series=[f"agent:{a}" for a in agents])
    out = []
    for name, of in pts.groupby("series", sort=False):
        of = of.copy()
        loaded = of[of["value"] > 0]
        base = float(loaded["value"].iloc[0]) if not loaded.empty else np.nan
        of["index"] = 100 * of["value"] / base if base else np.nan
        of["agent"] = name.removeprefix("agent:")
        out.append(of)
    if not out:
        return pd.DataFrame(columns=["agent", "iso_week", "week_start", "n", "tokens", "index"])
    frame = pd.concat(out, ignore_index=True)
    return frame.rename(columns={"period": "iso_week", "period_start": "week_start",
                                 "value": "tokens"})[
        ["agent", "iso_week", "week_start", "n", "tokens", "index"]]


def by_project(obs: pd.DataFrame, series: tuple[str, ...] = ("health:use-brain",
               "cost_per_session"), first_day: str = "monday") -> pd.DataFrame:
    """Weekly points of ``series`` per project (a session's project; brain-wide ones left out)."""
    of = obs[obs["series"].isin(series) & obs["project"].notna()]
    frames = []
    for project, rows in of.groupby("project"):
        pts = points(rows, "week", first_day, series=[s for s in series
                                                      if s in set(rows["series"])])
        frames.append(pts.assign(project=project))
    if not frames:
        return pd.DataFrame(columns=["project", "series", "metric", "period", "period_start",
                                     "n", "value", "low", "high", "method", "k"])
    return pd.concat(frames, ignore_index=True)


# --- the command's output (brainlab trends) ------------------------------------------------------

def _records(frame: pd.DataFrame | None) -> list[dict]:
    if frame is None or frame.empty:
        return []
    return json_records(frame)


def json_records(frame: pd.DataFrame) -> list[dict]:
    """A frame as plain JSON records (NaN as None, numpy scalars unwrapped, dates as text)."""
    out = []
    for row in frame.to_dict("records"):
        clean = {}
        for key, value in row.items():
            if hasattr(value, "item"):
                value = value.item()
            if isinstance(value, float) and np.isnan(value):
                value = None
            elif isinstance(value, (date, datetime)):
                value = value.isoformat()
            clean[key] = value
        out.append(clean)
    return out


def report(obs: pd.DataFrame, found: dict[str, pd.DataFrame], agents: pd.DataFrame,
           compared: pd.DataFrame | None = None, through: str | None = None) -> dict:
    """What ``brainlab trends --json`` prints: changes, agents, comparison, what was scanned."""
    weeks = sorted(obs["iso_week"].unique()) if not obs.empty else []
    scanned = ordered_series(obs)
    changes_ = []
    for period, frame in found.items():
        for record in _records(frame):
            changes_.append({"scale": period, **record})
    return {
        "through": through or (weeks[-1] if weeks else None),
        "weeks": len(weeks), "first_week": weeks[0] if weeks else None,
        "penalty_beta": changepoints.BETA, "series": scanned,
        "changes": changes_,
        "agents": {"rule": AGENT_RULE, "classes": _records(agents)},
        **({"compare": _records(compared)} if compared is not None else {}),
    }


def text(result: dict, width: int = 80) -> str:
    """The command's text output of :func:`report`'s result, fitted to ``width`` columns.

    A line too long continues on the next, indented under its own text (``width`` 0: no
    wrapping; :func:`brainlab.common.terminal.fit`).
    """
    from brainlab.common.terminal import fit

    if not result["series"]:
        return fit("Nothing to scan: the store holds no metabolism log nor Claude Code"
                   " transcript (brainlab ingest brain PATH, brainlab ingest claude PATH add"
                   " them).", width)
    return fit("\n".join(_lines(result)), width)


def _lines(result: dict) -> list[str]:
    """The text's lines, unwrapped."""
    lines = [f"{len(result['series'])} series over {result['weeks']} week(s), "
             f"{result['first_week']}..{result['through']} (change points: PELT, penalty "
             f"{result['penalty_beta']:g} x ln(points); docs/trends.md)"]
    if result["changes"]:
        for c in result["changes"]:
            scale = "" if c["scale"] == "week" else f" [{c['scale']}]"
            lines.append(f"  since {c['period']}{scale}: {c['series']} {c['direction']} "
                         f"{_num(c['before'])} -> {_num(c['after'])}, difference "
                         f"{_num(c['difference'])} (95% {_num(c['low'])} to {_num(c['high'])})"
                         f": {c['verdict']}")
    else:
        lines.append("  no change point in any series")
    classes = result["agents"]["classes"]
    if classes:
        named = {}
        for a in classes:
            named.setdefault(a["class"], []).append(a["agent"])
        lines.append("agents (earlier half against later half): " + "; ".join(
            f"{k}: {', '.join(v)}" for k, v in named.items()))
    for c in result.get("compare", []):
        if c == result.get("compare", [])[0]:
            lines.append("compared (target against baseline, 95% intervals):")
        lines.append(f"  {c['series']}: {_num(c['target'])} (n {c['target_n']}) against "
                     f"{_num(c['baseline'])} (n {c['baseline_n']}), difference "
                     f"{_num(c['difference'])} ({_num(c['low'])} to {_num(c['high'])}):"
                     f" {c['verdict']}")
    return lines
