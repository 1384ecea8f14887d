"""Sprints from Claude Code transcripts (SPEC §7, §4.4): tool calls grouped into sprints.

Reads the transcript tables (``cc_tool_calls``, ``cc_requests``) when they exist. A sprint is
a span of a session between a context-broker inhale block and the next expire block of the
same sprint name (blocks found in the transcript are stored in ``broker_blocks`` with their
``session_id`` and ``ts``); a session with no such block is one sprint per session and project
(sprint_id = ``<session_id>`` or ``<session_id>:<project>``). Each subagent is an agent (its
``subagent_type``, else ``agent-<id>``; the main chain is ``main``) and its referenced files come
from its own Read/Grep/Glob/Edit/MultiEdit/Write/NotebookEdit calls. The blocks are written
at transcript parse time by :mod:`brainlab.transcripts.broker`; a sprint cut by them also
gets the broker's recorded source and release maps (``broker_recorded_loads`` / ``_releases``).
:func:`drop_recorded` keeps a sprint that a JSONL record also describes from counting twice.
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
WHERE {{known}} {{where}}
ORDER BY started_at NULLS LAST, sprint_id, ts, agent, path, kind
"""


def has_tables(con: duckdb.DuckDBPyConnection, *names: str) -> bool:
    """Whether every relation (table or view) in ``names`` exists."""
    found = {r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' UNION ALL "
        "SELECT view_name FROM duckdb_views() WHERE schema_name = 'main'").fetchall()}
    return set(names) <= found


def transcript_inputs(con: duckdb.DuckDBPyConnection, project: str | None = None,
                      unknown_project: bool = False
                      ) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """(agents, refs) frames for SprintSet.build, or None when no transcript tables exist.

    ``unknown_project``: also the sessions no project was detected for (project NULL), which
    the broker's scope counts as skipped (``no identified project``).
    """
    if not has_tables(con, "cc_tool_calls", "cc_requests"):
        return None
    where = "AND project = ?" if project else ""
    known = "true" if unknown_project and not project else "project IS NOT NULL"
    calls = con.execute(TRANSCRIPT_SPRINTS_SQL.format(where=where, known=known),
                        [project] if project else []).df()
    if calls.empty:
        return None
    agents = (calls.groupby(["sprint_id", "agent"], sort=False)
              .agg(project=("project", "first"), session_id=("session_id", "first"),
                   started_at=("started_at", "min"), ended_at=("ended_at", "max"))
              .reset_index())
    agents["domain"] = None  # chosen from the contract by SprintSet.build
    agents["open_todos"] = [[] for _ in range(len(agents))]
    agents["loaded"], agents["released"] = _recorded(con, agents)
    agents["seq"] = range(len(agents))
    refs = calls[["sprint_id", "agent", "path", "kind"]].drop_duplicates()
    return agents, refs


def _recorded(con: duckdb.DuckDBPyConnection, agents: pd.DataFrame) -> tuple[list, list]:
    """What the broker's blocks recorded (SPEC §4.2 source map, §4.3 release map) per row.

    A sprint cut by broker blocks has them in ``broker_recorded_loads`` / ``_releases`` under
    its name: an agent of its source map gets its list, an agent missing there ``[]`` (loaded
    nothing); sprints without blocks (one per session) stay unknown (None).
    """
    unknown = [None] * len(agents)
    if not has_tables(con, "broker_recorded_loads", "broker_recorded_releases"):
        return unknown, list(unknown)
    names = sorted(set(agents["sprint_id"]))
    loads = {(s, a): list(v) for s, a, v in con.execute(
        "SELECT sprint_id, agent, loaded FROM broker_recorded_loads"
        " WHERE list_contains(?, sprint_id)", [names]).fetchall()}
    releases = {s: list(v) for s, v in con.execute(
        "SELECT sprint_id, released FROM broker_recorded_releases"
        " WHERE list_contains(?, sprint_id)", [names]).fetchall()}
    mapped = {s for s, _ in loads}
    loaded = [loads.get((s, a), [] if s in mapped else None)
              for s, a in zip(agents["sprint_id"], agents["agent"], strict=True)]
    released = [releases.get(s) for s in agents["sprint_id"]]
    return loaded, released


def drop_recorded(t_agents: pd.DataFrame, recorded: pd.DataFrame) -> pd.DataFrame:
    """Transcript agent rows of sprints the sprint records do not already describe.

    A record describes a transcript sprint when it has the same sprint name (a span cut by
    broker blocks), or the same project and an overlapping [started_at, ended_at] (a session
    without blocks, whose id the record cannot know): the record wins, nothing counts twice.
    """
    keep = ~t_agents["sprint_id"].isin(recorded["sprint_id"])
    spans = recorded.dropna(subset=["project", "started_at", "ended_at"])
    if spans.empty or t_agents.empty:
        return t_agents[keep]
    spans = spans.groupby(["sprint_id", "project"], as_index=False).agg(
        r_start=("started_at", "min"), r_end=("ended_at", "max"))
    mine = t_agents[["sprint_id", "project", "started_at", "ended_at"]].drop_duplicates(
        "sprint_id")
    pairs = mine.merge(spans[["project", "r_start", "r_end"]], on="project")
    start = pd.to_datetime(pairs["started_at"])
    end = pd.to_datetime(pairs["ended_at"])
    hit = (start <= pd.to_datetime(pairs["r_end"])) & (end >= pd.to_datetime(pairs["r_start"]))
    covered = set(pairs.loc[hit, "sprint_id"])
    return t_agents[keep & ~t_agents["sprint_id"].isin(covered)]
