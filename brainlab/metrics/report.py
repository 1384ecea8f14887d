"""Data for the weekly health report: one function per report section, DataFrames out.

Every figure comes from a SQL view or table macro (store/models/<layer>/<name>.sql); these functions pick
the ISO week, pass a :class:`~brainlab.spec.thresholds.Thresholds` set through and open the database
read-only. Sections about tables other engineers add later (sprints, tickets) return ``None``
while those relations are missing or empty, so the report works before and after they land.
"""

from __future__ import annotations

import datetime as dt
import os
from datetime import datetime

import numpy as np
import pandas as pd

from brainlab.metrics import session_days
from brainlab.metrics.metabolism import basis_of
from brainlab.spec.thresholds import Thresholds
from brainlab.spec.weeks import Week
from brainlab.store import query, reader

DB = str | os.PathLike

# Headline figures shown with their week-over-week change, in display order.
HEADLINE_FIGURES = (
    ("sessions", "Sessions"),
    ("mean_health", "Mean health score"),
    ("median_health", "Median health score"),
    ("last_ratio", "Ratio at the last session"),
    ("min_ratio", "Lowest ratio"),
    ("coach_triggers", "Coach triggers"),
    ("inefficient", "Inefficient sessions"),
    ("conserve_next", "Conserve recommended next"),
    ("narcissistic", "Sessions in a narcissistic loop"),
    ("saturated", "Saturated sessions"),
)


def signal_args(t: Thresholds, formula: str = "v2", basis: str = "best") -> tuple[str, list]:
    """The named-argument list of session_signals_for / weekly_health_for, and its values.

    The thresholds' part is :meth:`Thresholds.signal_arguments` (spec/thresholds.py, the one
    list of those parameters). ``basis``: logged, measured or best (issue 13,
    store/models/marts/measured_sessions.sql).
    """
    names, values = t.signal_arguments()
    return (f"formula := ?, {names}, basis := ?", [formula, *values, basis_of(basis)])


# The local day of every session (brainlab/metrics/session_days.py: pandas-free, for the
# report command's week plan).
SESSION_DAYS = session_days.SESSION_DAYS


def _week_args(week: Week, thresholds: Thresholds | None, basis: str) -> tuple[str, list]:
    """weekly_health_for's arguments: :func:`signal_args` and the week's first day."""
    args, values = signal_args(thresholds or Thresholds(), basis=basis)
    return args + ", first_day := ?", [*values, week.first_day]


def session_weeks(db: DB, first_day: str = "monday", tz: str = "UTC") -> list[str]:
    """Every week from the first to the last session (weeks without sessions included).

    Sessions are metabolism logs and Claude Code transcript sessions (by their first request,
    a day of the zone ``tz``); weeks start on ``first_day`` (brainlab/spec/weeks.py).
    """
    row = query(db, f"SELECT min(day) AS first, max(day) AS last FROM ({SESSION_DAYS})", [tz])
    if row.empty or pd.isna(row.loc[0, "first"]):
        return []
    week = Week.of(pd.Timestamp(row.loc[0, "first"]).date(), first_day)
    last = Week.of(pd.Timestamp(row.loc[0, "last"]).date(), first_day)
    out = []
    while week.start <= last.start:
        out.append(week.label)
        week = week.shifted(1)
    return out


def week_figures(db: DB, week: Week, thresholds: Thresholds | None = None,
                 basis: str = "best") -> dict | None:
    """The week's row of weekly_health_for (SPEC §3.2/§3.3), or None when it has no session."""
    args, values = _week_args(week, thresholds, basis)
    frame = query(db, f"SELECT * FROM weekly_health_for({args}) WHERE iso_week = ?",
                  [*values, week.label])
    return None if frame.empty else frame.iloc[0].to_dict()


def headline(db: DB, week: Week, thresholds: Thresholds | None = None,
             basis: str = "best") -> pd.DataFrame:
    """One row per headline figure: this week, the week before, and the change."""
    args, values = _week_args(week, thresholds, basis)
    selects = " UNION ALL ".join(
        f"SELECT {i} AS pos, '{label}' AS figure, "
        f"(SELECT {col} FROM cur)::DOUBLE AS this_week, "
        f"(SELECT {col} FROM prev)::DOUBLE AS previous_week"
        for i, (col, label) in enumerate(HEADLINE_FIGURES))
    sql = (f"WITH w AS (SELECT * FROM weekly_health_for({args})), "
           "cur AS (SELECT * FROM w WHERE iso_week = ?), "
           "prev AS (SELECT * FROM w WHERE iso_week = ?) "
           f"SELECT figure, this_week, previous_week, this_week - previous_week AS change "
           f"FROM ({selects}) ORDER BY pos")
    return query(db, sql, [*values, week.label, week.shifted(-1).label])


def weekly_trend(db: DB, week: Week, thresholds: Thresholds | None = None,
                 history_weeks: int = 12, basis: str = "best") -> pd.DataFrame:
    """weekly_health_for rows of the ``history_weeks`` weeks ending with ``week``."""
    args, values = _week_args(week, thresholds, basis)
    first = week.shifted(-(history_weeks - 1))
    return query(db, f"SELECT * FROM weekly_health_for({args}) WHERE week_start BETWEEN ? AND ?"
                     " ORDER BY week_start", [*values, first.start, week.start])


def category_health(db: DB, week: Week, history_weeks: int = 12,
                    formula: str = "v2", basis: str = "best") -> pd.DataFrame:
    """Mean health per week and category (SPEC §3.2) over the history window."""
    first = week.shifted(-(history_weeks - 1))
    return query(db, "SELECT * FROM weekly_category_health_for(formula := ?, basis := ?, "
                     "first_day := ?) WHERE week_start BETWEEN ? AND ? "
                     "ORDER BY week_start, category",
                 [formula, basis_of(basis), week.first_day, first.start, week.start])


def ratio_series(db: DB, week: Week, thresholds: Thresholds | None = None,
                 history_weeks: int = 12, basis: str = "best") -> pd.DataFrame:
    """The rolling ratio at every session of the history window, with coach triggers (SPEC §3.3)."""
    args, values = signal_args(thresholds or Thresholds(), basis=basis)
    first = week.shifted(-(history_weeks - 1))
    return query(db, f"""
        SELECT sess_id, started_at, category, ratio, ratio_band, ratio_at_boot,
               coach_triggered, coach_reason,
               started_at >= ? AND started_at < ? AS in_week
        FROM session_signals_for({args})
        WHERE started_at >= ? AND started_at < ?
        ORDER BY started_at, sess_id""",
        [week.start_at, week.end_at, *values, first.start_at, week.end_at])


def week_sessions(db: DB, week: Week, thresholds: Thresholds | None = None,
                  basis: str = "best") -> pd.DataFrame:
    """Every session of the week with its signals and its (untrusted) notes."""
    args, values = signal_args(thresholds or Thresholds(), basis=basis)
    return query(db, f"""
        SELECT g.sess_id, g.started_at, g.type, g.category, g.health_score,
               g.context_peak_pct, g.context_at_close, g.ratio, g.ratio_band,
               g.coach_triggered, g.coach_reason, g.is_inefficient,
               g.recommend_conserve_next, g.is_narcissistic, s.is_incomplete, s.notes
        FROM session_signals_for({args}) g
        JOIN basis_sessions(basis := ?) s USING (sess_id)
        WHERE g.started_at >= ? AND g.started_at < ?
        ORDER BY g.started_at, g.sess_id""", [*values, basis, week.start_at, week.end_at])


def agent_leaderboard(db: DB, week: Week, thresholds: Thresholds | None = None,
                      limit: int = 15) -> pd.DataFrame:
    """agent_cost_for over the sessions up to the week's end (SPEC §2.5), this week's loads."""
    t = thresholds or Thresholds()
    return query(db, """
        WITH wk AS (
            SELECT l.agent, count(DISTINCT l.sess_id) AS loads_this_week,
                   sum(l.tokens_estimated) AS tokens_this_week
            FROM metabolism_agent_loads l JOIN metabolism_sessions s USING (sess_id)
            WHERE s.started_at >= ? AND s.started_at < ?
            GROUP BY l.agent)
        SELECT c.agent, c.context_tier, c.tokens_per_load, c.sessions_loaded,
               c.share_of_sessions, c.tokens_total, c.use_share,
               coalesce(wk.loads_this_week, 0) AS loads_this_week,
               coalesce(wk.tokens_this_week, 0) AS tokens_this_week,
               c.is_always_loaded, c.is_little_used
        FROM agent_cost_for(always_loaded_share := ?, little_use_share := ?, until := ?) c
        LEFT JOIN wk USING (agent)
        ORDER BY c.tokens_total DESC NULLS LAST, c.agent
        LIMIT ?""",
        [week.start_at, week.end_at, t.always_loaded_share, t.little_use_share, week.end_at,
         limit])


def wasted_agents(db: DB, thresholds: Thresholds | None = None,
                  until: datetime | None = None) -> pd.DataFrame:
    """Agents always loaded and little used (SPEC §2.5 'always loaded for nothing?').

    ``until``: over the sessions started before it (a week's end), else every session.
    """
    t = thresholds or Thresholds()
    return query(db, "SELECT agent, context_tier, sessions_loaded, share_of_sessions, "
                     "tokens_total, use_share FROM agent_cost_for(always_loaded_share := ?, "
                     "little_use_share := ?, until := ?) WHERE is_always_loaded AND "
                     "is_little_used ORDER BY tokens_total DESC",
                 [t.always_loaded_share, t.little_use_share, until])


def stale_claims(db: DB, week: Week) -> pd.DataFrame:
    """Claims opened before the week's end and stale at that moment (SPEC §2.6)."""
    return query(db, "SELECT sess_id, type, agent, status, opened_at, ttl_hours, expires_at, "
                     "source_file FROM claim_status_at(CAST(? AS TIMESTAMP)) "
                     "WHERE is_stale AND opened_at < ? ORDER BY opened_at",
                 [week.end_at, week.end_at])


def workspace_violations(db: DB) -> pd.DataFrame:
    """One row per SPEC §5 workspace rule broken (the checkout as last ingested)."""
    return query(db, "SELECT workspace, rule, file_name, line, detail FROM workspace_violations "
                     "ORDER BY workspace, rule, line")


def ingest_problems(db: DB, week: Week) -> pd.DataFrame:
    """Ingest errors of the week's session logs, plus those of files tied to no session."""
    return query(db, """
        WITH wk AS (SELECT source_file FROM metabolism_sessions
                    WHERE started_at >= ? AND started_at < ?),
             any_session AS (SELECT DISTINCT source_file FROM metabolism_sessions)
        SELECT e.file, e.line, e.severity, e.source, e.reason
        FROM ingest_errors e
        WHERE e.file IN (SELECT source_file FROM wk)
           OR e.file NOT IN (SELECT source_file FROM any_session)
        ORDER BY e.file, e.line NULLS FIRST""", [week.start_at, week.end_at])


def incomplete_logs(db: DB, week: Week) -> pd.DataFrame:
    """The week's metabolism logs missing a mandatory field (SPEC §3.1), still loaded."""
    return query(db, "SELECT l.sess_id, array_to_string(l.missing_fields, ', ') AS missing, "
                     "l.source_file FROM raw_metabolism_logs l "
                     "WHERE l.is_incomplete AND l.started_at >= ? AND l.started_at < ? "
                     "ORDER BY l.started_at", [week.start_at, week.end_at])


# --- sections over relations other branches add (sprints, breath metrics, tickets) ---------

def relation_columns(db: DB, name: str) -> dict[str, str]:
    """Column name -> type of a table or view in the main schema ({} when it does not exist)."""
    with reader(db) as con:
        rows = con.execute("SELECT column_name, data_type FROM duckdb_columns() "
                           "WHERE schema_name = 'main' AND table_name = ?", [name]).fetchall()
    return dict(rows)


RELATIONS = ("SELECT table_name AS n FROM duckdb_tables() WHERE schema_name = 'main' "
             "UNION ALL SELECT view_name FROM duckdb_views() WHERE schema_name = 'main' "
             "AND NOT internal")


def has_rows(db: DB, name: str) -> bool:
    """True when the table or view ``name`` exists and holds at least one row."""
    memo = getattr(db, "memo", None)  # a HeldReader (one report render): asked once
    if memo is not None:  # the store's tables and views listed once for every name
        names = memo(("relations",), lambda: _relations(db))
        return memo(("has_rows", name), lambda: name in names and _any_row(db, name))
    return _has_rows(db, name)


def _relations(db: DB) -> frozenset[str]:
    with reader(db) as con:
        return frozenset(n for (n,) in con.execute(RELATIONS).fetchall())


def _any_row(db: DB, name: str) -> bool:
    with reader(db) as con:
        return con.execute(f'SELECT EXISTS (SELECT 1 FROM "{name}")').fetchone()[0]


def _has_rows(db: DB, name: str) -> bool:
    with reader(db) as con:
        exists = con.execute(f"SELECT count(*) FROM ({RELATIONS}) WHERE n = ?",
                             [name]).fetchone()[0]
        if not exists:
            return False
        return con.execute(f'SELECT EXISTS (SELECT 1 FROM "{name}")').fetchone()[0]


def _time_column(columns: dict[str, str], preferred: tuple[str, ...]) -> str | None:
    for name in preferred:
        if name in columns:
            return name
    return next((c for c, t in columns.items() if t.startswith("TIMESTAMP")), None)


BREATH_METRICS = ("context_load", "stale_ratio", "breath_depth", "exhale_rate")
BREATH_ALERTS = (  # SPEC §4.4 on the broker's printed values: metric, comparison, Thresholds field
    ("context_load", ">", "context_load_max", "overload"),
    ("stale_ratio", ">", "stale_ratio_max", "noise"),
    ("exhale_rate", "<", "exhale_rate_min", "retention"),
)
MEASURED_ALERTS = (("alert_overload", "overload"), ("alert_noise", "noise"),
                   ("alert_retention", "retention"), ("alert_accumulation", "accumulation"))


def sprint_breath(db: DB, week: Week, thresholds: Thresholds | None = None,
                  measured: pd.DataFrame | None = None) -> pd.DataFrame | None:
    """The week's sprints with their SPEC §4.4 breath metrics and alerts; None without sprints.

    ``measured`` is the broker replay of the recorded source maps, one row per sprint
    (``brainlab.sim.tuning.breath.sprint_alerts``: loads against references, the four alerts
    with the accumulation one); the report passes it, and its metrics come first. The values
    the broker printed in its expire blocks (``broker_recorded_releases``) stay beside them as
    ``printed_*`` (measured beside logged, DESIGN §3). Without ``measured``, the printed values
    are the only basis and carry the three alerts they allow.
    """
    if not has_rows(db, "sprints"):
        return None
    t = thresholds or Thresholds()
    printed = has_rows(db, "broker_recorded_releases")
    join = " LEFT JOIN broker_recorded_releases b USING (sprint_id)" if printed else ""
    values = "".join(f", any_value(b.{m}) AS printed_{m}" if printed else f", NULL AS printed_{m}"
                     for m in BREATH_METRICS)
    frame = query(db, f"""
        SELECT s.sprint_id, any_value(s.project) AS project, any_value(s.domain) AS domain,
               min(s.started_at) AS started_at{values}
        FROM sprints s{join}
        GROUP BY s.sprint_id HAVING min(s.started_at) >= ? AND min(s.started_at) < ?
        ORDER BY started_at, sprint_id""", [week.start_at, week.end_at])
    if measured is not None and not measured.empty:
        keep = measured.drop_duplicates("sprint_id").set_index("sprint_id")
        for m in BREATH_METRICS:
            frame.insert(frame.columns.get_loc(f"printed_{m}"), m,
                         frame["sprint_id"].map(keep[m]).to_numpy())
        flags = [frame["sprint_id"].map(keep[c]).fillna(False).astype(bool).map(
            {True: name, False: ""}) for c, name in MEASURED_ALERTS]
    else:
        flags = [pd.Series(np.where(_compare(frame[f"printed_{m}"], op, getattr(t, f)), name,
                                    ""), index=frame.index)
                 for m, op, f, name in BREATH_ALERTS]
    frame["alerts"] = [", ".join(x for x in row if x) for row in zip(*flags, strict=True)] \
        if len(frame) else pd.Series(dtype=str)
    return frame


def _compare(values: pd.Series, op: str, limit: float) -> np.ndarray:
    numbers = pd.to_numeric(values, errors="coerce")
    return (numbers > limit if op == ">" else numbers < limit).fillna(False).to_numpy()


def ticket_outcomes(db: DB, week: Week) -> pd.DataFrame | None:
    """Tickets active in the week (SPEC §6.6) from the ``tickets`` view; None without tickets."""
    if not has_rows(db, "tickets"):
        return None
    cols = relation_columns(db, "tickets")
    when = _time_column(cols, ("last_event_at", "started_at", "ended_at"))
    if when is None:
        return None
    wanted = [c for c in ("ticket", "started_at", "last_event_at", "outcome", "stops",
                          "decisions", "decisions_monte", "refused_decisions", "wakeups",
                          "hours_to_integration", "sessions",
                          "tokens") if c in cols]
    start = "started_at" if "started_at" in cols else when
    return query(db, f"SELECT {', '.join(wanted)} FROM tickets "
                     f"WHERE {when} >= ? AND {start} < ? ORDER BY {start}",
                 [week.start_at, week.end_at])


# --- Claude Code usage (SPEC §7), when transcripts were ingested --------------------------------

def transcript_sessions(db: DB, week: Week, tz: str = "UTC") -> int:
    """Claude Code sessions whose first request falls in the week of zone ``tz`` (0 without)."""
    return int(query(db, f"SELECT count(*) AS n FROM usage_sessions WHERE {_LOCAL_FIRST} >= ?"
                         f" AND {_LOCAL_FIRST} < ?", [tz, week.start_at, tz, week.end_at]).n[0])


_LOCAL_FIRST = "timezone(?, first_ts AT TIME ZONE 'UTC')"  # a session's start, local time
# the calls summed by usage_by (store/models/marts/usage_by.sql, the one place usage is
# summed) over the local days since..until of a zone, as `brainlab usage --timezone` does;
# the parameters: zone, first day, last day
_USAGE_BY = ("usage_by(calls := usage_calls, grain := '{grain}', tz := ?, since := ?, until := ?"
             "{dims})")


def _usage_by(grain: str, dims: tuple[str, ...] = ()) -> str:
    named = ", ".join(f"'{d}'" for d in dims)
    return _USAGE_BY.format(grain=grain, dims=f", dims := [{named}]" if dims else "")


def transcript_usage(db: DB, week: Week, tz: str = "UTC") -> dict[str, pd.DataFrame] | None:
    """The week's transcript usage: per day and model, per model, costliest sessions; None without.

    Days are days of the IANA zone ``tz`` (the report's ``--timezone``): the week is its
    seven local days, as `brainlab usage daily --timezone` counts them.
    """
    if not has_rows(db, "cc_requests"):
        return None
    last = week.end - dt.timedelta(days=1)
    days = [tz, week.start, last]
    by_day = query(db, f"""
        SELECT period AS day, model, requests, total_tokens, cost_usd
        FROM {_usage_by('day', ('model',))} WHERE period IS NOT NULL
        ORDER BY day, model""", days)
    by_model = query(db, f"""
        SELECT model, requests, input_tokens, output_tokens, cache_creation_tokens,
               cache_read_tokens, cost_usd, unpriced_requests
        FROM {_usage_by('total', ('model',))} ORDER BY cost_usd DESC NULLS LAST""", days)
    sessions = query(db, f"""
        SELECT session_id, project, {_LOCAL_FIRST} AS first_ts, total_tokens, cost_usd,
               requests, subagent_requests, subagent_cost_usd
        FROM usage_sessions WHERE {_LOCAL_FIRST} >= ? AND {_LOCAL_FIRST} < ?
        ORDER BY cost_usd DESC NULLS LAST LIMIT 10""", [tz, tz, week.start_at, tz, week.end_at])
    before = week.shifted(-1)
    previous = query(db, f"SELECT (SELECT cost_usd FROM {_usage_by('total')}) AS cost",
                     [tz, before.start, before.end - dt.timedelta(days=1)]).cost[0]
    return {"by_day": by_day, "by_model": by_model, "sessions": sessions,
            "previous_cost_usd": previous}


def week_cost_usd(db: DB, week: Week, tz: str = "UTC") -> float | None:
    """The week's Claude Code cost: its calls on the week's days of zone ``tz``.

    The usage section's figure (the sum of its per-model table) and ``summary.json``'s
    ``cost_usd``: a session running across the week's end counts its calls on each side.
    """
    cost = query(db, f"SELECT (SELECT cost_usd FROM {_usage_by('total')}) AS cost",
                 [tz, week.start, week.end - dt.timedelta(days=1)]).cost[0]
    return None if pd.isna(cost) else float(cost)


def audit_week(db: DB, week: Week) -> dict:
    """Logged versus measured for the week's logs (issue 13).

    Coverage, disagreements by field, worst offenders (most fields beyond tolerance), and the
    store's log and transcript counts.
    """
    bounds = [week.start_at, week.end_at]
    counts = query(db, "SELECT (SELECT count(*) FROM stg_metabolism_sessions) AS logs,"
                       " (SELECT count(*) FROM measured_sessions) AS transcripts").iloc[0]
    coverage = query(db, """
        SELECT m.match_status, count(*) AS logs FROM session_matches m
        JOIN stg_metabolism_sessions s USING (sess_id)
        WHERE s.started_at >= ? AND s.started_at < ? GROUP BY ALL
        UNION ALL
        SELECT 'transcript without log', count(*) FROM measured_sessions
        WHERE sess_id IS NULL AND started_at >= ? AND started_at < ?""", bounds + bounds)
    week_rows = ("FROM session_audit WHERE started_at >= ? AND started_at < ?")
    by_field = query(db, f"""
        SELECT field, count(*) FILTER (WHERE disagrees IS NOT NULL) AS compared,
               count(*) FILTER (WHERE disagrees) AS disagree,
               median(difference) FILTER (WHERE disagrees) AS median_difference
        {week_rows} GROUP BY field HAVING count(*) FILTER (WHERE disagrees) > 0
        ORDER BY disagree DESC, field""", bounds)
    worst = query(db, f"""
        SELECT sess_id, count(*) FILTER (WHERE disagrees) AS fields_disagreeing,
               string_agg(field, ', ' ORDER BY field) FILTER (WHERE disagrees) AS fields,
               max(100 * difference / nullif(logged_value, 0))
                   FILTER (WHERE field = 'tokens_used') AS tokens_underreport_pct
        {week_rows} GROUP BY sess_id HAVING count(*) FILTER (WHERE disagrees) > 0
        ORDER BY fields_disagreeing DESC, sess_id LIMIT 10""", bounds)
    return {"logs": int(counts["logs"]), "transcripts": int(counts["transcripts"]),
            "coverage": coverage[coverage["logs"] > 0], "by_field": by_field, "worst": worst}
