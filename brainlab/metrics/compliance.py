"""Protocol compliance as DataFrames: the ``violations`` view by week, rule and subject.

The rules are SQL views (store/models/rules/rule_<id>.sql, each rule's catalogue entry in its .yml); these
functions only filter and count them for the weekly report and notebook 07. A violation with no
time (a workspace's structure) belongs to no week: it is counted as the checkout's current state.
"""

from __future__ import annotations

import pandas as pd

from brainlab.store import query

COLUMNS = ["rule", "rule_name", "severity", "spec", "subject_kind", "subject", "occurred_at",
           "file", "line", "message", "evidence"]


def violations(db) -> pd.DataFrame:
    """Every violation in the store, with its ISO week (NULL when timeless)."""
    frame = query(db, "SELECT *, week_label(occurred_at) AS iso_week FROM violations "
                      "ORDER BY occurred_at NULLS LAST, rule, subject")
    return frame


def weekly(db, start_at, end_at, history_start_at,
           first_day: str = "monday") -> dict[str, pd.DataFrame]:
    """The report's figures: the week by rule, the trend by week and severity, top offenders.

    ``start_at``/``end_at`` bound the week; the trend starts at ``history_start_at``; its
    weeks start on ``first_day`` (brainlab/spec/weeks.py).
    """
    return weekly_on(lambda sql, params: query(db, sql, params), start_at, end_at,
                     history_start_at, first_day)


def weekly_on(run, start_at, end_at, history_start_at,
              first_day: str = "monday") -> dict[str, pd.DataFrame]:
    """:func:`weekly` through ``run(sql, params) -> DataFrame``.

    Over a store, or over the ``violations`` and ``rule_catalogue`` frames a report
    evaluated once (report/once.py): one definition of the weekly figures.
    """
    week = run("SELECT * FROM violations WHERE occurred_at >= ? AND occurred_at < ?",
               [start_at, end_at])
    by_rule = run("""
        SELECT c.rule, c.name AS rule_name, c.severity, c.spec,
               count(v.rule) FILTER (WHERE v.occurred_at >= ? AND v.occurred_at < ?) AS this_week,
               count(v.rule) FILTER (WHERE v.occurred_at IS NULL) AS current_state
        FROM rule_catalogue c LEFT JOIN violations v USING (rule)
        GROUP BY ALL HAVING this_week > 0 OR current_state > 0 ORDER BY c.rule""",
                  [start_at, end_at])
    trend = run("""
        SELECT week_label(occurred_at, first_day := ?) AS iso_week, severity,
               count(*) AS violations
        FROM violations WHERE occurred_at >= ? AND occurred_at < ?
        GROUP BY ALL ORDER BY iso_week, severity""",
                [first_day, history_start_at, end_at])
    return {"week": week, "by_rule": by_rule, "trend": trend, "offenders": offenders(week)}


def offenders(week: pd.DataFrame) -> pd.DataFrame:
    """The ten subjects with the most of ``week``'s violations, and their rules."""
    if week.empty:
        return week.iloc[:0]
    return (week.groupby(["subject_kind", "subject"], as_index=False)
            .agg(violations=("rule", "size"), rules=("rule", lambda r: ", ".join(sorted(set(r)))))
            .sort_values(["violations", "subject"], ascending=[False, True])
            .head(10).reset_index(drop=True))


def cold_start(db, since=None, until=None) -> pd.DataFrame:
    """SPEC §3.3 cold-start KPI: the latest pass rate over the last 7 measured NO-handoff boots.

    ``since``/``until``: the latest boot in that span (a report's week), else of the store.
    """
    return query(db, "SELECT sess_id, started_at, measured, passes, pass_rate, status "
                     "FROM cold_start_kpi WHERE (CAST(? AS TIMESTAMP) IS NULL OR started_at >= ?)"
                     " AND (CAST(? AS TIMESTAMP) IS NULL OR started_at < ?) "
                     "ORDER BY started_at DESC LIMIT 1", [since, since, until, until])


def annotated(db) -> pd.DataFrame:
    """Every violation with its ISO week and the session type, mode and project it belongs to.

    Sessions and claims by session id (transcript sessions by the type and mode their first
    message declares); sprints and agent-sprints through their sprint's
    session; workspaces by their folder's project. NULL where the store cannot say.
    """
    return query(db, """
        WITH session_facts AS (
            SELECT sess_id, any_value(type) AS type, any_value(mode) AS mode,
                   any_value(project) AS project
            FROM (SELECT sess_id, type, mode, project FROM raw_metabolism_logs
                  UNION ALL SELECT sess_id, type, mode, NULL FROM claims
                  UNION ALL SELECT session_id, declared_type, declared_mode, NULL
                  FROM brain_transcripts)
            GROUP BY sess_id
        ), sprint_facts AS (
            SELECT sprint_id, any_value(project) AS project, any_value(session_id) AS sess_id
            FROM sprints GROUP BY sprint_id
        ), workspace_facts AS (
            SELECT workspace, any_value(project) AS project, any_value(mode) AS mode
            FROM workspaces GROUP BY workspace
        )
        SELECT v.rule, v.rule_name, v.severity, v.spec, v.subject_kind, v.subject,
               v.occurred_at, week_label(v.occurred_at) AS iso_week,
               coalesce(s.type, ss.type) AS session_type,
               coalesce(s.mode, ss.mode, w.mode) AS mode,
               coalesce(s.project, sp.project, w.project, ss.project) AS project,
               v.file, v.line, v.message
        FROM violations v
        LEFT JOIN session_facts s
               ON v.subject_kind IN ('session', 'claim') AND s.sess_id = v.subject
        LEFT JOIN sprint_facts sp ON v.subject_kind IN ('sprint', 'agent-sprint')
               AND sp.sprint_id = split_part(v.subject, '/', 1)
        LEFT JOIN session_facts ss ON ss.sess_id = sp.sess_id
        LEFT JOIN workspace_facts w ON v.subject_kind = 'workspace' AND w.workspace = v.subject
        ORDER BY v.occurred_at NULLS LAST, v.rule, v.subject""")


def mode_usage(db, until=None) -> pd.DataFrame:
    """SPEC §2.7 "Measurable": brain sessions per declared mode, their share, redirections.

    ``until``: over the sessions whose first prompt came before it (a report's week end).
    """
    return query(db, "SELECT mode, mode_kind, sessions, session_share, redirections, "
                     "sessions_redirecting, redirections_per_session FROM "
                     "mode_redirections_for(until := ?) ORDER BY sessions DESC, mode", [until])


def mode_totals(db) -> dict[str, float]:
    """SPEC §2.7 "Measurable" in one line (sums of mode_redirections).

    Brain transcript sessions, the share of them declaring a mode, redirections.
    """
    row = query(db, """
        SELECT coalesce(sum(sessions), 0) AS sessions,
               coalesce(sum(session_share) FILTER (WHERE mode <> '(none)'), 0) AS declared_share,
               coalesce(sum(redirections), 0) AS redirections
        FROM mode_redirections""").iloc[0]
    return {"sessions": int(row["sessions"]), "declared_share": float(row["declared_share"]),
            "redirections": int(row["redirections"])}


def store_shape(db) -> dict[str, int]:
    """How much of each input the store holds: what the compliance rules can judge."""
    counts = query(db, """
        SELECT (SELECT count(*) FROM raw_metabolism_logs) AS metabolism_logs,
               (SELECT count(*) FROM claims) AS claims,
               (SELECT count(*) FROM workspaces) AS workspaces,
               (SELECT count(*) FROM broker_blocks) AS broker_blocks,
               (SELECT count(*) FROM circuit_events) AS circuit_events,
               (SELECT count(*) FROM cc_spans) AS transcript_spans""")
    return {k: int(v) for k, v in counts.iloc[0].items()}
