"""Claude Code usage (SPEC §7) by day, ISO week, month, session or model: ``brainlab usage``.

Every view is a sum of ``cc_usage_groups`` (deduplicated calls per UTC 15-minute bucket,
session, agent or not, project and model), filtered by dates and project, without pandas.
Days are days of the user's time zone (``--timezone``, :mod:`brainlab.metrics.usage_time`):
each bucket is turned into its local day; weeks and months are sums of those days. With the
zone UTC the days are those of the ``usage_daily`` view (the one ccusage is compared with).
A call's project is its session's (store/models/staging/cc_session_projects.sql), so
``--project`` gives the same calls in every view.

When the store's ``cc_usage_rollup`` is current (the claude ingest keeps it so: see
:mod:`brainlab.store.usage_rollup`), the sums are taken over its few thousand rows
instead of deduplicating every request line: the answers are those of the views.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import date

from brainlab.common.errors import ConfigError
from brainlab.metrics.usage_groups import GROUP_VIEWS, cost_source, group_sql
from brainlab.metrics.usage_time import local_sql, resolve_time
from brainlab.store import reader, usage_rollup

VIEWS = ("daily", "weekly", "monthly", "sessions", "models", *GROUP_VIEWS)
DEFAULT_VIEW = "daily"

TOKENS = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")
_DAY_SUMS = ", ".join(f"CAST(sum({c}) AS BIGINT) AS {c}" for c in TOKENS)

# the calls of cc_usage_groups (or its stored copy, cc_usage_rollup) summed per day of $tz
_DAYS = f"""
    SELECT CAST({local_sql('bucket')} AS DATE) AS day, {_DAY_SUMS},
           CAST(sum(total_tokens) AS BIGINT) AS total_tokens,
           sum(cost_usd) AS cost_usd, CAST(sum(requests) AS BIGINT) AS requests,
           CAST(sum(unpriced_requests) AS BIGINT) AS unpriced_requests
    FROM {{source}}{{where}} GROUP BY 1"""
_SESSIONS = f"""
    SELECT session_id, {local_sql('min(first_ts)')} AS first_ts,
           {local_sql('max(last_ts)')} AS last_ts,
           arg_max(project, last_ts) FILTER (WHERE project IS NOT NULL) AS project,
           {_DAY_SUMS}, CAST(sum(total_tokens) AS BIGINT) AS total_tokens,
           sum(cost_usd) AS cost_usd, CAST(sum(requests) AS BIGINT) AS requests,
           CAST(coalesce(sum(requests) FILTER (WHERE is_subagent), 0) AS BIGINT)
               AS subagent_requests,
           sum(cost_usd) FILTER (WHERE is_subagent) AS subagent_cost_usd
    FROM {{source}} GROUP BY session_id"""

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
    timezone: str = "UTC"  # the IANA zone of its days
    display: tuple[list[str], list[tuple]] | None = None  # terminal rows, when not ``rows``
    table_columns: list | None = None  # brainlab.common.tables.Column list, when not USAGE_COLUMNS

    def empty_message(self, db: str | os.PathLike) -> str:
        """Why there is nothing to show and which command adds it."""
        if not self.has_transcripts:
            return (f"No Claude Code usage in {db}: it holds no transcript request yet. "
                    "Add them with: brainlab ingest claude [PATH] --db " + str(db))
        asked = ", ".join(f"--{k} {v}" for k, v in self.filters.items() if v is not None)
        if self.view == "tickets" and not asked:
            return (f"No Claude Code session in {db} ran in a ticket's worktree"
                    " (a working directory .claude/worktrees/<ticket>).")
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


def parse_day(value: str | date | None, option: str) -> date | None:
    """``value`` as a day (``--since``/``--until``); a ConfigError naming ``option`` if not one."""
    if value is None or isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise ConfigError(f"--{option} must be a day like 2026-11-23, got {value!r}") from None


def usage_sql(view: str, since: date | None = None, until: date | None = None,
              project: str | None = None, limit: int | None = None,
              rollup: bool = False, tz: str = "UTC",
              week_start: str = "monday", cost_mode: str = "calculate") -> tuple[str, dict]:
    """The SQL (and its parameters) of one usage view under the filters.

    Days are days of the IANA zone ``tz`` (``--since``/``--until`` too); weeks start on
    ``week_start``. ``rollup``: the sums are taken over cc_usage_rollup (when it is current),
    else over the view cc_usage_groups it stores (the same rows, computed now).
    ``cost_mode``: which cost ``cost_usd`` sums (:data:`usage_groups.COST_MODES`).
    """
    sql, params = _usage_sql(view, since, until, project, limit, rollup, tz, week_start,
                             cost_mode)
    if "$tz" not in sql:  # DuckDB refuses a parameter the statement does not use
        params.pop("tz")
    return sql, params


def _usage_sql(view: str, since: date | None = None, until: date | None = None,
              project: str | None = None, limit: int | None = None,
              rollup: bool = False, tz: str = "UTC",
              week_start: str = "monday", cost_mode: str = "calculate") -> tuple[str, dict]:
    """:func:`usage_sql` before the unused ``$tz`` parameter is dropped."""
    if view not in VIEWS:
        raise ConfigError(f"usage view must be one of {', '.join(VIEWS)}, got {view!r}")
    source = cost_source("cc_usage_rollup" if rollup else "cc_usage_groups", cost_mode)
    params: dict = {"tz": tz}
    if since:
        params["since"] = since
    if until:
        params["until"] = until
    if project is not None:
        params["project"] = project
    if view in ("daily", "weekly", "monthly"):
        days = "(" + _DAYS.format(source=source, where=" WHERE project = $project"
                                  if project is not None else "") + ")"
        cond = _where(since, until, "day") + ["day IS NOT NULL"]  # undated: counted apart
        where = f" WHERE {' AND '.join(cond)}"
        if view == "daily":
            key, select = "day", f"SELECT * FROM {days} d{where}"
        elif view == "weekly":
            key = "week_start"
            params["first_day"] = week_start  # the week's rule: brainlab/spec/weeks.py
            start = "week_first_day(day, first_day := $first_day)"
            label = "week_label(day, first_day := $first_day)"
            select = (f"SELECT {label} AS week, {start} AS week_start, {_PERIOD_SUMS} "
                      f"FROM {days} d{where} GROUP BY ALL")
        else:
            key = "month"
            select = (f"SELECT strftime(day, '%Y-%m') AS month, {_PERIOD_SUMS} "
                      f"FROM {days} d{where} GROUP BY ALL")
        if limit:
            return (f"SELECT * FROM ({select} ORDER BY {key} DESC LIMIT {int(limit)}) "
                    f"ORDER BY {key}", params)
        return f"{select} ORDER BY {key}", params
    if view in GROUP_VIEWS:
        cond = _where(since, until, "day")
        if project is not None:
            cond.append("project = $project")
        select = group_sql(view, cond, rollup, cost_mode)
        return select + (f" LIMIT {int(limit)}" if limit else ""), params
    if view == "sessions":
        cond = _where(since, until, "", "CAST(first_ts AS DATE)")
        if project is not None:
            cond.append("project = $project")
        where = f" WHERE {' AND '.join(cond)}" if cond else ""
        select = ("SELECT session_id, project, first_ts, last_ts, input_tokens, output_tokens,"
                  " cache_creation_tokens, cache_read_tokens, total_tokens, cost_usd, requests,"
                  " subagent_requests, CASE WHEN subagent_requests = 0 THEN 0.0"
                  " ELSE subagent_cost_usd END AS subagent_cost_usd FROM"
                  f" ({_SESSIONS.format(source=source)}){where}")
        if limit:  # session_id breaks ties: the same rows from the roll-up and the views
            return (f"SELECT * FROM ({select} ORDER BY first_ts DESC, session_id DESC"
                    f" LIMIT {int(limit)}) ORDER BY first_ts, session_id", params)
        return f"{select} ORDER BY first_ts, session_id", params
    cond = _where(since, until, "", f"CAST({local_sql('bucket')} AS DATE)")
    if project is not None:
        cond.append("project = $project")
    where = f" WHERE {' AND '.join(cond)}" if cond else ""
    select = ("SELECT CASE WHEN speed = 'fast' THEN model || ' (fast)' ELSE model END"
              f" AS model, any_value(priced_as) AS priced_as, {_DAY_SUMS},"
              " CAST(sum(total_tokens) AS BIGINT) AS total_tokens, sum(cost_usd) AS cost_usd,"
              f" CAST(sum(requests) AS BIGINT) AS requests FROM {source}{where}"
              " GROUP BY 1 ORDER BY cost_usd DESC NULLS LAST, model")
    return select + (f" LIMIT {int(limit)}" if limit else ""), params


def usage_table(db: str | os.PathLike, view: str = DEFAULT_VIEW, since: str | date | None = None,
                until: str | date | None = None, project: str | None = None,
                limit: int | None = None, timezone: str | None = None,
                start_of_week: str | None = None, cost_mode: str = "calculate") -> UsageTable:
    """One usage view's rows under the filters; when empty, what the store does hold.

    ``timezone`` (IANA) and ``start_of_week``: the option's, else ``brainlab.toml``'s, else
    the machine's zone and Monday (:mod:`brainlab.metrics.usage_time`). ``cost_mode``:
    calculate (from tokens at brainlab's prices), reported (the lines' own costUSD, 0 when
    absent) or auto (costUSD when the line has it, else calculated), as ccusage's --mode.
    """
    since, until = parse_day(since, "since"), parse_day(until, "until")
    tz, week_start = resolve_time(timezone, start_of_week)
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be at least 1, got {limit}")
    with reader(db, engine_only=True) as con:  # tuples only: no relation API to import
        rollup = usage_rollup.is_current(con)
        sql, params = usage_sql(view, since, until, project, limit, rollup, tz, week_start,
                                cost_mode)
        cursor = con.execute(sql, params)
        columns = [d[0] for d in cursor.description]
        found = UsageTable(view, columns, cursor.fetchall(),
                           {"since": since, "until": until, "project": project}, timezone=tz)
        if view in ("daily", "weekly", "monthly"):
            found.undated = con.execute(
                "SELECT coalesce(sum(requests), 0) FROM "
                + ("cc_usage_rollup" if rollup else "cc_usage_groups") + " WHERE bucket IS NULL"
                + (" AND project = $project" if project is not None else ""),
                {"project": project} if project is not None else {}).fetchone()[0]
        if view in GROUP_VIEWS:
            from brainlab.metrics.usage_groups import TABLE_COLUMNS

            found.table_columns = TABLE_COLUMNS[view]
        if not found.rows:
            source = (f"(SELECT CAST({local_sql('bucket')} AS DATE) AS d, project,"
                      " requests AS n FROM " + ("cc_usage_rollup" if rollup
                                                else "cc_usage_groups") + ")")
            first, last, n = con.execute(f"SELECT min(d), max(d), sum(n) FROM {source}",
                                         {"tz": tz}).fetchone()
            found.has_transcripts = bool(n)
            found.first_day, found.last_day = first, last
            found.projects = [p for (p,) in con.execute(
                f"SELECT DISTINCT project FROM {source} WHERE project IS NOT NULL "
                "ORDER BY 1", {"tz": tz}).fetchall()]
    return found
