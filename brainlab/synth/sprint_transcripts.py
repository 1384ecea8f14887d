"""The synthetic sprints as Claude Code transcripts (issue 4 §6; SPEC §7 sprints, §4.2-4.4).

:func:`write_sprint_transcripts` renders the plan of :mod:`brainlab.synth.sprints` (the same
sprints as its broker files and JSONL record) as one Claude Code session per sprint, run in the
project's repository (``cwd`` = the sprint's repo, so the session's project is the sprint's):

- the main chain prints the broker's inhale block (assistant text) before the sprint,
- launches one subagent per planned agent (``Task`` with ``subagent_type`` = the role; a
  ``subagents/agent-<id>.jsonl`` file and its ``.meta.json``), whose own Read / Grep / Edit /
  Write calls are exactly the files the agent references, with the plan's kinds,
- and prints the expire block after the last agent returns.

Project ``side-tool`` has no contract, so the broker does not route it (SPEC §4.1): its
sessions hold no blocks, and :mod:`brainlab.sim.transcript_sprints` makes one sprint per
session. Replays built from these transcripts alone find the planted four-file domain.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from brainlab.synth.files import BrainFiles, random_uuid
from brainlab.synth.sprints import PLANTED_DOMAIN, PROJECT, expire_text, inhale_text
from brainlab.synth.transcripts import SUB_MODEL, TranscriptWriter, put_session, tool_use

TOOLS = {"read": "Read", "search": "Grep", "edit": "Edit", "write": "Write"}


def _args(kind: str, path: str, domain: str) -> dict:
    if kind == "search":
        return {"pattern": domain, "path": path}
    if kind == "edit":
        return {"file_path": path, "old_string": "a", "new_string": "b"}
    if kind == "write":
        return {"file_path": path, "content": "test"}
    return {"file_path": path}


def sprint_session(sprint: dict, rng: random.Random) -> TranscriptWriter:
    """The main chain and subagent files of one planned sprint."""
    w = TranscriptWriter(None, rng, {}, cwd=sprint["repo"])
    start, end = sprint["started_at"], sprint["ended_at"]
    span = (end - start).total_seconds()
    routed = sprint["project"] == PROJECT  # SPEC §4.1: no contract, no broker output
    w.lines.append({**w.base("user", start),
                    "message": {"role": "user", "content": f"sprint {sprint['domain']}"}})
    context = 18_000
    if routed:
        w.lines += _text_call(w, start + timedelta(seconds=30), context, inhale_text(sprint))
    agents = sprint["agents"]
    for k, agent in enumerate(agents):
        at = start + timedelta(seconds=60 + (span - 120) * k / len(agents))
        context += rng.randint(2_000, 6_000)
        tool_id = w.next_id("toolu")
        role = agent["agent"]
        w.lines += w.call(at, context, 300, [tool_use(tool_id, "Task", subagent_type=role,
                                                   description=f"{role} {sprint['domain']}",
                                                   prompt=f"sprint {sprint['sprint']}")])
        agent_id = random_uuid(rng).replace("-", "")[:17]
        sub = []
        for j, ref in enumerate(agent["referenced"]):
            sub_at = at + timedelta(seconds=20 * (j + 1))
            sub_tool = w.next_id("toolu")
            path = f"{sprint['repo']}/{ref['path']}"
            sub += w.call(sub_at, 9_000 + 3_000 * j, rng.randint(100, 1_200),
                          [tool_use(sub_tool, TOOLS[ref["kind"]],
                                 **_args(ref["kind"], path, sprint["domain"]))],
                          agent=agent_id, model=SUB_MODEL)
            size = sprint["files"].get(ref["path"], 2_000) if ref["kind"] == "read" else 40
            sub.append(w.result(sub_at + timedelta(seconds=1), sub_tool, "c" * size,
                                agent=agent_id))
        w.sub_files[agent_id] = (role, sub)
        back = at + timedelta(seconds=20 * (len(agent["referenced"]) + 1))
        w.lines.append(w.result(back, tool_id, "done",
                                extra={"agentId": agent_id, "status": "completed"}))
    if routed:
        w.lines += _text_call(w, end - timedelta(seconds=30), context, expire_text(sprint))
    w.lines.append({**w.base("user", end), "message": {"role": "user", "content": "/exit"}})
    return w


def _text_call(w: TranscriptWriter, at: datetime, context: int, text: str) -> list[dict]:
    """A main-chain API call whose last content block is the broker's printed block."""
    return w.call(at, context, 400, [{"type": "text", "text": text}])


def write_sprint_transcripts(files: BrainFiles, plan: list[dict],
                             rng: random.Random) -> list[dict]:
    """Write one session per planned sprint under ``claude/projects``; return effects."""
    for sprint in plan:
        put_session(files, sprint_session(sprint, rng))
    billing = [s["sprint"] for s in plan if s["domain"] == PLANTED_DOMAIN]
    return [{
        "effect": "transcript-sprints: the broker's sprints run as Claude Code sessions",
        "where": f"{len(plan)} sessions in claude/projects/-home-dev-projects-*: inhale and "
                 "expire blocks in the main chain's text, one subagent per planned agent with "
                 "its own file calls; sprints rebuilt from these transcripts alone show the "
                 f"{PLANTED_DOMAIN} effect (protocol misses, history does not)",
        "sprints": billing,
    }]
