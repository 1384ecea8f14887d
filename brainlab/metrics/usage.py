"""Claude Code usage (SPEC §7) by day, ISO week, month, session or model: ``brainlab usage``.

Rows come from the usage_* views, filtered by dates and project, without pandas.

Without ``--project`` the periods are read from ``usage_daily`` (the view ccusage is compared
with) and the sessions from ``usage_sessions``; with it, the same sums are taken over the
project's rows of ``cc_requests``. Weeks and months are sums of days, as ``usage_weekly`` is.

When the store's ``cc_usage_rollup`` is current (the claude ingest keeps it so: see
:mod:`brainlab.store.usage_rollup`), the same sums are taken over its few hundred rows
instead of deduplicating every request line: the answers are those of the views.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import date

from brainlab.errors import ConfigError
from brainlab.store import reader, usage_rollup

VIEWS = ("daily", "weekly", "monthly", "sessions", "models")
DEFAULT_VIEW = "daily"

TOKENS = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")
_DAY_SUMS = ", ".join(f"CAST(sum({c}) AS BIGINT) AS {c}" for c in TOKENS)

# cc_requests summed per UTC day: the columns of usage_daily, for one project's rows.
_PROJECT_DAYS = f"""
    SELECT CAST(ts AS DATE) AS day, {_DAY_SUMS},
           CAST(sum(input_tokens + output_tokens + cache_creation_tokens + cache_read_tokens)
               AS BIGINT) AS total_tokens,
           sum(cost_usd) AS cost_usd, count(*) AS requests,
           count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced_requests
    FROM cc_requests WHERE project = $project GROUP BY ALL"""

# the same sums over cc_usage_rollup (one row per day, session, subagent or not, project, model)
_ROLLUP_DAYS = f"""
    SELECT day, {_DAY_SUMS}, CAST(sum(total_tokens) AS BIGINT) AS total_tokens,
           sum(cost_usd) AS cost_usd, CAST(sum(requests) AS BIGINT) AS requests,
           CAST(sum(unpriced_requests) AS BIGINT) AS unpriced_requests
    FROM cc_usage_rollup{{where}} GROUP BY day"""
_ROLLUP_SESSIONS = f"""
    SELECT session_id, min(first_ts) AS first_ts, max(last_ts) AS last_ts,
           arg_max(project, last_ts) FILTER (WHERE project IS NOT NULL) AS project,
           {_DAY_SUMS}, CAST(sum(total_tokens) AS BIGINT) AS total_tokens,
           sum(cost_usd) AS cost_usd, CAST(sum(requests) AS BIGINT) AS requests,
           CAST(coalesce(sum(requests) FILTER (WHERE is_subagent), 0) AS BIGINT)
               AS subagent_requests,
           sum(cost_usd) FILTER (WHERE is_subagent) AS subagent_cost_usd
    FROM cc_usage_rollup GROUP BY session_id"""

_PERIOD_SUMS = (f"{_DAY_SUMS}, CAST(sum(total_tokens) AS BIGINT) AS total_tokens, "
                "sum(cost_usd) AS cost_usd, CAST(sum(requests) AS BIGINT) AS requests, "
                "CAST(sum(unpriced_requests) AS BIGINT) AS unpriced_requests")


@dataclass
class UsageTable:
    """The rows of one usage view, and what the store holds when they are empty."""

    view: str
    columns: list[str]
    rows: list[tuple]
    filters: dict = field(default_factory=dict)
    has_transcripts: bool = True
    first_day: date | None = None
    last_day: date | None = None
    projects: list[str] = field(default_factory=list)
    undated: int = 0  # calls without a timestamp a dated view leaves out (counting rule 4)

    def empty_message(self, db: str | os.PathLike) -> str:
        """Why there is nothing to show and which command adds it."""
        if not self.has_transcripts:
            return (f"No Claude Code usage in {db}: it holds no transcript request yet. "
                    "Add them with: brainlab ingest claude [PATH] --db " + str(db))
        asked = ", ".join(f"--{k} {v}" for k, v in self.filters.items() if v is not None)
        span = f"{self.first_day} to {self.last_day}"
        known = ", ".join(self.projects[:8]) + (", ..." if len(self.projects) > 8 else "")
        return (f"No Claude Code usage matches {asked}: the store holds requests from {span}"
                f" (projects: {known}).")


def _where(since: date | None, until: date | None, column: str, cast: str = "") -> list[str]:
    out = []
    if since:
        out.append(f"{cast or column} >= $since")
    if until:
        out.append(f"{cast or column} <= $until")
    return out


def _parse_day(value: str | date | None, option: str) -> date | None:
    if value is None or isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise ConfigError(f"--{option} must be a day like 2026-11-23, got {value!r}") from None


def usage_sql(view: str, since: date | None = None, until: date | None = None,
              project: str | None = None, limit: int | None = None,
              rollup: bool = False) -> tuple[str, dict]:
    """The SQL (and its parameters) of one usage view under the filters.

    ``rollup``: the same sums taken over cc_usage_rollup (when it is current).
    """
    if view not in VIEWS:
        raise ConfigError(f"usage view must be one of {', '.join(VIEWS)}, got {view!r}")
    params: dict = {}
    if since:
        params["since"] = since
    if until:
        params["until"] = until
    if project is not None:
        params["project"] = project
    if view in ("daily", "weekly", "monthly"):
        if rollup:
            days = "(" + _ROLLUP_DAYS.format(
                where=" WHERE project = $project" if project is not None else "") + ")"
        else:
            days = f"({_PROJECT_DAYS})" if project is not None else "usage_daily"
        cond = _where(since, until, "day") + ["day IS NOT NULL"]  # undated: counted apart
        where = f" WHERE {' AND '.join(cond)}"
        if view == "daily":
            key, select = "day", f"SELECT * FROM {days} d{where}"
        elif view == "weekly":
            key = "week_start"
            select = (f"SELECT strftime(date_trunc('week', day), '%G-W%V') AS week, "
                      f"CAST(date_trunc('week', day) AS DATE) AS week_start, {_PERIOD_SUMS} "
                      f"FROM {days} d{where} GROUP BY ALL")
        else:
            key = "month"
            select = (f"SELECT strftime(day, '%Y-%m') AS month, {_PERIOD_SUMS} "
                      f"FROM {days} d{where} GROUP BY ALL")
        if limit:
            return (f"SELECT * FROM ({select} ORDER BY {key} DESC LIMIT {int(limit)}) "
                    f"ORDER BY {key}", params)
        return f"{select} ORDER BY {key}", params
    if view == "sessions":
        cond = _where(since, until, "", "CAST(first_ts AS DATE)")
        if project is not None:
            cond.append("project = $project")
        where = f" WHERE {' AND '.join(cond)}" if cond else ""
        select = ("SELECT session_id, project, first_ts, last_ts, input_tokens, output_tokens,"
                  " cache_creation_tokens, cache_read_tokens, total_tokens, cost_usd, requests,"
                  " subagent_requests, CASE WHEN subagent_requests = 0 THEN 0.0"
                  " ELSE subagent_cost_usd END AS subagent_cost_usd FROM"
                  f" {f'({_ROLLUP_SESSIONS})' if rollup else 'usage_sessions'}{where}")
        if limit:
            return (f"SELECT * FROM ({select} ORDER BY first_ts DESC LIMIT {int(limit)}) "
                    "ORDER BY first_ts", params)
        return f"{select} ORDER BY first_ts", params
    cond = _where(since, until, "day" if rollup else "", "" if rollup else "CAST(ts AS DATE)")
    if project is not None:
        cond.append("project = $project")
    where = f" WHERE {' AND '.join(cond)}" if cond else ""
    if rollup:
        sums = ("CAST(sum(total_tokens) AS BIGINT) AS total_tokens, sum(cost_usd) AS cost_usd,"
                " CAST(sum(requests) AS BIGINT) AS requests FROM cc_usage_rollup")
    else:
        sums = ("CAST(sum(input_tokens + output_tokens + cache_creation_tokens + "
                "cache_read_tokens) AS BIGINT) AS total_tokens, sum(cost_usd) AS cost_usd, "
                "count(*) AS requests FROM cc_requests")
    select = (f"SELECT model, any_value(priced_as) AS priced_as, {_DAY_SUMS}, {sums}{where}"
              " GROUP BY model ORDER BY cost_usd DESC NULLS LAST, model")
    return select + (f" LIMIT {int(limit)}" if limit else ""), params


def usage_table(db: str | os.PathLike, view: str = DEFAULT_VIEW, since: str | date | None = None,
                until: str | date | None = None, project: str | None = None,
                limit: int | None = None) -> UsageTable:
    """One usage view's rows under the filters; when empty, what the store does hold."""
    since, until = _parse_day(since, "since"), _parse_day(until, "until")
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be at least 1, got {limit}")
    with reader(db, engine_only=True) as con:  # tuples only: no relation API to import
        rollup = usage_rollup.is_current(con)
        sql, params = usage_sql(view, since, until, project, limit, rollup)
        cursor = con.execute(sql, params)
        columns = [d[0] for d in cursor.description]
        found = UsageTable(view, columns, cursor.fetchall(),
                           {"since": since, "until": until, "project": project})
        if view in ("daily", "weekly", "monthly"):
            found.undated = con.execute(
                ("SELECT coalesce(sum(requests), 0) FROM cc_usage_rollup WHERE day IS NULL"
                 if rollup else "SELECT count(*) FROM cc_requests WHERE ts IS NULL")
                + (" AND project = $project" if project is not None else ""),
                {"project": project} if project is not None else {}).fetchone()[0]
        if not found.rows:
            source = ("(SELECT day AS d, project, requests AS n FROM cc_usage_rollup)" if rollup
                      else "(SELECT CAST(ts AS DATE) AS d, project, 1 AS n FROM cc_requests)")
            first, last, n = con.execute(f"SELECT min(d), max(d), sum(n) FROM {source}"
                                         ).fetchone()
            found.has_transcripts = bool(n)
            found.first_day, found.last_day = first, last
            found.projects = [p for (p,) in con.execute(
                f"SELECT DISTINCT project FROM {source} WHERE project IS NOT NULL "
                "ORDER BY 1").fetchall()]
    return found
