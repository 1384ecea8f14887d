"""Cost where people ask for it (issue 24): `brainlab usage projects|agents|tickets|branches|tools`.

Sums of the same deduplicated, priced calls as the other usage views, grouped by:

- ``projects``: the session's project (store/models/staging/cc_session_projects.sql), with its sessions;
- ``agents``: who made the call: ``main`` (the main chain), else the subagent's type
  (``cc_agents``), else ``subagent (type unknown)``;
- ``branches``: the git branch the transcript line names (``gitBranch``), NULL without one;
- ``tickets``: the circuit ticket of the session: a Claude Code session whose working
  directory is a worktree ``.claude/worktrees/<ticket>`` (or a folder below it) belongs to
  ``<ticket>`` (the circuit runs each ticket in its own worktree); view ``ticket_usage``,
  joined to the protocol's ``tickets`` by ``tickets_measured``;
- ``tools``: the tools the calls issued (view ``cc_usage_tools``): a call that issued N
  tool uses gives each 1/N of its tokens and cost, a call that issued none is ``(no tool)``,
  so the rows add up to ``usage daily``'s totals; ``uses`` counts tool uses, ``calls`` the
  calls that issued the tool (a call issuing two tools counts in both: that column does not
  add up).

Days (``--since``/``--until``) are days of the chosen time zone, as in every usage view.
Projects and tickets are read from the roll-up when it is current; agents from the calls.
The cost summed follows ``--cost-mode`` (:func:`cost_source`, for every usage view).
"""

from __future__ import annotations

from brainlab.common.errors import ConfigError
from brainlab.common.tables import Column
from brainlab.metrics.usage_time import local_sql

GROUP_VIEWS = ("projects", "agents", "tickets", "branches", "tools")
TICKET = r"regexp_extract(cwd, '[/\\]\.claude[/\\]worktrees[/\\]([^/\\]+)', 1)"

_SUMS = ("CAST(sum(input_tokens) AS BIGINT) AS input_tokens,"
         " CAST(sum(output_tokens) AS BIGINT) AS output_tokens,"
         " CAST(sum(cache_creation_tokens) AS BIGINT) AS cache_creation_tokens,"
         " CAST(sum(cache_read_tokens) AS BIGINT) AS cache_read_tokens,"
         " CAST(sum(total_tokens) AS BIGINT) AS total_tokens, sum(cost_usd) AS cost_usd,"
         " CAST(sum(requests) AS BIGINT) AS requests,"
         " count(DISTINCT session_id) AS sessions")

_NUMBERS = [
    Column("sessions", "sessions", drop_rank=1),
    Column("input_tokens", "input", drop_rank=2), Column("output_tokens", "output", drop_rank=2),
    Column("cache_creation_tokens", "cache write", drop_rank=3),
    Column("cache_read_tokens", "cache read", drop_rank=3),
    Column("total_tokens", "total tokens"), Column("cost_usd", "cost"),
    Column("requests", "calls", drop_rank=1),
]
TABLE_COLUMNS = {"projects": [Column("project", "project"), *_NUMBERS],
                 "agents": [Column("agent", "agent"), *_NUMBERS],
                 "tickets": [Column("ticket", "ticket"), *_NUMBERS],
                 "branches": [Column("git_branch", "git branch"), *_NUMBERS],
                 "tools": [Column("tool", "tool"), Column("uses", "uses", drop_rank=1),
                           *_NUMBERS]}


# --cost-mode (ccusage's --mode): calculate = from tokens at brainlab's prices; reported =
# the line's own costUSD, 0 without one (ccusage's display); auto = costUSD, else calculated
COST_MODES = ("calculate", "reported", "auto")
_CALL_COST = {"calculate": "cost_usd", "reported": "coalesce(reported_cost_usd, 0)",
              "auto": "coalesce(reported_cost_usd, cost_usd)"}


def cost_source(table: str, cost_mode: str = "calculate") -> str:
    """``table`` (cc_usage_rollup / cc_usage_groups) with cost_usd the sum ``cost_mode`` asks."""
    if cost_mode not in COST_MODES:
        raise ConfigError(f"--cost-mode must be one of {', '.join(COST_MODES)}, got"
                          f" {cost_mode!r}")
    if cost_mode == "calculate":
        return table
    return f"(SELECT * REPLACE ({cost_mode}_cost_usd AS cost_usd) FROM {table})"


def group_sql(view: str, where: list[str], rollup: bool, cost_mode: str = "calculate") -> str:
    """The SQL of one grouped view; ``where``: conditions on ``day`` (local) and ``project``."""
    cond = f" WHERE {' AND '.join(where)}" if where else ""
    source = cost_source("cc_usage_rollup" if rollup else "cc_usage_groups", cost_mode)
    if view == "agents":
        calls = (f"SELECT * REPLACE ({_CALL_COST[cost_mode]} AS cost_usd),"
                 f" CAST({local_sql('ts')} AS DATE) AS day,"
                 " input_tokens + output_tokens + cache_creation_tokens + cache_read_tokens"
                 " AS total_tokens, 1 AS requests FROM cc_requests")
        key = ("CASE WHEN agent_id IS NULL THEN 'main'"
               " ELSE coalesce(subagent_type, 'subagent (type unknown)') END")
        return (f"SELECT {key} AS agent, {_SUMS} FROM ({calls}){cond} GROUP BY 1"
                " ORDER BY cost_usd DESC NULLS LAST, 1")
    if view == "tools":  # calls split among their tool uses (store/models/marts/cc_usage_tools.sql)
        shares = (f"SELECT *, CAST({local_sql('ts')} AS DATE) AS day, input_tokens"
                  " + output_tokens + cache_creation_tokens + cache_read_tokens"
                  f" AS total_tokens FROM {cost_source('cc_usage_tools', cost_mode)}")
        sums = _SUMS.replace("CAST(sum(requests) AS BIGINT)", "count(DISTINCT call_key)")
        return (f"SELECT coalesce(tool, '(no tool)') AS tool,"
                f" CAST(sum(uses) AS BIGINT) AS uses, {sums}"
                f" FROM ({shares}){cond} GROUP BY 1 ORDER BY cost_usd DESC NULLS LAST, 1")
    groups = f"SELECT *, CAST({local_sql('bucket')} AS DATE) AS day FROM {source}"
    if view == "projects":
        return (f"SELECT project, {_SUMS} FROM ({groups}){cond} GROUP BY 1"
                " ORDER BY cost_usd DESC NULLS LAST, 1")
    if view == "branches":  # NULL: lines without gitBranch (older versions, no git repo)
        return (f"SELECT git_branch, {_SUMS} FROM ({groups}){cond} GROUP BY 1"
                " ORDER BY cost_usd DESC NULLS LAST, 1")
    tickets = (f"SELECT session_id, {TICKET} AS ticket FROM cc_session_projects"
               f" WHERE {TICKET} <> ''")
    return (f"SELECT t.ticket, {_SUMS} FROM ({groups}) g JOIN ({tickets}) t USING (session_id)"
            f"{cond} GROUP BY 1 ORDER BY 1")
