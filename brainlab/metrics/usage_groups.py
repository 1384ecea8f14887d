"""Cost where people ask for it (issue 24): `brainlab usage projects|agents|tickets|branches|tools`.

Sums of the same deduplicated, priced calls as the other usage views (the macro
``usage_by``, :mod:`brainlab.metrics.usage`), grouped by:

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
  add up). The one view that is not a ``usage_by`` sum: its rows are shares of calls.

Days (``--since``/``--until``) are days of the chosen time zone, as in every usage view.
The cost summed follows ``--cost-mode`` (:data:`COST_MODES`, for every usage view).
"""

from __future__ import annotations

from brainlab.common.errors import ConfigError
from brainlab.common.tables import Column
from brainlab.metrics.usage_time import local_sql

GROUP_VIEWS = ("projects", "agents", "tickets", "branches", "tools")

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
                           *_NUMBERS],
                 "total": _NUMBERS}


# --cost-mode (ccusage's --mode): calculate = from tokens at brainlab's prices; reported =
# the line's own costUSD, 0 without one (ccusage's display); auto = costUSD, else calculated
COST_MODES = ("calculate", "reported", "auto")


def tools_sql(where: list[str], cost_mode: str = "calculate") -> str:
    """The SQL of ``usage tools``; ``where``: conditions on ``day`` (local) and ``project``."""
    if cost_mode not in COST_MODES:
        raise ConfigError(f"--cost-mode must be one of {', '.join(COST_MODES)}, got"
                          f" {cost_mode!r}")
    cond = f" WHERE {' AND '.join(where)}" if where else ""
    cost = "cost_usd" if cost_mode == "calculate" else f"{cost_mode}_cost_usd"
    shares = (f"SELECT * REPLACE ({cost} AS cost_usd), CAST({local_sql('ts')} AS DATE) AS day,"
              " input_tokens + output_tokens + cache_creation_tokens + cache_read_tokens"
              " AS total_tokens FROM cc_usage_tools")
    sums = ("CAST(sum(input_tokens) AS BIGINT) AS input_tokens,"
            " CAST(sum(output_tokens) AS BIGINT) AS output_tokens,"
            " CAST(sum(cache_creation_tokens) AS BIGINT) AS cache_creation_tokens,"
            " CAST(sum(cache_read_tokens) AS BIGINT) AS cache_read_tokens,"
            " CAST(sum(total_tokens) AS BIGINT) AS total_tokens, sum(cost_usd) AS cost_usd,"
            " count(DISTINCT call_key) AS requests, count(DISTINCT session_id) AS sessions")
    return (f"SELECT coalesce(tool, '(no tool)') AS tool, CAST(sum(uses) AS BIGINT) AS uses,"
            f" {sums} FROM ({shares}){cond} GROUP BY 1 ORDER BY cost_usd DESC NULLS LAST, 1")
