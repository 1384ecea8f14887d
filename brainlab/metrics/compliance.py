"""Protocol compliance as DataFrames: the ``violations`` view by week, rule and subject.

The rules are SQL views (views/80_rules.sql, catalogue in brainlab/rules/catalogue.py); these
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
    frame = query(db, "SELECT *, strftime(occurred_at, '%G-W%V') AS iso_week FROM violations "
                      "ORDER BY occurred_at NULLS LAST, rule, subject")
    return frame


def weekly(db, start_at, end_at, history_start_at) -> dict[str, pd.DataFrame]:
    """The report's figures: the week by rule, the trend by week and severity, top offenders.

    ``start_at``/``end_at`` bound the week; the trend starts at ``history_start_at``.
    """
    week = query(db, "SELECT * FROM violations WHERE occurred_at >= ? AND occurred_at < ?",
                 [start_at, end_at])
    by_rule = query(db, """
        SELECT c.rule, c.name AS rule_name, c.severity, c.spec,
               count(v.rule) FILTER (WHERE v.occurred_at >= ? AND v.occurred_at < ?) AS this_week,
               count(v.rule) FILTER (WHERE v.occurred_at IS NULL) AS current_state
        FROM rule_catalogue c LEFT JOIN violations v USING (rule)
        GROUP BY ALL HAVING this_week > 0 OR current_state > 0 ORDER BY c.rule""",
                    [start_at, end_at])
    trend = query(db, """
        SELECT strftime(occurred_at, '%G-W%V') AS iso_week, severity, count(*) AS violations
        FROM violations WHERE occurred_at >= ? AND occurred_at < ?
        GROUP BY ALL ORDER BY iso_week, severity""", [history_start_at, end_at])
    offenders = (week.groupby(["subject_kind", "subject"], as_index=False)
                 .agg(violations=("rule", "size"),
                      rules=("rule", lambda r: ", ".join(sorted(set(r)))))
                 .sort_values(["violations", "subject"], ascending=[False, True])
                 .head(10).reset_index(drop=True)) if not week.empty else week.iloc[:0]
    return {"week": week, "by_rule": by_rule, "trend": trend, "offenders": offenders}


def cold_start(db) -> pd.DataFrame:
    """SPEC §3.3 cold-start KPI: the latest pass rate over the last 7 measured NO-handoff boots."""
    return query(db, "SELECT sess_id, started_at, measured, passes, pass_rate, status "
                     "FROM cold_start_kpi ORDER BY started_at DESC LIMIT 1")
