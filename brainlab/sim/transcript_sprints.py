"""Sprints from Claude Code transcripts (SPEC §7, §4.4): tool calls grouped into sprints.

Reads the transcript tables (``cc_tool_calls``, ``cc_requests``) when they exist. A sprint is
a span of a session between a context-broker inhale block and the next expire block of the
same sprint name (blocks found in the transcript are stored in ``broker_blocks`` with their
``session_id`` and ``ts``); a session with no such block is one sprint per session and project
(sprint_id = ``<session_id>`` or ``<session_id>:<project>``). Each subagent is an agent (its
``subagent_type``, else ``agent-<id>``; the main chain is ``main``) and its referenced files come
from its own Read/Grep/Glob/Edit/MultiEdit/Write/NotebookEdit calls.
"""

from __future__ import annotations

import duckdb
import pandas as pd

_REF_TOOLS = "('Read', 'Grep', 'Glob', 'Edit', 'MultiEdit', 'Write', 'NotebookEdit')"

TRANSCRIPT_SPRINTS_SQL = f"""
WITH calls AS (
    SELECT t.session_id, t.ts,
           coalesce(t.subagent_type,
                    CASE WHEN t.agent_id IS NULL THEN 'main' ELSE 'agent-' || t.agent_id END)
               AS agent,
           t.file_path AS path,
           CASE t.tool WHEN 'Read' THEN 'read' WHEN 'Grep' THEN 'search'
                       WHEN 'Glob' THEN 'search' WHEN 'Write' THEN 'write' ELSE 'edit' END
               AS kind
    FROM cc_tool_calls t
    WHERE t.tool IN {_REF_TOOLS} AND t.file_path IS NOT NULL AND t.file_path <> ''
), session_project AS (
    SELECT session_id, mode(project) AS project, min(ts) AS started_at, max(ts) AS ended_at
    FROM cc_requests WHERE project IS NOT NULL GROUP BY session_id
), marks AS (
    SELECT session_id, sprint, kind, ts, project
    FROM broker_blocks WHERE session_id IS NOT NULL AND ts IS NOT NULL
), spans AS (
    SELECT i.session_id, i.sprint, i.project, i.ts AS started_at,
           coalesce(min(e.ts), TIMESTAMP '9999-12-31') AS ended_at
    FROM marks i LEFT JOIN marks e
      ON e.session_id = i.session_id AND e.sprint = i.sprint AND e.kind = 'expire'
     AND e.ts >= i.ts
    WHERE i.kind = 'inhale'
    GROUP BY i.session_id, i.sprint, i.project, i.ts
), marked AS (
    SELECT c.*, s.sprint AS sprint_id, coalesce(s.project, p.project) AS project,
           s.started_at, s.ended_at
    FROM calls c JOIN spans s
      ON s.session_id = c.session_id AND c.ts >= s.started_at AND c.ts <= s.ended_at
    LEFT JOIN session_project p ON p.session_id = c.session_id
), unmarked AS (
    SELECT c.*, c.session_id AS sprint_id, p.project, p.started_at, p.ended_at
    FROM calls c LEFT JOIN session_project p ON p.session_id = c.session_id
    WHERE c.session_id NOT IN (SELECT session_id FROM marks)
)
SELECT sprint_id, project, session_id, agent, path, kind, started_at, ended_at
FROM (SELECT * FROM marked UNION ALL SELECT * FROM unmarked)
WHERE project IS NOT NULL {{where}}
"""


def _has_tables(con: duckdb.DuckDBPyConnection, *names: str) -> bool:
    """Whether every relation (table or view) in ``names`` exists."""
    found = {r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' UNION ALL "
        "SELECT view_name FROM duckdb_views() WHERE schema_name = 'main'").fetchall()}
    return set(names) <= found


def transcript_inputs(con: duckdb.DuckDBPyConnection, project: str | None = None
                      ) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """(agents, refs) frames for SprintSet.build, or None when no transcript tables exist."""
    if not _has_tables(con, "cc_tool_calls", "cc_requests"):
        return None
    where = "AND project = ?" if project else ""
    calls = con.execute(TRANSCRIPT_SPRINTS_SQL.format(where=where),
                        [project] if project else []).df()
    if calls.empty:
        return None
    agents = (calls.groupby(["sprint_id", "agent"], sort=False)
              .agg(project=("project", "first"), session_id=("session_id", "first"),
                   started_at=("started_at", "min"), ended_at=("ended_at", "max"))
              .reset_index())
    agents["domain"] = None  # chosen from the contract by SprintSet.build
    agents["open_todos"] = [[] for _ in range(len(agents))]
    agents["loaded"] = None
    agents["released"] = None
    agents["seq"] = range(len(agents))
    refs = calls[["sprint_id", "agent", "path", "kind"]].drop_duplicates()
    return agents, refs
