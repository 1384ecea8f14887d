"""What Claude Code's telemetry adds (issue 26) as DataFrames: the weekly report's section.

Time to first token, permission waits, tool durations, API errors and retries, compactions
(``otel_weekly_activity``, store/models/marts/), and the week's calls by who made them
(``usage_by``: days of the report's zone); None when the store holds no telemetry.
"""

from __future__ import annotations

import datetime as dt
import os

import pandas as pd

from brainlab.metrics.report import Week, has_rows
from brainlab.store import query

DB = str | os.PathLike


def telemetry_week(db: DB, week: Week, tz: str = "UTC") -> dict[str, pd.DataFrame] | None:
    """The week's telemetry figures and its usage by user and source; None without telemetry.

    The week is one of zone ``tz`` starting on ``week.first_day`` (the report's).
    """
    if not (has_rows(db, "otel_events") or has_rows(db, "otel_spans")
            or has_rows(db, "otel_metric_points")):
        return None
    activity = query(db, "SELECT * FROM otel_weekly_activity_for(first_day := ?, tz := ?)"
                         " WHERE week_start = ?", [week.first_day, tz, week.start])
    who = query(db, """
        SELECT coalesce(user_name, '(no event)') AS user_name, source, requests, total_tokens,
               cost_usd
        FROM usage_by(calls := usage_calls, grain := 'total', tz := ?, since := ?, until := ?,
                      dims := ['user', 'source'])
        ORDER BY cost_usd DESC NULLS LAST LIMIT 15""",
                [tz, week.start, week.end - dt.timedelta(days=1)])
    return {"activity": activity, "who": who}
