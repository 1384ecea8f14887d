"""Boot, close and read-rights behaviour of the synthetic transcripts (issue 14, SPEC §2.3-§2.4, §5).

Two halves. :func:`comply` and :func:`step_lines` make every synthetic brain session follow
the protocol by default, so the transcript rules (store/models/rules/rule_rows_boot_close.sql) find nothing
unplanted: it reads its layer-0 files before working, reads project files at boot only in
work/deploy/debug sessions, boots under its context target, and closes in the order of
seeds/session-orchestrator.md.txt:291-379 (trigger prompt, metabolism-scribe, todo-scribe,
scribe, coach, then the claim). Then one registered plant per rule changes a rendered
transcript in memory the way a careless session would, each in a session no other plant
changed, and returns its manifest entry.
"""

from __future__ import annotations

import json
import random
import re
import uuid
from datetime import datetime, timedelta

from brainlab.spec.session_types import COACH_TYPES, PROJECT_LAYER_TYPES, TODO_SCRIBE_TYPES
from brainlab.spec.thresholds import CONTEXT_WINDOW_TOKENS
from brainlab.synth.files import BrainFiles, workspace_decisions
from brainlab.synth.model import SynthSession
from brainlab.synth.registry import SynthContext, entry, plant

BRAIN = "/home/user/brain"
CLOSE_PROMPT = "on wrappe"  # seeds/session-orchestrator.md.txt:291, a close trigger
BOOT_CAP_TOKENS = 24_000  # 12% of 200k: under every synthetic context's total_boot (>= 18%)
L3_TYPES = PROJECT_LAYER_TYPES  # SPEC §2.3 layer 3 (projets/X + todo/X)
TODO_TYPES = TODO_SCRIBE_TYPES  # SPEC §2.4 step 2
_PROJECT_FILE = re.compile(r"(^|/)(projets|todo)/[^/]+\.md$")
_BOOKKEEPING = re.compile(r"(^|/)(claims/[^/]+\.ya?ml$|BRAIN-INDEX\.md$|focus\.md$|now\.md$"
                          r"|progression/|handoffs/|todo/)")


def comply(s: SynthSession, steps: list[tuple[str, object]]) -> list[tuple[str, object]]:
    """The session's planned steps, made compliant with the boot layers and close sequence.

    ``steps`` ends with the metabolism-scribe's log write; the result reads PATHS.md first
    (L0; KERNEL.md is already read), drops boot reads of project files outside work/deploy/
    debug, and wraps the log write in the close sequence of SPEC §2.4.
    """
    *work, log_write = steps
    work = [st for st in work if not (st[0] == "read" and s.type not in L3_TYPES
                                      and _PROJECT_FILE.search(str(st[1])))]
    close: list[tuple[str, object]] = [("close-start", "metabolism-scribe"), log_write]
    if s.type in TODO_TYPES:
        close.append(("launch", "todo-scribe"))
    if s.commits:  # significant: at least one commit (SPEC §2.4 step 3)
        close.append(("launch", "scribe"))
    if s.type in COACH_TYPES:
        close.append(("launch", "coach"))
    close.append(("edit", f"{BRAIN}/claims/{s.sess_id}.yml"))  # BSI claim close, last
    return [("read", f"{BRAIN}/PATHS.md"), *work, *close]


def boot_until(steps: list[tuple[str, object]]) -> int:
    """1-based index of the first productive step (an edit or commit of real work), else 0."""
    for i, (kind, what) in enumerate(steps, start=1):
        if kind == "commit" or kind == "decisions" or (
                kind in ("edit", "write") and not _BOOKKEEPING.search(str(what))):
            return i
    return 0


def step_lines(w, kind: str, what, at: datetime, context: int, tool_id: str) -> list | None:
    """The lines of a close step (``close-start``, ``launch``), or None for any other kind.

    A close agent is launched as a Task whose own lines are not written (no subagent file):
    its cost is not part of the plan the other planted effects measure.
    """
    if kind not in ("close-start", "launch"):
        return None
    lines = []
    if kind == "close-start":
        lines.append({**w.base("user", at - timedelta(seconds=5)),
                      "message": {"role": "user", "content": CLOSE_PROMPT}})
    lines += w.call(at, context, 150, [{"type": "tool_use", "id": tool_id, "name": "Task",
                                        "input": {"subagent_type": what,
                                                  "description": f"{what} close step",
                                                  "prompt": "close the session"}}])
    lines.append(w.result(at + timedelta(seconds=2), tool_id, "done"))
    return lines


# --- plants: one breach per rule, each in a session no other plant changed ---------------

def _pool(ctx: SynthContext) -> tuple[list[SynthSession], dict[str, str]]:
    """Sessions with both a log and a main transcript, and those transcripts by start time."""
    mains = _transcripts(ctx.files)
    logged = {p.rsplit("/", 1)[-1][11:-3] for p in ctx.files.glob("progression/metabolism/*.md")}
    return [s for s in ctx.sessions if s.sess_id in logged and _key(s) in mains], mains


def _break(ctx: SynthContext, test, change_for) -> SynthSession | None:
    """Pick the first unpicked session passing ``test``; apply ``change_for(s)`` to it."""
    pool, mains = _pool(ctx)
    s = next((s for s in pool if s.sess_id not in ctx.picked and test(s)), None)
    if s is None:
        return None
    ctx.picked.add(s.sess_id)  # taken even when the change does not apply, as always
    return s if _edit(ctx.files, mains[_key(s)], change_for(s)) else None


def _contexts(ctx: SynthContext) -> set[str]:
    return {p.rsplit("/", 1)[-1][len("session-"):-len(".yml")]
            for p in ctx.files.glob("contexts/session-*.yml")}


@plant("boot-without-paths", stage="files", after=("feedback-read",),
       spec="§2.3", rules=("BOT001",),
       plants="a session working without reading PATHS.md (layer 0) at boot")
def boot_without_paths(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """BOT001: the boot's Read of PATHS.md becomes a text block."""
    has_context = _contexts(ctx)
    s = _break(ctx, lambda s: s.type in has_context, lambda s: _drop_read("/PATHS.md"))
    return [_entry("a session works without reading PATHS.md (layer 0) at boot", s,
                   "BOT001")] if s else []


@plant("boot-reads-project", stage="files", after=("boot-without-paths",),
       spec="§2.3", rules=("BOT002",),
       plants="a session without a project layer reading projets/cipherbox.md at boot")
def boot_reads_project(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """BOT002: a second Read beside the boot's KERNEL.md read."""
    has_context = _contexts(ctx)
    s = _break(ctx, lambda s: s.type in has_context and s.type not in L3_TYPES
               and not s.project, lambda s: _extra_read(f"{BRAIN}/projets/cipherbox.md"))
    return [_entry(f"a {s.type} session reads projets/cipherbox.md at boot", s,
                   "BOT002")] if s else []


@plant("boot-at-peak", stage="files", after=("boot-reads-project",),
       spec="§2.3", rules=("BOT003",),
       plants="a session whose boot ends at its context peak, over its context target")
def boot_at_peak(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """BOT003: the first productive request carries the session's peak context."""
    targets = _targets(ctx.files)
    s = _break(ctx, lambda s: s.type in targets and _has_productive_step(s)
               and s.context_peak_pct > targets[s.type] + 15, _boot_at_peak)
    return [_entry(f"a session boots at its peak ({s.context_peak_pct}% of the context, "
                   f"target ~{targets[s.type]}%)", s, "BOT003")] if s else []


@plant("close-todo-first", stage="files", after=("boot-at-peak",),
       spec="§2.4", rules=("CLO003",),
       plants="a close running the todo-scribe before the metabolism-scribe")
def close_todo_first(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """CLO003: the two close launches trade inputs."""
    s = _break(ctx, lambda s: s.type in TODO_TYPES,
               lambda s: _swap_launches("metabolism-scribe", "todo-scribe"))
    return [_entry("the todo-scribe runs before the metabolism-scribe", s,
                   "CLO003")] if s else []


def _skips(ctx: SynthContext, rule: str, agent: str, test) -> list[dict]:
    s = _break(ctx, test, lambda s: _drop_launch(agent))
    return [_entry(f"the close skips the {agent}", s, rule)] if s else []


@plant("close-skips-todo-scribe", stage="files", after=("close-todo-first",),
       spec="§2.4", rules=("CLO004",),
       plants="a close without its todo-scribe")
def close_skips_todo_scribe(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """CLO004: the todo-scribe launch becomes a text block."""
    return _skips(ctx, "CLO004", "todo-scribe", lambda s: s.type in TODO_TYPES)


@plant("close-skips-scribe", stage="files", after=("close-skips-todo-scribe",),
       spec="§2.4", rules=("CLO005",),
       plants="a significant session's close without its scribe")
def close_skips_scribe(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """CLO005: the scribe launch of a session with commits becomes a text block."""
    return _skips(ctx, "CLO005", "scribe", lambda s: s.commits > 0)


@plant("close-skips-coach", stage="files", after=("close-skips-scribe",),
       spec="§2.4", rules=("CLO006",),
       plants="a close without its coach")
def close_skips_coach(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """CLO006: the coach launch becomes a text block."""
    return _skips(ctx, "CLO006", "coach", lambda s: s.type in COACH_TYPES)


@plant("claim-before-coach", stage="files", after=("close-skips-coach",),
       spec="§2.4", rules=("CLO007",),
       plants="the BSI claim closed before the coach's report")
def claim_before_coach(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """CLO007: the claim's Edit and the last close launch trade places."""
    s = _break(ctx, lambda s: s.type in COACH_TYPES, lambda s: _claim_before_last_agent)
    return [_entry("the BSI claim is closed before the coach's report", s,
                   "CLO007")] if s else []


def _has_productive_step(s: SynthSession) -> bool:
    """Whether the session has a productive step (only those have a boot context to judge)."""
    return bool(s.project or s.kernel_files_touched or s.adrs_written or s.commits
                or s.insights_captured)


def _entry(effect: str, s: SynthSession, rule: str) -> dict:
    return entry(f"compliance: {effect}", s.sess_id, [(rule, s.sess_id)])


def _key(s: SynthSession) -> str:
    return s.started_at.strftime("%Y-%m-%dT%H:%M:%S")


def _transcripts(files: BrainFiles) -> dict[str, str]:
    """Main transcript files of the brain's sessions, by their first line's timestamp."""
    found = {}
    for path in files.glob("claude/projects/*/*.jsonl"):
        first = json.loads(files.text(path).split("\n", 1)[0])
        content = first.get("message", {}).get("content")
        if isinstance(content, str) and content.startswith("brain "):
            found[first["timestamp"][:19]] = path
    return found


def _targets(files: BrainFiles) -> dict[str, float]:
    targets = {}
    for path in files.glob("contexts/session-*.yml"):
        match = re.search(r"total_boot: \"~(\d+)%\"", files.text(path))
        if match:
            targets[path.rsplit("/", 1)[-1][len("session-"):-len(".yml")]] = \
                float(match.group(1))
    return targets


def _edit(files: BrainFiles, path: str, change) -> bool:
    """Apply ``change(lines) -> lines | None`` to a JSONL transcript; False when it could not."""
    changed = change(files.jsonl(path))
    if changed is None:
        return False
    files.put_jsonl(path, changed)
    return True


def _tool_use(line: dict) -> dict | None:
    content = line.get("message", {}).get("content") if line.get("type") == "assistant" else None
    if isinstance(content, list) and content and content[0].get("type") == "tool_use":
        return content[0]
    return None


def _calls(lines: list[dict], test) -> list[int]:
    return [i for i, line in enumerate(lines) if (block := _tool_use(line)) and test(block)]


def _launch(agent: str):
    return lambda b: b["name"] == "Task" and b["input"].get("subagent_type") == agent


def _skip_call(lines: list[dict], i: int) -> list[dict]:
    """The call at ``i`` becomes a text block (same usage), and its tool result goes."""
    tool_id = _tool_use(lines[i])["id"]
    lines[i]["message"]["content"] = [{"type": "text", "text": "(step skipped)"}]
    return [line for line in lines if not _is_result_of(line, tool_id)]


def _is_result_of(line: dict, tool_id: str) -> bool:
    content = line.get("message", {}).get("content") if line.get("type") == "user" else None
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("tool_use_id") == tool_id for b in content)


def _drop_read(suffix: str):
    def change(lines):
        found = _calls(lines, lambda b: b["name"] == "Read"
                       and b["input"].get("file_path", "").endswith(suffix))
        return _skip_call(lines, found[0]) if found else None
    return change


def _drop_launch(agent: str):
    def change(lines):
        found = _calls(lines, _launch(agent))
        return _skip_call(lines, found[-1]) if found else None
    return change


def _extra_read(path: str):
    """A second Read in the boot's KERNEL.md message (one line per block, SPEC §7)."""
    def change(lines):
        found = _calls(lines, lambda b: b["name"] == "Read"
                       and b["input"].get("file_path", "").endswith("/KERNEL.md"))
        if not found:
            return None
        i = found[0]
        tool_id = _tool_use(lines[i])["id"] + "p"
        extra = json.loads(json.dumps(lines[i]))
        extra["uuid"] = str(uuid.uuid5(uuid.NAMESPACE_URL, path + tool_id))
        extra["message"]["content"] = [{"type": "tool_use", "id": tool_id, "name": "Read",
                                        "input": {"file_path": path}}]
        extra["message"]["usage"]["output_tokens"] = 12  # not the message's last line
        result = {**lines[i + 1], "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, tool_id)),
                  "message": {"role": "user", "content": [
                      {"type": "tool_result", "tool_use_id": tool_id, "content": "# project"}]}}
        return [*lines[:i], extra, *lines[i:i + 2], result, *lines[i + 2:]]
    return change


def _boot_at_peak(s: SynthSession):
    """The request of the first productive action carries the session's peak context."""
    peak = max(6_000, s.context_peak_pct * CONTEXT_WINDOW_TOKENS // 100)

    def change(lines):
        productive = _calls(lines, lambda b: b["name"] in ("Edit", "Write")
                            and not _BOOKKEEPING.search(b["input"].get("file_path", ""))
                            or b["name"] == "Bash")
        if not productive:
            return None
        message_id = lines[productive[0]]["message"]["id"]
        for line in lines:
            if line.get("type") == "assistant" and line["message"].get("id") == message_id:
                usage = line["message"]["usage"]
                usage["cache_read_input_tokens"] = int(peak * 0.9)
                usage["cache_creation_input_tokens"] = peak - int(peak * 0.9) - 3
                usage["cache_creation"]["ephemeral_5m_input_tokens"] = \
                    usage["cache_creation_input_tokens"]
        return lines
    return change


def _swap_launches(first: str, second: str):
    def change(lines):
        a, b = _calls(lines, _launch(first)), _calls(lines, _launch(second))
        if not a or not b:
            return None
        block_a, block_b = _tool_use(lines[a[-1]]), _tool_use(lines[b[-1]])
        block_a["input"], block_b["input"] = block_b["input"], block_a["input"]
        return lines
    return change


def _claim_before_last_agent(lines: list[dict]) -> list[dict] | None:
    """The claim's Edit and the last close launch trade places (inputs and tools swapped)."""
    claim = _calls(lines, lambda b: b["name"] == "Edit" and "/claims/" in b["input"].get(
        "file_path", ""))
    last = _calls(lines, lambda b: b["name"] == "Task" and b["input"].get("subagent_type") in (
        "todo-scribe", "scribe", "coach"))
    if not claim or not last:
        return None
    block_c, block_l = _tool_use(lines[claim[-1]]), _tool_use(lines[last[-1]])
    (block_c["name"], block_c["input"]), (block_l["name"], block_l["input"]) = \
        (block_l["name"], block_l["input"]), (block_c["name"], block_c["input"])
    return lines


@plant("coach-scribe-early", stage="files", after=("claim-before-coach",),
       spec="§5",
       rules=("WSP010", "WSP011"),
       plants="a coach-scribe reading ram.md, then feedback.md before the workspace's TTL")
def coach_scribe_early(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """WSP010, WSP011: a close launches a coach-scribe that reads the workspace too early."""
    files = ctx.files
    pool, mains = _pool(ctx)
    for workspace in files.folders("workspace"):
        days = workspace_decisions(files, workspace)
        readme = f"workspace/{workspace}/README.md"
        if not days or not files.exists(readme):
            continue
        last = max(days)
        ttl_found = re.search(r"(?m)^ttl: (\d+)d", files.text(readme))
        ttl = int(ttl_found.group(1)) if ttl_found else 7
        s = next((s for s in pool if s.sess_id not in ctx.picked
                  and last < s.started_at.date() < last + timedelta(days=ttl - 1)), None)
        if s is None:
            continue
        path = mains[_key(s)]
        agent_id = uuid.uuid5(uuid.NAMESPACE_URL, s.sess_id + "coach-scribe").hex[:17]
        if not _edit(files, path, _launch_coach_scribe(agent_id)):
            continue
        ctx.picked.add(s.sess_id)
        _put_coach_scribe(files, path, agent_id, workspace)
        return [{"effect": "compliance: the coach-scribe reads ram.md, then feedback.md before "
                           "the TTL (needs the transcripts: --db)",
                 "where": f"{s.sess_id} on {workspace}",
                 "violations": [{"rule": "WSP010", "subject": workspace},
                                {"rule": "WSP011", "subject": workspace}],
                 "planted_subagents": [{"started_at": _key(s)[:16].replace("T", " "),
                                        "agent": "coach-scribe"}]}]
    return []


def _launch_coach_scribe(agent_id: str):
    """A Task launch of the coach-scribe, as a second block of the close-start message."""
    def change(lines):
        found = _calls(lines, _launch("metabolism-scribe"))
        if not found:
            return None
        i = found[0]
        tool_id = _tool_use(lines[i])["id"] + "c"
        extra = json.loads(json.dumps(lines[i]))
        extra["uuid"] = str(uuid.uuid5(uuid.NAMESPACE_URL, agent_id))
        extra["message"]["content"] = [{"type": "tool_use", "id": tool_id, "name": "Task",
                                        "input": {"subagent_type": "coach-scribe",
                                                  "description": "workspace feedback",
                                                  "prompt": "review the sprint"}}]
        extra["message"]["usage"]["output_tokens"] = 12
        result = {**lines[i + 1], "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, tool_id)),
                  "message": {"role": "user", "content": [
                      {"type": "tool_result", "tool_use_id": tool_id, "content": "done"}]},
                  "toolUseResult": {"agentId": agent_id, "status": "completed"}}
        self_ts = lines[i]["timestamp"]
        result["timestamp"] = self_ts
        return [*lines[:i], extra, *lines[i:i + 2], result, *lines[i + 2:]]
    return change


def _put_coach_scribe(files: BrainFiles, main: str, agent_id: str, workspace: str) -> None:
    """The coach-scribe's own transcript: two Reads, ram.md then feedback.md."""
    main_lines = files.text(main).splitlines()
    first = json.loads(main_lines[0])
    launch = next(json.loads(t) for t in main_lines if '"coach-scribe"' in t)
    at = datetime.fromisoformat(launch["timestamp"].replace("Z", "+00:00"))
    lines = []
    for k, section in enumerate(("ram", "feedback")):
        when = (at + timedelta(seconds=1 + k)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        base = {"sessionId": first["sessionId"], "timestamp": when, "cwd": first["cwd"],
                "isSidechain": True, "agentId": agent_id, "userType": "external"}
        tool_id = f"toolu_cs_{agent_id}_{k}"
        lines.append({**base, "type": "assistant", "uuid": f"{agent_id}-a{k}",
                      "requestId": f"req_cs_{agent_id}_{k}", "message": {
                          "id": f"msg_cs_{agent_id}_{k}", "type": "message",
                          "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                          "content": [{"type": "tool_use", "id": tool_id, "name": "Read",
                                       "input": {"file_path": f"{BRAIN}/workspace/{workspace}/"
                                                              f"{section}.md"}}],
                          "usage": {"input_tokens": 3, "cache_creation_input_tokens": 2_000,
                                    "cache_read_input_tokens": 6_000, "output_tokens": 80}}})
        lines.append({**base, "type": "user", "uuid": f"{agent_id}-u{k}", "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id,
                                         "content": "- notes"}]}})
    folder = f"{main.removesuffix('.jsonl')}/subagents"
    files.put_jsonl(f"{folder}/agent-{agent_id}.jsonl", lines)
    files.put(f"{folder}/agent-{agent_id}.meta.json", json.dumps({"agentType": "coach-scribe"}))
