"""What a weekly report shows of a store without metabolism logs (issue 28 item 6).

Claude Code without a brain is the most common user: the store holds transcripts only. The
report then shows what the transcripts measure (sessions, tokens, cost, duration, peak
context, commits, tool calls, cost per agent), labelled as measured, and names in ONE line the
sections it cannot show and the command that would add each, instead of a page of "No ...".
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pandas as pd

from brainlab.metrics.report import Week, has_rows, week_cost_usd
from brainlab.store import query

# Section keys of the report (report/sections.py), what each reads, and what adds it.
# METABOLISM stands for the sessions of a SPEC §2.2 type on the report's basis: metabolism
# logs, or transcripts declaring a brain session type (issue 13: they give the metabolism too).
METABOLISM = "@metabolism"
LOGS = ("metabolism logs", "brainlab ingest brain PATH")
NEEDS = (  # key, heading, tables any of which feeds it, (what, command)
    ("health", "health by category", (METABOLISM,), LOGS),
    ("ratio", "rolling ratio and coach trigger", (METABOLISM,), LOGS),
    ("conserve", "conserve signals", (METABOLISM,), LOGS),
    ("audit", "logged versus measured", (METABOLISM,), LOGS),
    ("agents", "agent cost", (METABOLISM, "cc_requests"), LOGS),
    ("breath", "sprint breath", ("sprints", "broker_blocks"),
     ("sprints", "brainlab ingest sprints PATH")),
    ("regulator", "regulator outcomes", ("circuit_events",),
     ("ticket circuits", "brainlab ingest circuits PATH")),
    ("hygiene", "hygiene", ("claims", "workspaces"),
     ("claims and workspaces", "brainlab ingest brain PATH")),
    ("compliance", "protocol compliance",
     ("raw_metabolism_logs", "claims", "workspaces", "agents", "broker_blocks",
      "circuit_events", "sprints"), ("a brain checkout", "brainlab ingest brain PATH")),
    ("sessions", "sessions of the week", (METABOLISM, "cc_requests"), LOGS),
    ("usage", "Claude Code usage", ("cc_requests",),
     ("Claude Code transcripts", "brainlab ingest claude [PATH]")),
)


@dataclass(frozen=True)
class Shape:
    """Which sides the store holds and the sections it cannot fill (key -> heading)."""

    has_logs: bool  # brain sessions to score: logs, or transcripts of a brain session type
    has_transcripts: bool
    missing: dict[str, str]
    adds: dict[str, tuple[str, str]]  # key -> (what is missing, the command adding it)

    def not_shown(self) -> str:
        """One sentence naming the sections left out and the command adding each, or ""."""
        if not self.missing:
            return ""
        groups: dict[str, list[str]] = {}
        for key, heading in self.missing.items():
            groups.setdefault(self.adds[key][1], []).append(heading)
        parts = [f"{', '.join(headings)} ({command} adds them)"
                 for command, headings in groups.items()]
        return "Not shown, no data for them in this store: " + "; ".join(parts) + "."


def store_shape(db, basis: str = "best") -> Shape:
    """Look once at which tables hold rows; every section asks the result."""
    present = {name: has_rows(db, name) for _k, _h, tables, _a in NEEDS for name in tables
               if name != METABOLISM}
    present[METABOLISM] = bool(query(db, "SELECT EXISTS (SELECT 1 FROM basis_sessions("
                                         "basis := $basis) WHERE type IS NOT NULL AND "
                                         "type <> 'unknown') AS x", {"basis": basis}).x[0])
    missing = {key: heading for key, heading, tables, _a in NEEDS
               if not any(present[t] for t in tables)}
    return Shape(has_logs=present[METABOLISM],
                 has_transcripts=present["cc_requests"], missing=missing,
                 adds={key: adds for key, _h, _t, adds in NEEDS})


_WEEK_FIGURES = """
WITH s AS (
    SELECT u.session_id, u.total_tokens, u.cost_usd, u.requests,
           m.duration_min, m.context_peak_pct, m.commits
    FROM usage_sessions u
    LEFT JOIN measured_sessions m ON m.transcript_session = u.session_id
    WHERE u.first_ts >= $start AND u.first_ts < $end
), tools AS (
    SELECT count(*) AS calls FROM cc_tool_calls WHERE ts >= $start AND ts < $end
)
SELECT count(*) AS sessions, coalesce(sum(requests), 0) AS api_calls,
       coalesce(sum(total_tokens), 0) AS tokens, coalesce(sum(cost_usd), 0) AS cost_usd,
       sum(duration_min) AS hours, round(median(duration_min)) AS median_minutes,
       max(context_peak_pct) AS peak_context_pct, sum(commits) AS commits,
       (SELECT calls FROM tools) AS tool_calls
FROM s
"""

FIGURE_NAMES = {  # column of _WEEK_FIGURES -> the headline's wording
    "sessions": "Claude Code sessions", "api_calls": "API calls", "tokens": "tokens",
    "cost_usd": "cost (USD)", "hours": "hours in sessions",
    "median_minutes": "median session (minutes)", "peak_context_pct": "peak context %",
    "commits": "git commits", "tool_calls": "tool calls",
}


def _bounds(week: Week, tz: str) -> dict:
    """The week of zone ``tz`` as the UTC range of transcript times (``$start``, ``$end``)."""
    start, end = week.utc_bounds(tz)
    return {"start": start, "end": end}


def week_figures(db, week: Week, tz: str = "UTC") -> pd.DataFrame:
    """The week's measured headline beside the previous week: figure, this_week, previous_week.

    ``tz``: the zone whose days make the week (the report's ``--timezone``), as below.
    """
    def one(w: Week) -> dict:
        row = query(db, _WEEK_FIGURES, _bounds(w, tz)).iloc[0].to_dict()
        if row.get("hours") is not None and not pd.isna(row["hours"]):
            row["hours"] = round(float(row["hours"]) / 60, 1)
        return row

    this, previous = one(week), one(week.shifted(-1))
    return pd.DataFrame({"figure": list(FIGURE_NAMES.values()),
                         "this_week": [this[k] for k in FIGURE_NAMES],
                         "previous_week": [previous[k] for k in FIGURE_NAMES]})


def week_sessions(db, week: Week, tz: str = "UTC") -> pd.DataFrame:
    """The week's Claude Code sessions as measured: project, start (in ``tz``), length, tokens."""
    return query(db, """
        SELECT u.session_id, u.project,
               timezone($tz, u.first_ts AT TIME ZONE 'UTC') AS started_at,
               CAST(round(m.duration_min) AS BIGINT) AS minutes, u.requests AS api_calls,
               u.total_tokens AS tokens,
               round(u.cost_usd, 2) AS cost_usd, m.context_peak_pct AS peak_context_pct,
               m.commits,
               (SELECT count(*) FROM cc_tool_calls t WHERE t.session_id = u.session_id)
                   AS tool_calls
        FROM usage_sessions u
        LEFT JOIN measured_sessions m ON m.transcript_session = u.session_id
        WHERE u.first_ts >= $start AND u.first_ts < $end
        ORDER BY u.first_ts""", {**_bounds(week, tz), "tz": tz})


def week_agents(db, week: Week, tz: str = "UTC") -> pd.DataFrame:
    """Cost per agent of the week: the main thread and each subagent type it launched.

    Summed by ``usage_by`` (the one place usage is summed) over the week's days of ``tz``.
    """
    return query(db, """
        SELECT CASE agent WHEN 'main' THEN 'main thread' ELSE agent END AS agent, sessions,
               requests AS api_calls, total_tokens AS tokens, round(cost_usd, 2) AS cost_usd
        FROM usage_by(calls := usage_calls, grain := 'total', tz := $tz, since := $since,
                      until := $until, dims := ['agent'])
        ORDER BY cost_usd DESC NULLS LAST, agent""",
                 {"tz": tz, "since": week.start, "until": week.end - dt.timedelta(days=1)})


def transcript_figures(db, week: Week, tz: str = "UTC") -> dict:
    """The week's Claude Code sessions and cost, for the reports' index (summary.json)."""
    if not has_rows(db, "cc_requests"):
        return {"cc_sessions": None, "cost_usd": None}
    row = query(db, "SELECT count(*) AS n FROM usage_sessions "
                    "WHERE first_ts >= $start AND first_ts < $end", _bounds(week, tz)).iloc[0]
    cost = week_cost_usd(db, week, tz)  # the usage section's figure (issue 43: they agree)
    return {"cc_sessions": int(row["n"]), "cost_usd": None if cost is None else round(cost, 2)}
