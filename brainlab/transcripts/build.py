"""The one row builder: a typed transcript line into rows, whichever decoder read it.

A transcript tree is ``projects/<encoded-cwd>/<session>.jsonl`` with subagents either inline
(``isSidechain`` lines), in ``<session>/subagents/agent-<id>.jsonl`` (+ ``.meta.json``), in
older project-level ``agent-<id>.jsonl`` files, or nested in ``progress`` lines of the parent.
Both decoders (:mod:`~brainlab.transcripts.fast`, :mod:`~brainlab.transcripts.tolerant`) hand
their typed lines to :func:`line_rows`, so a line gives the same rows whichever decoded it.

Kept per line (SPEC §7): request candidates (usage, before the global deduplication, which
is a view), tool calls (tool, path, pattern, a redacted and truncated command), tool result
sizes, subagent links, compactions, per-session time spans, ``cc_marks`` rows
(:mod:`~brainlab.transcripts.marks`) and context-broker blocks
(:mod:`~brainlab.transcripts.broker`). Prompts, file contents and command output are never
kept. The hottest helpers (ids, timestamps, kept strings) are memo lookups inline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import orjson

from brainlab.sources.redact import redact_truncate
from brainlab.spec.commits import GIT_COMMIT, is_git_commit  # noqa: F401  (GIT_COMMIT re-exported)
from brainlab.transcripts import broker, discovery, marks
from brainlab.transcripts.line import Block, Input, Line, Message, Result, Usage
from brainlab.transcripts.values import (
    DAYS,
    GENERATED_ID,
    IDENTS,
    MISSING,
    SOURCE,
    UNDATED,
    UTC_TEXT,
    checked_ts,
    ident,
    kept,
    memo,
    shown,
    size,
    text,
    to_utc,
    tokens,
)

COMMAND_CHARS = 200  # Bash commands are kept redacted and cut to this many characters
# Line types Claude Code writes that brainlab reads or deliberately ignores. Anything else is
# kept as a warning (one per type and file), never a crash.
KNOWN_TYPES = frozenset({
    "user", "assistant", "system", "summary", "progress", "attachment", "file-history-snapshot",
    "file-history-delta", "queue-operation", "last-prompt", "mode", "permission-mode",
    "ai-title", "bridge-session", "fork-context-ref", "pr-link", "custom-title", "tag",
    "result", "init",
})
FILE_TOOLS = {"Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "NotebookRead"}
SEARCH_TOOLS = {"Grep", "Glob", "LS"}
LAUNCH_TOOLS = {"Task", "Agent"}
MARKED_TOOLS = {"TodoWrite", "TaskCreate", "TaskUpdate", "Edit", "Write", "MultiEdit"}
REQUEST_COLUMNS = (
    "session_id", "agent_id", "request_id", "message_id", "model", "ts", "input_tokens",
    "output_tokens", "cache_creation_tokens", "cache_creation_5m_tokens",
    "cache_creation_1h_tokens", "cache_read_tokens", "speed", "is_nested", "cwd",
    "reported_cost_usd", "git_branch", "plugin", "skill", "source_file", "line")
TOOL_CALL_COLUMNS = (
    "session_id", "agent_id", "ts", "tool", "tool_use_id", "file_path", "pattern",
    "launched_subagent_type", "command", "is_git_commit", "source_file", "line")
TOOL_RESULT_COLUMNS = (
    "session_id", "agent_id", "tool_use_id", "ts", "result_bytes", "is_error", "source_file",
    "line")
COMPACTIONS = ("compact_boundary", "microcompact_boundary")
_AGENT_FILE = re.compile(r"^agent-(.+)\.jsonl$")
_MODELS: dict = {}  # kept(model, 80), read once per request
_CWDS: dict = {}  # kept(cwd, 300)
_SPEEDS: dict = {}  # kept(speed, 40)
_BRANCHES: dict = {}  # kept(gitBranch, 200)
_ATTRIBUTIONS: dict = {}  # kept(attributionPlugin / attributionSkill, 200)
SYNTHETIC = "<synthetic>"  # the model of a message Claude Code made itself: no API call
ADVISOR = "advisor_message"  # the usage.iterations type of an advisor call (issue 45 rule 1)
NO_ATTRIBUTION = (None, None, None)  # (plugin, skill, advisorModel) of a line naming none
_NAMES: dict = {}  # kept(tool name, 80)
_RAW_LINK = object()  # marks a (session, agent, parentToolUseID as written) key in links_seen


@dataclass(frozen=True)
class FileContext:
    """What a file's place in the tree says about its lines (used when a line does not say)."""

    path: str
    session_id: str | None  # from the file name (main file, or the folder of subagents/)
    agent_id: str | None  # from agent-<id>.jsonl
    layout: str  # main | subagent | project-agent

    @classmethod
    def of(cls, path: Path) -> FileContext:
        """Derive session and agent from the path, following every subagent layout.

        A line without ``sessionId`` takes :func:`discovery.fallback_session` (rule 5). A
        workflow's subagents (``<session>/subagents/workflows/<wf>/agent-<id>.jsonl``, issue
        45 rule 5) are subagent files of that session, with their ``.meta.json`` beside them.
        """
        match = _AGENT_FILE.match(path.name)
        if match and path.parent.name == "subagents":
            return cls(str(path), discovery.fallback_session(path.parent.parent),
                       match.group(1), "subagent")
        if match and len(path.parents) > 3 and path.parents[1].name == "workflows" \
                and path.parents[2].name == "subagents":
            return cls(str(path), discovery.fallback_session(path.parents[3]),
                       match.group(1), "subagent")
        if match:
            return cls(str(path), None, match.group(1), "project-agent")
        return cls(str(path), discovery.fallback_session(path.with_suffix("")), None, "main")


@dataclass
class Chunk:
    """Rows and errors parsed from a run of complete lines of one file."""

    # the three high-volume tables hold tuples in the table's column order (*_COLUMNS)
    requests: list[tuple] = field(default_factory=list)
    tool_calls: list[tuple] = field(default_factory=list)
    tool_results: list[tuple] = field(default_factory=list)
    agent_links: list[dict] = field(default_factory=list)
    compactions: list[dict] = field(default_factory=list)
    spans: dict[tuple, list] = field(default_factory=dict)  # see span_rows()
    errors: list[dict] = field(default_factory=list)
    unknown_types: set[str] = field(default_factory=set)
    broker: dict[str, list[dict]] = field(default_factory=dict)  # broker's table rows
    marks: list[tuple] = field(default_factory=list)  # cc_marks rows (marks)
    # the progress-line links already kept in this read of the file (one row per link)
    links_seen: set[tuple] = field(default_factory=set)

    def error(self, file: str, line: int | None, reason: str, severity: str = "error") -> None:
        """Record one problem as an ``ingest_errors`` row."""
        self.errors.append({"file": file, "line": line, "reason": reason, "source": SOURCE,
                            "severity": severity})


def line_rows(line: Line, ctx: FileContext, line_no: int, chunk: Chunk, tools=(),
              nested_blocks: list[Block] | None = None, meta=None) -> None:
    """Add the rows of one typed line to ``chunk`` (the one row builder of both decoders).

    ``tools``: (Input, whole input dict or None) of each tool_use block of the assistant
    message (or of a progress line's nested one), in order; ``nested_blocks``: a progress
    line's nested content list; ``meta``: a compaction's metadata, decoded.
    """
    value = line.sessionId  # ident() of session and agent, memoised: they repeat on every line
    if value.__class__ is str:
        session_id = IDENTS.get(value, MISSING)
        if session_id is MISSING:
            session_id = ident(value)
        session_id = session_id or ctx.session_id
    else:  # absent, or not a string (the tolerant decoder hands it over as found)
        session_id = ctx.session_id
    value = line.agentId
    if value.__class__ is str:
        agent_id = IDENTS.get(value, MISSING)
        if agent_id is MISSING:
            agent_id = ident(value)
        agent_id = agent_id or ctx.agent_id
    else:
        agent_id = ctx.agent_id
    if agent_id is None and line.isSidechain is True:
        agent_id = "sidechain"  # older inline subagent lines name no agent
    # checked_ts() and to_utc(): a ...Z timestamp of a day already seen valid costs a match
    ts_text = line.timestamp
    if ts_text is None:
        ts = None
    elif ts_text.__class__ is str and UTC_TEXT(ts_text) and DAYS.get(ts_text[:10]) == 0:
        ts = ts_text[:-1]
    else:
        ts_text = checked_ts(ts_text, ctx, line_no, chunk)
        ts = to_utc(ts_text)
    cwd = line.cwd
    if session_id is not None:  # widen the (session, agent) span by one line
        key = (session_id, agent_id)
        span = chunk.spans.get(key)
        if span is None:
            span = chunk.spans[key] = [None, None, 0, None, ctx.path]
        span[2] += 1
        if ts_text:
            if span[0] is None or ts_text < span[0]:
                span[0] = ts_text
            if span[1] is None or ts_text > span[1]:
                span[1] = ts_text
        if cwd:
            span[3] = cwd
    kind = line.type
    if kind == "assistant":
        message = line.message
        if message.__class__ is not Message:
            chunk.error(ctx.path, line_no, f"assistant message is {shown(message)}, not an"
                        " object: no request read", "warning")
            return
        blocks = message.content
        plugin, skill, advisor = line.attributionPlugin, line.attributionSkill, line.advisorModel
        _assistant(message, blocks if blocks.__class__ is list else None, tools, line.requestId,
                   session_id, agent_id, ts, cwd, ctx, line_no, chunk, False, line.costUSD,
                   line.gitBranch, NO_ATTRIBUTION if plugin is None and skill is None
                   and advisor is None else (plugin, skill, advisor))
    elif kind == "user":
        message = line.message
        if message is None:
            blocks = None
        elif message.__class__ is Message:
            blocks = message.content
        else:
            chunk.error(ctx.path, line_no, f"user message is {shown(message)}, not an object:"
                        " nothing read from it", "warning")
            blocks = None
        origin = line.origin
        # the type / mode keywords of a human prompt (SPEC §2.7); origin.kind other than
        # "human" is an automatic prompt (a task notification, a peer), not typed (rule 6)
        if agent_id is None and (origin is None or origin.kind in (None, "human")):
            _prompt(line, blocks, session_id, ts, ctx, line_no, chunk)
        _user(blocks if blocks.__class__ is list else (), line.toolUseResult, session_id,
              agent_id, ts, ctx, line_no, chunk)
    elif kind == "progress":  # subagent calls nested in progress lines count (SPEC §7)
        progress = line.data
        if progress is None:
            return
        value = progress.agentId
        agent_id = IDENTS.get(value, MISSING) if value.__class__ is str else None
        if agent_id is MISSING:
            agent_id = ident(value)
        parent = line.parentToolUseID
        if agent_id and parent:
            seen = (_RAW_LINK, session_id, agent_id, parent)  # cannot equal a link's key
            if seen not in chunk.links_seen:  # progress_link() of a link not seen yet
                chunk.links_seen.add(seen)
                progress_link(chunk, session_id, agent_id, parent, ctx.path, line_no)
        outer = progress.message
        nested = outer.message if outer is not None and outer.type == "assistant" else None
        if nested is not None:  # an assistant message: a subagent's call (SPEC §7)
            nested_ts = outer.timestamp
            if nested_ts is not None:
                ts_text = checked_ts(nested_ts, ctx, line_no, chunk)
                ts = to_utc(ts_text)
            _assistant(nested, nested_blocks, tools, outer.requestId, session_id,
                       agent_id or "progress", ts, cwd, ctx, line_no, chunk, True, None,
                       line.gitBranch)
    elif kind == "system" and line.subtype in COMPACTIONS:
        meta = meta if isinstance(meta, dict) else {}
        chunk.compactions.append({
            "session_id": session_id, "agent_id": agent_id, "ts": to_utc(ts_text),
            "kind": line.subtype, "trigger": kept(meta.get("trigger"), 80),
            "pre_tokens": tokens(meta.get("preTokens"), "preTokens", ctx.path, line_no, chunk),
            "source_file": ctx.path, "line": line_no,
        })


def _assistant(message, blocks, tools, request_id, session_id, agent_id, ts, cwd,
               ctx: FileContext, line_no: int, chunk: Chunk, nested: bool,
               cost: float | None = None, branch: str | None = None,
               attribution: tuple = NO_ATTRIBUTION) -> None:
    """The request rows, tool calls and broker blocks of an assistant message.

    A message of model ``<synthetic>`` (an API error Claude Code writes itself) is no call
    (issue 45 rule 4); each advisor entry of ``usage.iterations`` is a call of its own
    (rule 1, :func:`_advisor_rows`).
    """
    usage = message.usage
    if usage is None or message.model == SYNTHETIC:
        pass
    elif not isinstance(usage, Usage):  # a usage the tolerant decoder found not an object
        chunk.error(ctx.path, line_no, f"usage is {shown(usage)}, not an object: no tokens"
                    " read", "warning")
    else:
        creation = usage.cache_creation
        message_id = message.id
        model = _MODELS.get(message.model, MISSING)
        if model is MISSING:
            model = memo(_MODELS, message.model, 80)
        kept_cwd = _CWDS.get(cwd, MISSING)
        if kept_cwd is MISSING:
            kept_cwd = memo(_CWDS, cwd, 300)
        if usage.checked:  # repaired by the tolerant decoder: None is a NULL
            counts = (usage.input_tokens, usage.output_tokens,
                      usage.cache_creation_input_tokens)
            read = usage.cache_read_input_tokens
        else:  # absent or null: 0 as ccusage counts it
            counts = (usage.input_tokens or 0, usage.output_tokens or 0,
                      usage.cache_creation_input_tokens or 0)
            read = usage.cache_read_input_tokens or 0
        request_id = (request_id if request_id.__class__ is str and GENERATED_ID(request_id)
                      else ident(request_id))
        kept_id = (message_id if message_id.__class__ is str and GENERATED_ID(message_id)
                   else ident(message_id))
        plugin, skill, advisor = attribution
        if plugin is not None:
            plugin = memo(_ATTRIBUTIONS, plugin, 200)
        if skill is not None:
            skill = memo(_ATTRIBUTIONS, skill, 200)
        kept_branch = memo(_BRANCHES, branch, 200)
        chunk.requests.append((
            session_id, agent_id, request_id, kept_id, model, ts, *counts,
            creation.ephemeral_5m_input_tokens if creation is not None else None,
            creation.ephemeral_1h_input_tokens if creation is not None else None,
            read,
            memo(_SPEEDS, usage.speed, 40) if usage.speed is not None else None,
            nested, kept_cwd, cost, kept_branch, plugin, skill,
            ctx.path, line_no,
        ))
        if usage.iterations:
            _advisor_rows(usage, kept_id, advisor, (session_id, agent_id, request_id),
                          (ts, nested, kept_cwd, kept_branch, plugin, skill), ctx, line_no,
                          chunk)
        if ts is None:  # counted in totals, left out of dated views (counting rule 4)
            chunk.error(ctx.path, line_no, UNDATED, "warning")
    if blocks is None:
        return
    main = agent_id is None
    calls = iter(tools)
    for block in blocks:  # in block order
        kind = block.type
        if kind == "tool_use":  # a tool call (SPEC §7), its input decoded already
            args, whole = next(calls)
            _tool_call(block, args, whole, session_id, agent_id, ts, ctx, line_no, chunk)
            continue
        value = block.text
        if value is None:
            continue
        if broker.marked(value):  # context-broker inhale/expire blocks (SPEC §7)
            broker.scan(value, session_id, agent_id, ts, ctx.path, line_no, chunk)
        if main and kind == "text":  # ADR-019 redirections
            mark = marks.redirect_mark(value, session_id, agent_id, ts, ctx.path, line_no)
            if mark:
                chunk.marks.append(mark)


def _advisor_rows(usage: Usage, message_id: str | None, advisor_model: str | None,
                  who: tuple, where: tuple, ctx: FileContext, line_no: int,
                  chunk: Chunk) -> None:
    """One request row per ``advisor_message`` entry of ``usage.iterations`` (rule 1).

    Its id is ``<message.id>:advisor:<i>`` (``i`` its place in the list), so the streaming
    copies of the message deduplicate it as they do the message; its model is the entry's,
    else the line's ``advisorModel``, else none (unpriced, listed: never a guessed price).
    """
    session_id, agent_id, request_id = who
    ts, nested, cwd, branch, plugin, skill = where
    for i, entry in enumerate(usage.iterations):
        if entry.type != ADVISOR:
            continue
        model = entry.model if entry.model is not None else advisor_model
        creation = entry.cache_creation
        if usage.checked:
            counts = (entry.input_tokens, entry.output_tokens,
                      entry.cache_creation_input_tokens, None, None,
                      entry.cache_read_input_tokens)
        else:
            counts = (entry.input_tokens or 0, entry.output_tokens or 0,
                      entry.cache_creation_input_tokens or 0, None, None,
                      entry.cache_read_input_tokens or 0)
        if creation is not None:
            counts = (*counts[:3], creation.ephemeral_5m_input_tokens,
                      creation.ephemeral_1h_input_tokens, counts[5])
        chunk.requests.append((
            session_id, agent_id, request_id,
            f"{message_id if message_id is not None else f'{ctx.path}:{line_no}'}:advisor:{i}",
            memo(_MODELS, model, 80) if model is not None else None, ts, *counts, None,
            nested, cwd, None, branch, plugin, skill, ctx.path, line_no,
        ))


def _tool_call(block: Block, args: Input, whole: dict | None, session_id, agent_id, ts,
               ctx: FileContext, line_no: int, chunk: Chunk) -> None:
    """The tool call row of a tool_use block and its decoded input (and its marks)."""
    name = text(block.name) or "?"
    file_path = pattern = launched = command = None
    if name in FILE_TOOLS:
        file_path = text(args.file_path) or text(args.notebook_path)
    elif name in SEARCH_TOOLS:
        file_path = text(args.path)
        pattern = text(args.pattern)
    elif name in LAUNCH_TOOLS:
        launched = text(args.subagent_type) or "general-purpose"
    elif name == "Bash":
        command = text(args.command)
    tool_id = block.id
    chunk.tool_calls.append((
        session_id, agent_id, ts, memo(_NAMES, name, 80),
        tool_id if tool_id.__class__ is str and GENERATED_ID(tool_id) else ident(tool_id),
        kept(file_path, 500) if file_path is not None else None,
        redact_truncate(pattern, 200) if pattern else None,
        kept(launched, 80) if launched is not None else None,
        redact_truncate(command, COMMAND_CHARS) if command else None,
        is_git_commit(name, command),  # spec/commits.py: the status line's rule too
        ctx.path, line_no,
    ))
    if whole is not None:  # to-dos and workspace decisions (issue 13)
        chunk.marks += marks.tool_marks(name, whole, text(tool_id), session_id, agent_id, ts,
                                        ctx.path, line_no)


def _prompt(line: Line, blocks, session_id, ts, ctx: FileContext, line_no: int,
            chunk: Chunk) -> None:
    """The ``cc_marks`` prompt row of a main-chain human prompt (:func:`marks.prompt_mark`)."""
    if blocks.__class__ is list:
        for block in blocks:
            if block.type == "tool_result":
                return  # a tool's answer, not a prompt
        content = [{"type": b.type, "text": b.text} for b in blocks]
    elif blocks.__class__ is str:
        content = blocks
    else:
        return
    obj = {"isMeta": line.isMeta, "isSidechain": line.isSidechain, "agentId": line.agentId,
           "message": {"content": content}}
    mark = marks.prompt_mark(obj, session_id, ts, ctx.path, line_no)
    if mark:
        chunk.marks.append(mark)


def _user(blocks: list[Block], result, session_id, agent_id, ts, ctx: FileContext,
          line_no: int, chunk: Chunk) -> None:
    """Tool result sizes, subagent links and subagent answers' broker blocks of a user line."""
    tool_use_ids = []
    is_result = result.__class__ is Result
    answer = is_result and (
        result.agentId is not msgspec.UNSET or result.totalDurationMs is not msgspec.UNSET)
    for block in blocks:
        if block.type != "tool_result":
            continue
        tool_use_id = ident(block.tool_use_id)
        tool_use_ids.append(tool_use_id)
        content = block.content
        if content.__class__ is str:
            result_bytes = len(content) if content.isascii() else size(content)
        elif content is None:
            result_bytes = 0
        else:
            content = [{"text": item.text} for item in content]
            result_bytes = size(content)
        chunk.tool_results.append((session_id, agent_id, tool_use_id, ts, result_bytes,
                                   block.is_error is True, ctx.path, line_no))
        if answer:  # a subagent's answer: a broker subagent's blocks (SPEC §7)
            broker.scan_result(content, session_id, agent_id, ts, ctx.path, line_no, chunk)
    if is_result and isinstance(result.agentId, str) and result.agentId:
        chunk.agent_links.append({
            "session_id": session_id, "agent_id": ident(result.agentId),
            "tool_use_id": tool_use_ids[0] if tool_use_ids else None,
            "agent_type": kept(result.agentType, 80), "source_file": ctx.path,
            "line": line_no,
        })


def progress_link(chunk: Chunk, session_id, agent_id: str, parent_tool_use_id: str, path: str,
                  line_no: int) -> None:
    """The agent link of a progress line, once per read of a file (every line repeats it)."""
    tool_use_id = ident(parent_tool_use_id)
    link = (session_id, agent_id, tool_use_id)
    if link not in chunk.links_seen:
        chunk.links_seen.add(link)
        chunk.agent_links.append({
            "session_id": session_id, "agent_id": agent_id, "tool_use_id": tool_use_id,
            "agent_type": None, "source_file": path, "line": line_no,
        })


def span_rows(chunk: Chunk) -> list[dict]:
    """Return the chunk's per-(session, agent) spans as rows (UTC timestamps, cwd redacted)."""
    return [{"session_id": session_id, "agent_id": agent_id, "first_ts": to_utc(first),
             "last_ts": to_utc(last), "lines": lines, "cwd": redact_truncate(cwd, 300),
             "source_file": path}
            for (session_id, agent_id), (first, last, lines, cwd, path) in chunk.spans.items()]


def read_meta(jsonl: Path, ctx: FileContext) -> dict | None:
    """Read the ``agent-<id>.meta.json`` beside a subagent file as an agent link row, if any."""
    meta_path = jsonl.with_name(jsonl.name[: -len(".jsonl")] + ".meta.json")
    if not meta_path.is_file():
        return None
    try:
        meta = orjson.loads(meta_path.read_bytes())
    except (orjson.JSONDecodeError, OSError):
        return None
    if not isinstance(meta, dict):
        return None
    return {"session_id": ctx.session_id, "agent_id": ctx.agent_id, "tool_use_id": None,
            "agent_type": redact_truncate(text(meta.get("agentType")), 80),
            "source_file": ctx.path, "line": None}
