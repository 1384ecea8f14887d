"""Synthetic Claude Code transcripts for the synthetic brain's sessions (SPEC §7 formats).

Each planned session becomes ``claude/projects/<encoded-cwd>/<uuid>.jsonl`` with the lines
Claude Code writes: user prompts, assistant API calls written one line per content block
(same message id, requestId and usage; only the last line has the final output_tokens),
tool results, Reads of ``agents/<agent>.md`` for the agents the session loads (results as
large as the agent files), Task launches of the agents it uses with their subagent files
(``<uuid>/subagents/agent-<id>.jsonl`` + ``.meta.json``), Reads and Edits of the project
files of its sprint, ``git commit`` calls, a compaction when the context ran high, and the
boot reads and close sequence the protocol asks for (synth/boot_close_plants.py, issue 14).
The context size of the main chain follows the plan: it peaks at ``context_peak_pct`` and
ends at ``context_at_close`` of the 200k window, so transcript and metabolism log agree.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta

from brainlab.spec.thresholds import CONTEXT_WINDOW_TOKENS
from brainlab.synth import boot_close_plants as boot_close
from brainlab.synth.files import BrainFiles, random_uuid
from brainlab.synth.model import SynthSession, agent_sizes

WINDOW = CONTEXT_WINDOW_TOKENS
MAIN_MODEL = "claude-opus-4-5-20251101"
SUB_MODEL = "claude-sonnet-4-5-20250929"
VERSION = "2.0.42"


class TranscriptWriter:
    """Writes one session's lines, keeping ids and the clock consistent."""

    def __init__(self, s: SynthSession | None, rng: random.Random, sizes: dict[str, int],
                 cwd: str | None = None):
        self.s, self.rng, self.sizes = s, rng, sizes
        self.id = random_uuid(rng, version=4)
        self.cwd = cwd or (f"/home/user/projets/{s.project}" if s and s.project
                           else "/home/user/brain")
        self.lines: list[dict] = []
        self.sub_files: dict[str, tuple[str, list[dict]]] = {}
        self.n = 0

    def next_id(self, prefix: str) -> str:
        """The next id of this session (``<prefix>_<8 hex of the session><counter>``)."""
        self.n += 1
        return f"{prefix}_{self.id[:8]}{self.n:05d}"

    def base(self, kind: str, at: datetime, agent: str | None = None) -> dict:
        """The fields every line of this session carries (a subagent's when ``agent``)."""
        line = {"type": kind, "sessionId": self.id, "timestamp": _ts(at), "cwd": self.cwd,
                "version": VERSION, "uuid": random_uuid(self.rng),
                "isSidechain": agent is not None, "userType": "external"}
        if agent:
            line["agentId"] = agent
        return line

    def call(self, at: datetime, context: int, out: int, blocks: list[dict],
             agent: str | None = None, model: str = MAIN_MODEL) -> list[dict]:
        """One API call as Claude Code writes it: one line per content block."""
        msg, req = self.next_id("msg"), self.next_id("req")
        read = int(context * 0.9)
        write = context - read - 3
        lines = []
        blocks = [{"type": "text", "text": "Working on it."}, *blocks]
        for i, block in enumerate(blocks):
            last = i == len(blocks) - 1
            line = self.base("assistant", at + timedelta(milliseconds=300 * i), agent)
            line["requestId"] = req
            line["message"] = {
                "id": msg, "type": "message", "role": "assistant", "model": model,
                "content": [block], "stop_reason": "tool_use" if last else None,
                "usage": {"input_tokens": 3, "cache_creation_input_tokens": write,
                          "cache_read_input_tokens": read,
                          "cache_creation": {"ephemeral_5m_input_tokens": write,
                                             "ephemeral_1h_input_tokens": 0},
                          "output_tokens": out if last else min(out, 12),
                          "service_tier": "standard"}}
            lines.append(line)
        return lines

    def result(self, at: datetime, tool_id: str, content: str, agent: str | None = None,
               extra: dict | None = None) -> dict:
        """The user line carrying the result of tool call ``tool_id``."""
        line = self.base("user", at, agent)
        line["message"] = {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tool_id, "content": content}]}
        if extra:
            line["toolUseResult"] = extra
        return line


def _ts(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


def tool_use(tool_id: str, name: str, **args) -> dict:
    """A ``tool_use`` content block calling ``name`` with ``args``."""
    return {"type": "tool_use", "id": tool_id, "name": name, "input": args}


def session_lines(s: SynthSession, rng: random.Random, sizes: dict[str, int]) -> TranscriptWriter:
    """Build the main chain and subagent files of one session."""
    w = TranscriptWriter(s, rng, sizes)
    start, end = s.started_at, s.ended_at
    peak = max(6_000, s.context_peak_pct * WINDOW // 100)
    close = max(4_000, s.context_at_close * WINDOW // 100)
    # SPEC §2.7: type and mode declared in the first message (`brain <type> +<mode>`)
    w.lines.append({**w.base("user", start),
                    "message": {"role": "user", "content": f"brain {s.type} +{s.mode}"}})
    # boot: read the agents the session loads (the results are the agent files' size)
    steps: list[tuple[str, object]] = [("read", "/home/user/brain/KERNEL.md")]
    steps += [("read-agent", a) for a in s.agents_loaded]
    if s.project:
        steps += [("read", f"{w.cwd}/README.md"), ("read", f"/home/user/brain/todo/{s.project}.md")]
        steps += [("edit", f"{w.cwd}/src/module_{i}.py") for i in range(rng.randint(1, 4))]
    # the v2 inputs the log reports (SPEC §3.2), as the transcript shows them (issue 13)
    steps += [("edit", f"/home/user/brain/agents/{a}.md")
              for a in rng.sample(sorted(sizes), k=min(len(sizes), s.kernel_files_touched))]
    steps += [("write", f"/home/user/brain/decisions/ADR-{s.started_at:%m%d%H%M}-{i}.md")
              for i in range(s.adrs_written)]
    if s.todos_closed:
        steps += [("todos", s.todos_closed)]
    if s.insights_captured:
        steps += [("decisions", s.insights_captured)]
    steps += [("task", a) for a in s.agents_used]
    steps += [("commit", i) for i in range(s.commits)]
    steps += [("write", f"/home/user/brain/progression/metabolism/"
                        f"{s.started_at:%Y-%m-%d}-{s.sess_id}.md")]  # the scribe's log
    steps = boot_close.comply(s, steps)  # SPEC §2.3 boot layers, §2.4 close sequence
    boot_until = boot_close.boot_until(steps)  # boot ends at the first productive step
    n = len(steps)
    span = (end - start).total_seconds()
    peak_at = max(1, int(n * 0.8), boot_until + 1)
    compacted = s.context_peak_pct >= 80
    for i, (kind, what) in enumerate(steps, start=1):
        at = start + timedelta(seconds=span * i / (n + 1))
        if i <= peak_at:
            context = int(12_000 + (peak - 12_000) * i / peak_at)
        else:
            context = int(peak + (close - peak) * (i - peak_at) / max(1, n - peak_at))
        if i <= boot_until:  # boot stays under its context target (SPEC §2.3)
            context = min(context, boot_close.BOOT_CAP_TOKENS)
        if i == n:
            context = close
        if compacted and i == peak_at + 1:
            line = w.base("system", at - timedelta(seconds=1))
            line.update(subtype="compact_boundary", content="Conversation compacted",
                        compactMetadata={"trigger": "auto", "preTokens": peak})
            w.lines.append(line)
        tool_id = w.next_id("toolu")
        close_lines = boot_close.step_lines(w, kind, what, at, context, tool_id)
        if close_lines is not None:
            w.lines += close_lines
        elif kind == "read-agent":
            path = f"/home/user/brain/agents/{what}.md"
            w.lines += w.call(at, context, 60, [tool_use(tool_id, "Read", file_path=path)])
            w.lines.append(w.result(at + timedelta(seconds=2), tool_id,
                                    "x" * sizes.get(str(what), 2_000)))
        elif kind in ("read", "edit"):
            name = "Read" if kind == "read" else "Edit"
            args = {"file_path": what} if kind == "read" else {
                "file_path": what, "old_string": "a", "new_string": "b"}
            w.lines += w.call(at, context, rng.randint(80, 900), [tool_use(tool_id, name, **args)])
            w.lines.append(w.result(at + timedelta(seconds=2), tool_id, "ok " * 50))
        elif kind in ("write", "todos", "decisions"):
            w.lines += w.call(at, context, 200, [_v2_tool(tool_id, kind, what, w.cwd)])
            w.lines.append(w.result(at + timedelta(seconds=2), tool_id, "ok"))
        elif kind == "commit":
            command = f"git add -A && git commit -m 'sprint step {what + 1}'"
            w.lines += w.call(at, context, 120, [tool_use(tool_id, "Bash", command=command)])
            w.lines.append(w.result(at + timedelta(seconds=2), tool_id, "[main abc123] ok"))
        else:  # task: launch a subagent of the agent's name
            w.lines += w.call(at, context, 300, [tool_use(tool_id, "Task", subagent_type=what,
                                                       description=f"{what} step",
                                                       prompt="do the step")])
            agent_id = random_uuid(rng).replace("-", "")[:17]
            sub = []
            calls = rng.randint(2, 5)
            for k in range(calls):
                sub_at = at + timedelta(seconds=20 * (k + 1))
                sub_tool = w.next_id("toolu")
                target = f"{w.cwd}/src/module_{k}.py" if s.project else "/home/user/brain/KERNEL.md"
                sub += w.call(sub_at, 8_000 + 4_000 * k, rng.randint(100, 1_500),
                              [tool_use(sub_tool, "Read", file_path=target)], agent=agent_id,
                              model=SUB_MODEL)
                sub.append(w.result(sub_at + timedelta(seconds=1), sub_tool, "code " * 40,
                                    agent=agent_id))
            w.sub_files[agent_id] = (str(what), sub)
            back = min(at + timedelta(seconds=20 * (calls + 1)), end - timedelta(seconds=1))
            w.lines.append(w.result(max(back, at), tool_id, "done",
                                    extra={"agentId": agent_id, "status": "completed"}))
    w.lines.append({**w.base("user", end), "message": {"role": "user", "content": "/exit"}})
    return w


def folder_of(w: TranscriptWriter) -> str:
    """The project folder of a transcript (its cwd encoded as Claude Code does)."""
    return f"claude/projects/{w.cwd.replace('/', '-')}"


def put_session(files: BrainFiles, w: TranscriptWriter) -> None:
    """A session's main transcript and its subagent files (``.jsonl`` and ``.meta.json``)."""
    folder = folder_of(w)
    files.put_jsonl(f"{folder}/{w.id}.jsonl", w.lines)
    for agent_id, (agent_type, lines) in w.sub_files.items():
        files.put_jsonl(f"{folder}/{w.id}/subagents/agent-{agent_id}.jsonl", lines)
        files.put(f"{folder}/{w.id}/subagents/agent-{agent_id}.meta.json",
                  json.dumps({"agentType": agent_type}))


def write_transcripts(files: BrainFiles, sessions: list[SynthSession],
                      rng: random.Random, skip: set[str] | None = None) -> list[dict]:
    """A transcript per session under ``claude/projects``; return planted effects.

    ``skip``: sessions whose transcript is drawn (same RNG stream) but not written.
    """
    sizes = {a["agent"]: a["bytes"] for a in agent_sizes()}
    launched: dict[str, int] = {}
    for s in sessions:
        w = session_lines(s, rng, sizes)
        if skip and s.sess_id in skip:
            continue
        put_session(files, w)
        for agent_type, _lines in w.sub_files.values():
            launched[agent_type] = launched.get(agent_type, 0) + 1
    return [{
        "effect": "transcript-context: each transcript's main-chain context peaks at the"
                  " session's context_peak_pct and closes at its context_at_close",
        "where": "claude/projects/*/<uuid>.jsonl (cc_sessions vs sessions by started_at)",
    }, {
        "effect": "transcript-subagents: every agent a session uses runs as a subagent with"
                  " measured cost",
        "where": f"{sum(launched.values())} subagent files of {len(launched)} agent types",
    }]


def _v2_tool(tool_id: str, kind: str, what, cwd: str) -> dict:
    """A Write, a TodoWrite with ``what`` items completed, or ``what`` workspace decisions."""
    if kind == "write":
        return tool_use(tool_id, "Write", file_path=what, content="# written\n")
    if kind == "todos":
        return tool_use(tool_id, "TodoWrite", todos=[
            {"content": f"step {i + 1}", "status": "completed", "activeForm": "working"}
            for i in range(what)])
    lines = "".join(f"2026-01-01 10:0{i % 10} | option {i}? | choisi : a | raison : b\n"
                    for i in range(what))
    return tool_use(tool_id, "Edit", file_path="/home/user/brain/workspace/explore-s1/log.md",
                 old_string="", new_string=lines)
