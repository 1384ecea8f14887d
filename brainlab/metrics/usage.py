"""Claude Code usage (SPEC §7) by day, week, month, session, model or any dimension: ``brainlab usage``.

Every view is one query of the table macro ``usage_by`` (store/models/marts/usage_by.sql), the
one place tokens, cost and calls are summed (issue 40 item 2): its grain (day, week, month of
the user's time zone, or the whole range) and its dimensions (``--by DIM``: project, branch,
model, agent, ticket, user, machine, skill, ...; :data:`DIMENSIONS`, read from the macro's
file). Filters (``--project``, ``--branch``, ``--user``, ``--machine``) group by their
dimension and keep its value; ``--since``/``--until`` are days of ``--timezone``
(:mod:`brainlab.metrics.usage_time`). A call's project is its session's
(store/models/staging/cc_session_projects.sql), so ``--project`` gives the same calls in
every view.

When the store's ``cc_usage_rollup`` is current (the claude ingest keeps it so: see
:mod:`brainlab.store.usage_rollup`), ``usage_by`` sums its few thousand rows instead of every
deduplicated call (``usage_calls``): the answers are the views'. A store attached to a team
lake reads the calls, with the user and machine of each transcript's partition.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import date

from brainlab.common.errors import ConfigError
from brainlab.metrics.usage_groups import COST_MODES, GROUP_VIEWS, TABLE_COLUMNS, tools_sql
from brainlab.metrics.usage_time import resolve_time
from brainlab.store import reader, usage_rollup

VIEWS = ("daily", "weekly", "monthly", "sessions", "models", "total", *GROUP_VIEWS)
DEFAULT_VIEW = "daily"
FILTERS = ("project", "branch", "user", "machine")  # --project, --branch, --user, --machine

TOKENS = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")
_SUMS = (*TOKENS, "total_tokens", "cost_usd", "requests")
# a session's own id: the store keys a session without sessionId `<project folder>/<name>`
# (counting rule 5, so a/shared.jsonl and b/shared.jsonl stay two sessions); outputs name it
# by its own id, as ccusage's sessionId, with the project in its own column (rule 7)
OWN_ID = "regexp_extract(session_id, '[^/]*$')"
PERIODS = {  # view -> (usage_by grain, its key columns, the key's name for --limit)
    "daily": ("day", "period AS day", "day"),
    "weekly": ("week", "week_label(period, first_day := $first_day) AS week,"
               " period AS week_start", "week_start"),
    "monthly": ("month", "strftime(period, '%Y-%m') AS month", "month"),
}
GROUPED = {  # view -> (the dimensions it groups by, its key column's SQL)
    "projects": (("project",), "project"),
    "agents": (("agent",), "agent"),
    "branches": (("branch",), "git_branch"),  # NULL: lines without gitBranch
    "tickets": (("ticket",), "ticket"),
    "sessions": (("session", "project"), None),
    "models": (("model", "speed"), None),
    "total": ((), None),
}


def __getattr__(name: str):
    """``DIMENSIONS``: ``--by DIM`` -> the column usage_by names it, read on first use.

    A plain ``usage daily`` never reads the macro's file.
    """
    if name == "DIMENSIONS":
        return usage_rollup.dimensions()
    raise AttributeError(name)


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
    table_columns: list | None = None  # brainlab.tables.Column list, when not USAGE_COLUMNS

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
        hint = ""
        if self.filters.get("user") or self.filters.get("machine"):
            hint = (" A user or machine is known on a store attached to a team lake (brainlab"
                    " attach --lake DIR --db FILE) or from telemetry (brainlab ingest otel).")
        return (f"No Claude Code usage matches {asked}: the store holds requests from {span}"
                f" (projects: {known}).{hint}")


def parse_day(value: str | date | None, option: str) -> date | None:
    """``value`` as a day (``--since``/``--until``); a ConfigError naming ``option`` if not one."""
    if value is None or isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise ConfigError(f"--{option} must be a day like 2026-11-23, got {value!r}") from None


def check_dimensions(by: tuple[str, ...] | list[str] | str | None) -> tuple[str, ...]:
    """``--by`` as a tuple of known dimensions; a ConfigError naming the known ones if not."""
    if by is None:
        return ()
    names = tuple(d.strip() for part in ([by] if isinstance(by, str) else by)
                  for d in part.split(",") if d.strip())
    for name in names:
        if name not in (known := usage_rollup.dimensions()):
            raise ConfigError(f"--by must be one of {', '.join(known)}, got {name!r}")
    return tuple(dict.fromkeys(names))


def usage_by_sql(source: str, grain: str, dims: tuple[str, ...] = (),
                 since: bool = False, until: bool = False, cost_mode: str = "calculate") -> str:
    """SQL: the macro ``usage_by`` over ``source`` (a table name) at ``grain``, by ``dims``.

    The grain, dimensions and cost mode are written into the SQL (checked names: DuckDB
    folds them into the plan); the zone, the week's first day and the days are the
    parameters ``$tz``, ``$first_day``, ``$since`` and ``$until``.
    """
    if cost_mode not in COST_MODES:
        raise ConfigError(f"--cost-mode must be one of {', '.join(COST_MODES)}, got"
                          f" {cost_mode!r}")
    args = [f"calls := {source}", f"grain := '{grain}'", "tz := $tz",
            "first_day := $first_day", f"cost_mode := '{cost_mode}'"]
    if dims:
        args.append("dims := [" + ", ".join(f"'{d}'" for d in dims) + "]")
    args += ["since := $since"] * since + ["until := $until"] * until
    return f"usage_by({', '.join(args)})"


def usage_sql(view: str, since: date | None = None, until: date | None = None,
              project: str | None = None, limit: int | None = None,
              rollup: bool = False, tz: str = "UTC",
              week_start: str = "monday", cost_mode: str = "calculate",
              by: tuple[str, ...] = (), filters: dict | None = None,
              undated: bool = False) -> tuple[str, dict]:
    """The SQL (and its parameters) of one usage view under the filters.

    Days are days of the IANA zone ``tz`` (``--since``/``--until`` too); weeks start on
    ``week_start``. ``rollup``: usage_by sums cc_usage_rollup (when it is current), else
    the calls (usage_calls). ``cost_mode``: which cost ``cost_usd`` sums
    (:data:`usage_groups.COST_MODES`). ``by``: more dimensions (:data:`DIMENSIONS`);
    ``filters``: ``{"branch": ..., "user": ..., "machine": ...}`` values to keep (``project``
    too, also given alone). ``undated``: a dated view keeps its rows of calls without a
    timestamp (period NULL, last), for the caller to count apart.
    """
    if view not in VIEWS:
        raise ConfigError(f"usage view must be one of {', '.join(VIEWS)}, got {view!r}")
    by = check_dimensions(by)
    kept = {k: v for k, v in {**(filters or {}), "project": project}.items() if v is not None}
    source = "cc_usage_rollup" if rollup else "usage_calls"
    params: dict = {"tz": tz, "first_day": week_start, **{f"f_{k}": v for k, v in kept.items()}}
    if since:
        params["since"] = since
    if until:
        params["until"] = until
    if view == "tools":
        if by or set(kept) - {"project"}:
            raise ConfigError("usage tools splits each call among its tools: it takes"
                              " --project only, not --by, --branch, --user or --machine")
        cond = [c for c, on in (("day >= $since", since), ("day <= $until", until),
                                ("project = $f_project", "project" in kept)) if on]
        sql = tools_sql(cond, cost_mode) + (f" LIMIT {int(limit)}" if limit else "")
        return sql, {k: v for k, v in params.items() if f"${k}" in sql}
    fixed, key = GROUPED.get(view, ((), None))
    dims = tuple(dict.fromkeys((*fixed, *by, *kept)))
    column_of = usage_rollup.dimensions() if by or kept else {}
    columns = [column_of[d] for d in by if d not in fixed]
    where = [f"{column_of[k]} = $f_{k}" for k in kept]
    extra = "".join(f"{c}, " for c in columns)
    if view in PERIODS:
        grain, keys, order = PERIODS[view]
        macro = usage_by_sql(source, grain, dims, bool(since), bool(until), cost_mode)
        cond = [*([] if undated else ["period IS NOT NULL"]), *where]
        select = (f"SELECT {keys}, {extra}{', '.join(_SUMS)}, unpriced_requests FROM {macro}"
                  + (f" WHERE {' AND '.join(cond)}" if cond else ""))
        if limit:
            newest = f"dense_rank() OVER (ORDER BY {order} DESC) <= {int(limit)}"
            select = f"SELECT * FROM ({select}) QUALIFY {newest}"
        sql = f"{select} ORDER BY {', '.join([order, *columns])}"
    elif view == "sessions":
        macro = usage_by_sql(source, "total", dims, cost_mode=cost_mode)
        local = "timezone($tz, {} AT TIME ZONE 'UTC')"
        cond = [*where] + [c for c, on in (
            (f"CAST({local.format('first_ts')} AS DATE) >= $since", since),
            (f"CAST({local.format('first_ts')} AS DATE) <= $until", until)) if on]
        # counting rule 7 (docs/transcripts.md): a session is named by its own id (a file
        # without sessionId: its name, not <project folder>/<name>); project is its own
        # column; the store's key (session_key) only breaks ties, so the order is stable
        select = (f"SELECT {OWN_ID} AS session_id, project, {extra}"
                  f"{local.format('first_ts')} AS first_ts,"
                  f" {local.format('last_ts')} AS last_ts, {', '.join(TOKENS)}, total_tokens,"
                  " cost_usd, requests, subagent_requests, CASE WHEN subagent_requests = 0"
                  " THEN 0.0 ELSE subagent_cost_usd END AS subagent_cost_usd,"
                  f" session_id AS session_key FROM {macro}"
                  + (f" WHERE {' AND '.join(cond)}" if cond else ""))
        order = ", ".join(["first_ts", "session_id", "project", *columns, "session_key"])
        if limit:  # the newest sessions: the same rows from the roll-up and the views
            select = (f"SELECT * FROM ({select}) ORDER BY first_ts DESC, session_id DESC,"
                      f" project DESC, session_key DESC LIMIT {int(limit)}")
        sql = f"SELECT * EXCLUDE (session_key) FROM ({select}) ORDER BY {order}"
    elif view == "models":
        macro = usage_by_sql(source, "total", dims, bool(since), bool(until), cost_mode)
        sql = ("SELECT CASE WHEN speed = 'fast' THEN model || '-fast' ELSE model END"
               f" AS model, {extra}priced_as, {', '.join(_SUMS)} FROM {macro}"
               + (f" WHERE {' AND '.join(where)}" if where else "")
               + f" ORDER BY cost_usd DESC NULLS LAST, {', '.join(['model', *columns])}"
               + (f" LIMIT {int(limit)}" if limit else ""))
    else:  # projects, agents, branches, tickets, total: one row per value of the dimensions
        macro = usage_by_sql(source, "total", dims, bool(since), bool(until), cost_mode)
        named = ", ".join([*([f"{key} AS {key}"] if key else []), *columns])
        if view == "tickets":
            where.append("ticket IS NOT NULL")
        order = (", ".join(["ticket", *columns]) if view == "tickets"
                 else ", ".join(["cost_usd DESC NULLS LAST", *([key] if key else []), *columns]))
        sql = (f"SELECT {named + ', ' if named else ''}{', '.join(_SUMS)}, sessions"
               f" FROM {macro}" + (f" WHERE {' AND '.join(where)}" if where else "")
               + f" ORDER BY {order}" + (f" LIMIT {int(limit)}" if limit else ""))
    return sql, {k: v for k, v in params.items() if f"${k}" in sql}


def usage_table(db: str | os.PathLike, view: str = DEFAULT_VIEW, since: str | date | None = None,
                until: str | date | None = None, project: str | None = None,
                limit: int | None = None, timezone: str | None = None,
                start_of_week: str | None = None, cost_mode: str = "calculate",
                by: tuple[str, ...] | str | None = None,
                filters: dict | None = None) -> UsageTable:
    """One usage view's rows under the filters; when empty, what the store does hold.

    ``timezone`` (IANA) and ``start_of_week``: the option's, else ``brainlab.toml``'s, else
    the machine's zone and Monday (:mod:`brainlab.metrics.usage_time`). ``cost_mode``:
    calculate (from tokens at brainlab's prices), reported (the lines' own costUSD, 0 when
    absent) or auto (costUSD when the line has it, else calculated), as ccusage's --mode.
    ``by``: dimensions to group by besides the view's own (:data:`DIMENSIONS`); ``filters``:
    ``branch``, ``user``, ``machine`` values to keep.
    """
    since, until = parse_day(since, "since"), parse_day(until, "until")
    tz, week_start = resolve_time(timezone, start_of_week)
    by = check_dimensions(by)
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be at least 1, got {limit}")
    kept = {k: v for k, v in {**(filters or {}), "project": project}.items() if v is not None}
    with reader(db, engine_only=True) as con:  # tuples only: no relation API to import
        rollup = usage_rollup.is_current(con)
        source = "cc_usage_rollup" if rollup else "usage_calls"
        # the calls without a timestamp in the same query, when no day or limit leaves them out
        together = view in PERIODS and not (since or until or limit)
        sql, params = usage_sql(view, since, until, project, limit, rollup, tz, week_start,
                                cost_mode, by, filters, undated=together)
        cursor = con.execute(sql, params)
        columns = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
        found = UsageTable(view, columns, rows, {"since": since, "until": until, **kept},
                           timezone=tz)
        found.filters.setdefault("project", None)
        if together:  # the key (day, week, month) is None on those rows, sorted last
            key = 1 if view == "weekly" else 0
            found.rows = [r for r in rows if r[key] is not None]
            at = columns.index("requests")
            found.undated = sum(r[at] for r in rows if r[key] is None)
        elif view in PERIODS:
            column_of = usage_rollup.dimensions()
            where = " AND ".join(["period IS NULL",
                                  *(f"{column_of[k]} = $f_{k}" for k in kept)])
            found.undated = (con.execute(
                f"SELECT requests FROM {usage_by_sql(source, 'day', tuple(kept))} WHERE {where}",
                {"tz": tz, "first_day": week_start, **{f"f_{k}": v for k, v in kept.items()}}
            ).fetchone() or (0,))[0]
        if view in GROUP_VIEWS or by or view == "total":
            column_of = usage_rollup.dimensions()
            extra = [column_of[d] for d in by if column_of[d] in columns]
            found.table_columns = table_columns(view, extra)
        if not found.rows:
            both = {"tz": tz, "first_day": week_start}
            first, last = con.execute(
                f"SELECT min(period), max(period) FROM {usage_by_sql(source, 'day')}",
                both).fetchone()
            n = (con.execute(f"SELECT requests FROM {usage_by_sql(source, 'total')}",
                             both).fetchone() or (0,))[0]
            found.has_transcripts = bool(n)
            found.first_day, found.last_day = first, last
            found.projects = [p for (p,) in con.execute(
                f"SELECT project FROM {usage_by_sql(source, 'total', ('project',))}"
                " WHERE project IS NOT NULL ORDER BY 1", both).fetchall()]
    return found


def table_columns(view: str, extra: list[str]) -> list:
    """The terminal columns of a view with dimensions: its own, then each ``extra`` one.

    With more dimensions than the view's own, a session can count in several rows: the
    sessions column then has no total.
    """
    from dataclasses import replace

    from brainlab.common.tables import USAGE_COLUMNS, Column

    spec = TABLE_COLUMNS.get(view) or USAGE_COLUMNS.get(view) or TABLE_COLUMNS["total"]
    if extra:
        spec = [replace(c, total=False) if c.name == "sessions" else c for c in spec]
    named = [Column(name, name.replace("_", " ")) for name in extra]
    return [*spec[:1], *named, *spec[1:]] if view != "total" else [*named, *spec]


# --- `usage-who --by DIM`: an alias of `usage --by DIM` for one release (issue 26, 40) ------
WHO = {"user": "user", "organization": "organization", "query_source": "query_source",
       "agent": "agent_name", "skill": "skill", "mcp_server": "mcp_server", "effort": "effort",
       "speed": "speed", "source": "source", "model": "model"}  # usage-who's --by -> usage's


def usage_who(db: str | os.PathLike, by: str = "user", since: str | None = None,
              until: str | None = None, timezone: str | None = None
              ) -> tuple[tuple[str, ...], list[tuple], str]:
    """Tokens, cost and calls grouped by ``by`` (a key of WHO), over days since..until.

    ``usage-who``'s table (columns, rows, the message when empty): ``brainlab usage total
    --by DIM`` with the sources of the calls; days are days of ``timezone`` (the option's,
    brainlab.toml's, else the machine's).
    """
    dim = WHO[by]
    column = usage_rollup.dimensions()[dim]
    since, until = parse_day(since, "since"), parse_day(until, "until")
    tz, first_day = resolve_time(timezone, None)
    params = {"tz": tz, "first_day": first_day, **({"since": since} if since else {}),
              **({"until": until} if until else {})}
    with reader(db, engine_only=True) as con:
        source = "cc_usage_rollup" if usage_rollup.is_current(con) else "usage_calls"
        totals = usage_by_sql(source, "total", (dim,), bool(since), bool(until))
        sources = usage_by_sql(source, "total", (dim, "source"), bool(since), bool(until))
        found = con.execute(
            f"SELECT CAST(t.{column} AS VARCHAR) AS {by}, t.requests, t.total_tokens,"
            " t.cost_usd, s.sources FROM " + totals + " t JOIN (SELECT " + column + ","
            " string_agg(source, ',' ORDER BY source) AS sources FROM " + sources
            + f" GROUP BY 1) s ON s.{column} IS NOT DISTINCT FROM t.{column}"
            " ORDER BY t.cost_usd DESC NULLS LAST, 1", params).fetchall()  # ties by name
    message = ("" if found else f"No Claude Code call in {db} for those days (add them with:"
               " brainlab ingest claude / brainlab ingest otel)")
    return (by, "requests", "total_tokens", "cost_usd", "sources"), found, message
