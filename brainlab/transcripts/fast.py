"""The fast path for transcript lines: msgspec Structs that decode only the fields brainlab reads.

Most of a transcript's bytes are prompts, tool outputs and file contents brainlab never keeps.
msgspec decodes a line into typed Structs in C and skips every other field without building
Python objects for it. One decode call per line types everything kept (SPEC §7): the content
list (texts, tool names and ids, tool result texts), the tool result that may name a subagent,
a progress line's ``data`` (its nested message's content stays :class:`msgspec.Raw` and is
decoded only for an assistant message) and the usage. Tool inputs stay Raw until the tool's
name says which fields are read. The Struct types are strict (token counts are ints in BIGINT
range, names are strings): a line that does not fit them, or is not valid JSON, is handed back
to the caller, which parses it with the general orjson path of
:mod:`brainlab.transcripts.tolerant` (warnings, repairs, glued lines, error rows). Both paths
give the same rows for a line that fits (tests/test_claude_fuzz.py).

The hottest helpers of the general path (``ident``, ``checked_ts``/``to_utc``, ``span``,
``kept``) are inlined here as lookups in their own memo tables, falling back to the helpers
for anything not already seen: about 14 microseconds per line is all the budget there is.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
import orjson

from brainlab.sources.redact import redact_truncate
from brainlab.transcripts import broker, marks
from brainlab.transcripts import tolerant as cc

Tokens = Annotated[int, msgspec.Meta(ge=0, le=cc.MAX_TOKENS)] | None


class _Creation(msgspec.Struct):
    ephemeral_5m_input_tokens: Tokens = None
    ephemeral_1h_input_tokens: Tokens = None


class _Usage(msgspec.Struct):
    input_tokens: Tokens = None
    output_tokens: Tokens = None
    cache_creation_input_tokens: Tokens = None
    cache_read_input_tokens: Tokens = None
    cache_creation: _Creation | None = None
    speed: str | None = None


_NO_RAW = msgspec.Raw(b"")


class _Text(msgspec.Struct):
    text: Any = None


class _Block(msgspec.Struct):
    """A content block of a user or assistant message (the fields either kind reads)."""

    type: Any = None
    text: Any = None
    tool_use_id: Any = None  # tool_result
    is_error: Any = None
    content: str | list[_Text] | None = None
    name: Any = None  # tool_use
    id: Any = None
    input: msgspec.Raw = _NO_RAW


class _Message(msgspec.Struct):
    id: str | None = None
    model: str | None = None
    usage: _Usage | None = None
    content: str | list[_Block] | None = None


class _NestedMessage(msgspec.Struct):
    """A progress line's nested message: content decoded only when it is an assistant's."""

    id: str | None = None
    model: str | None = None
    usage: _Usage | None = None
    content: msgspec.Raw = _NO_RAW


class _Nested(msgspec.Struct):
    """A progress line's data.message: the nested line (only an assistant one is read)."""

    type: Any = None
    timestamp: Any = None
    requestId: Any = None  # noqa: N815
    message: _NestedMessage | None = None


class _Progress(msgspec.Struct):
    """A progress line's data, nested message typed in the same pass (outputs skipped in C)."""

    agentId: Any = None  # noqa: N815
    message: _Nested | None = None


class _Result(msgspec.Struct):
    agentId: Any = msgspec.UNSET  # noqa: N815
    agentType: Any = None  # noqa: N815
    totalDurationMs: Any = msgspec.UNSET  # noqa: N815


class _Line(msgspec.Struct):
    type: str | None = None
    sessionId: str | None = None  # noqa: N815 (the transcript's field names)
    agentId: str | None = None  # noqa: N815
    isSidechain: bool | None = None  # noqa: N815
    isMeta: Any = None  # noqa: N815
    timestamp: str | None = None
    cwd: str | None = None
    requestId: str | None = None  # noqa: N815
    message: _Message | None = None
    subtype: str | None = None
    compactMetadata: msgspec.Raw = _NO_RAW  # noqa: N815
    microcompactMetadata: msgspec.Raw = _NO_RAW  # noqa: N815
    data: _Progress | None = None
    # an object may name a subagent (SPEC §7); a text or a list names nothing
    toolUseResult: _Result | str | list[msgspec.Raw] | None = None  # noqa: N815
    parentToolUseID: str | None = None  # noqa: N815
    costUSD: float | None = None  # noqa: N815 (older versions' own cost: reported mode)
    gitBranch: str | None = None  # noqa: N815 (usage branches)


class _Input(msgspec.Struct):
    """The tool input fields claude_code.tool_call reads (a Write's content is skipped in C)."""

    file_path: Any = None
    notebook_path: Any = None
    path: Any = None
    pattern: Any = None
    subagent_type: Any = None
    command: Any = None


_decode = msgspec.json.Decoder(_Line).decode
_blocks = msgspec.json.Decoder(list[_Block]).decode
_input = msgspec.json.Decoder(_Input).decode
_FAILED = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)
_IGNORED = cc.KNOWN_TYPES - {"assistant", "user", "progress", "system"}
_KNOWN = cc.KNOWN_TYPES
_COMPACTIONS = ("compact_boundary", "microcompact_boundary")
_MISSING = cc._MISSING
_IDENTS = cc._IDENTS  # ident()'s memo of ids that repeat (session, agent)
_DAYS = cc._DAYS  # _day_state()'s memo: "YYYY-MM-DD" -> 0 when valid and not in the future
_utc_text = cc._UTC_TEXT.fullmatch
_ident = cc.ident
_kept = cc.kept
_MEMO_MAX = 100_000
_MODELS: dict[str | None, str | None] = {}  # kept(model, 80), read once per request
_CWDS: dict[str | None, str | None] = {}  # kept(cwd, 300)
_SPEEDS: dict[str | None, str | None] = {}  # kept(speed, 40)
_BRANCHES: dict[str | None, str | None] = {}  # kept(gitBranch, 200)
_NAMES: dict[str | None, str | None] = {}  # kept(tool name, 80)
_NO_INPUT = _Input()
_RAW_LINK = object()  # marks a (session, agent, parentToolUseID as written) key in links_seen
_FILE_TOOLS, _SEARCH_TOOLS, _LAUNCH_TOOLS = cc.FILE_TOOLS, cc.SEARCH_TOOLS, cc.LAUNCH_TOOLS
_MARKED_TOOLS = cc.MARKED_TOOLS
_generated = cc.GENERATED_ID
_git_commit = cc._GIT_COMMIT.search


def _memo(table: dict, value, limit: int):
    """``kept(value, limit)`` remembered in ``table`` (a model, a cwd: the same on most lines)."""
    text = table.get(value, _MISSING)
    if text is _MISSING:
        text = _kept(value, limit)
        if len(table) >= _MEMO_MAX:
            table.clear()
        table[value] = text
    return text


def _raw(value: msgspec.Raw):
    """Decode a Raw field (None when absent)."""
    return orjson.loads(memoryview(value)) if len(value) else None


def _is_object(value: msgspec.Raw) -> bool:
    return len(value) > 0 and memoryview(value)[0] == 0x7B  # "{"


def _tools(blocks: list[_Block]) -> list[tuple]:
    """(input fields, input dict or None) of each tool call in order, decoded before any row.

    The fields a tool call row reads come from :class:`_Input` (a Write's content skipped in
    C); to-do and file-writing tools are also decoded whole, as the dict marks reads
    (their to-dos and the decision lines they add to a workspace log, issue 13).
    """
    tools = []
    for block in blocks:
        if block.type != "tool_use":
            continue
        value = block.input
        name = block.name
        marked = name.__class__ is str and name in _MARKED_TOOLS
        whole = None
        if not _is_object(value):
            args = _NO_INPUT
            if marked:
                whole = {}
        elif marked:
            whole = orjson.loads(memoryview(value))
            get = whole.get
            args = _Input(get("file_path"), get("notebook_path"), get("path"), get("pattern"),
                          get("subagent_type"), get("command"))
        else:
            args = _input(memoryview(value))
        tools.append((args, whole))
    return tools


def _text(value) -> str | None:
    """tolerant._str: a non-empty string, else None."""
    return value if value.__class__ is str and value else None


def _tool_call(block: _Block, args: _Input, whole: dict | None, session_id, agent_id, ts,
               ctx: cc.FileContext, line_no: int, chunk: cc.Chunk) -> None:
    """The row of claude_code.tool_call from the typed block and input (and its marks)."""
    name = _text(block.name) or "?"
    file_path = pattern = launched = command = None
    if name in _FILE_TOOLS:
        file_path = _text(args.file_path) or _text(args.notebook_path)
    elif name in _SEARCH_TOOLS:
        file_path = _text(args.path)
        pattern = _text(args.pattern)
    elif name in _LAUNCH_TOOLS:
        launched = _text(args.subagent_type) or "general-purpose"
    elif name == "Bash":
        command = _text(args.command)
    tool_id = block.id
    chunk.tool_calls.append((
        session_id, agent_id, ts, _memo(_NAMES, name, 80),
        tool_id if tool_id.__class__ is str and _generated(tool_id) else _ident(tool_id),
        _kept(file_path, 500) if file_path is not None else None,
        redact_truncate(pattern, 200) if pattern else None,
        _kept(launched, 80) if launched is not None else None,
        redact_truncate(command, cc.COMMAND_CHARS) if command else None,
        bool(command and _git_commit(command)),
        ctx.path, line_no,
    ))
    if whole is not None:  # to-dos and workspace decisions (issue 13)
        chunk.marks += marks.tool_marks(name, whole, _text(tool_id), session_id,
                                               agent_id, ts, ctx.path, line_no)


def parse_line(view: memoryview, data: bytes, start: int, end: int, ctx: cc.FileContext,
               line_no: int, chunk: cc.Chunk) -> bool:
    """Parse ``data[start:end]`` into ``chunk``; False (nothing recorded) when it does not fit.

    ``view`` is ``memoryview(data)``: the line is decoded without copying it.
    """
    try:
        line = _decode(view[start:end])
        kind = line.type
        if kind not in _KNOWN:
            return False  # unknown, missing: the general path says so
        tools = ()
        if kind == "assistant":
            cost = line.costUSD
            if cost is not None and not 0 <= cost <= cc.MAX_COST:
                return False  # an odd cost: the general path warns
            message = line.message
            blocks = message.content if message is not None else None
            if blocks.__class__ is list:
                tools = _tools(blocks)
        elif kind == "progress":
            progress = line.data
            nested = blocks = None
            if progress is not None:
                outer = progress.message
                if outer is not None and outer.type == "assistant":
                    nested = outer.message
                    if nested is not None and len(nested.content) and (
                            memoryview(nested.content)[0] == 0x5B):  # "[": a content list
                        blocks = _blocks(memoryview(nested.content))
                        tools = _tools(blocks)
        elif kind == "system" and line.subtype in _COMPACTIONS:
            meta = _raw(line.compactMetadata) or _raw(line.microcompactMetadata)
    except _FAILED:
        return False
    except orjson.JSONDecodeError:  # a Raw part past orjson's limits: the general path
        return False
    # ident() of the line's session and agent (memoised: they repeat on every line)
    value = line.sessionId
    if value is None:
        session_id = ctx.session_id
    else:
        session_id = _IDENTS.get(value, _MISSING)
        if session_id is _MISSING:
            session_id = _ident(value)
        session_id = session_id or ctx.session_id
    value = line.agentId
    if value is None:
        agent_id = ctx.agent_id
    else:
        agent_id = _IDENTS.get(value, _MISSING)
        if agent_id is _MISSING:
            agent_id = _ident(value)
        agent_id = agent_id or ctx.agent_id
    if agent_id is None and line.isSidechain is True:
        agent_id = "sidechain"
    # checked_ts() and to_utc(): a ...Z timestamp of a day already seen valid costs a match
    ts_text = line.timestamp
    if ts_text is None:
        ts = None
    elif _utc_text(ts_text) and _DAYS.get(ts_text[:10]) == 0:
        ts = ts_text[:-1]
    else:
        ts_text = cc.checked_ts(ts_text, ctx, line_no, chunk)
        ts = cc.to_utc(ts_text)
    cwd = line.cwd
    if session_id is not None:  # cc.span(), inlined
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
    if kind in _IGNORED:
        return True
    if kind == "assistant":
        if message is None:
            chunk.error(ctx.path, line_no, "assistant message is None, not an object: no"
                        " request read", "warning")
            return True
        _assistant(message, blocks, tools, line.requestId, session_id, agent_id, ts, cwd,
                   ctx, line_no, chunk, False, cost, line.gitBranch)
    elif kind == "user":
        message = line.message
        blocks = message.content if message is not None else None
        if agent_id is None:  # the type / mode keywords of a human prompt (SPEC §2.7)
            _prompt(line, blocks, session_id, ts, ctx, line_no, chunk)
        _user(blocks if blocks.__class__ is list else (), line.toolUseResult, session_id,
              agent_id, ts, ctx, line_no, chunk)
    elif kind == "progress":  # as tolerant.progress_line
        if progress is not None:
            value = progress.agentId
            agent_id = _IDENTS.get(value, _MISSING) if value.__class__ is str else None
            if agent_id is _MISSING:
                agent_id = _ident(value)
            parent = line.parentToolUseID
            if agent_id and parent:
                seen = (_RAW_LINK, session_id, agent_id, parent)  # cannot equal a link's key
                if seen not in chunk.links_seen:  # progress_link() of a link not seen yet
                    chunk.links_seen.add(seen)
                    cc.progress_link(chunk, session_id, agent_id, parent, ctx.path, line_no)
            if nested is not None:  # an assistant message: a subagent's call (SPEC §7)
                nested_ts = outer.timestamp
                if nested_ts is not None:
                    ts_text = cc.checked_ts(nested_ts, ctx, line_no, chunk)
                    ts = cc.to_utc(ts_text)
                _assistant(nested, blocks, tools, outer.requestId, session_id,
                           agent_id or "progress", ts, cwd, ctx, line_no, chunk, True, None,
                           line.gitBranch)
    elif kind == "system":
        if line.subtype in _COMPACTIONS:
            obj = {"subtype": line.subtype, "compactMetadata": meta}
            cc.system_line(obj, session_id, agent_id, ts_text, ctx, line_no, chunk)
    return True


def _assistant(message, blocks, tools, request_id, session_id, agent_id, ts, cwd,
               ctx: cc.FileContext, line_no: int, chunk: cc.Chunk, nested: bool,
               cost: float | None = None, branch: str | None = None) -> None:
    """The request row, tool calls and broker blocks of an assistant message (as tolerant)."""
    usage = message.usage
    if usage is not None:
        creation = usage.cache_creation
        message_id = message.id
        model = _MODELS.get(message.model, _MISSING)
        if model is _MISSING:
            model = _memo(_MODELS, message.model, 80)
        kept_cwd = _CWDS.get(cwd, _MISSING)
        if kept_cwd is _MISSING:
            kept_cwd = _memo(_CWDS, cwd, 300)
        chunk.requests.append((
            session_id, agent_id,
            request_id if request_id.__class__ is str and _generated(request_id)
            else _ident(request_id),
            message_id if message_id.__class__ is str and _generated(message_id)
            else _ident(message_id),
            model, ts,
            usage.input_tokens or 0, usage.output_tokens or 0,
            usage.cache_creation_input_tokens or 0,
            creation.ephemeral_5m_input_tokens if creation is not None else None,
            creation.ephemeral_1h_input_tokens if creation is not None else None,
            usage.cache_read_input_tokens or 0,
            _memo(_SPEEDS, usage.speed, 40) if usage.speed is not None else None,
            nested, kept_cwd, cost,
            _memo(_BRANCHES, branch, 200),
            ctx.path, line_no,
        ))
        if ts is None:  # counted in totals, left out of dated views (counting rule 4)
            chunk.error(ctx.path, line_no, cc.UNDATED, "warning")
    if blocks.__class__ is list:  # in block order, as tolerant.scan_content
        main = agent_id is None
        calls = iter(tools)
        for block in blocks:
            kind = block.type
            if kind == "tool_use":  # a tool call (SPEC §7), its input decoded already
                args, whole = next(calls)
                _tool_call(block, args, whole, session_id, agent_id, ts, ctx, line_no, chunk)
                continue
            text = block.text
            if text is None:
                continue
            if broker.marked(text):  # context-broker inhale/expire blocks (SPEC §7)
                broker.scan(text, session_id, agent_id, ts, ctx.path, line_no, chunk)
            if main and kind == "text":  # ADR-019 redirections
                mark = marks.redirect_mark(text, session_id, agent_id, ts, ctx.path,
                                                  line_no)
                if mark:
                    chunk.marks.append(mark)


def _prompt(line: _Line, blocks, session_id, ts, ctx: cc.FileContext, line_no: int,
            chunk: cc.Chunk) -> None:
    """The ``cc_marks`` prompt row of a main-chain human prompt, as tolerant.user_line."""
    if blocks.__class__ is list:
        for block in blocks:
            if block.type == "tool_result":
                return  # a tool's answer, not a prompt
        content = [{"type": b.type, "text": b.text} for b in blocks]
    elif blocks.__class__ is str:
        content = blocks
    else:
        return
    obj = {"isMeta": line.isMeta, "isSidechain": line.isSidechain,
           "message": {"content": content}}
    mark = marks.prompt_mark(obj, session_id, ts, ctx.path, line_no)
    if mark:
        chunk.marks.append(mark)


def _user(blocks: list[_Block], result, session_id, agent_id, ts, ctx: cc.FileContext,
          line_no: int, chunk: cc.Chunk) -> None:
    """What tolerant.user_line keeps, from the typed blocks: sizes, links, answers."""
    tool_use_ids = []
    is_result = result.__class__ is _Result
    answer = is_result and (
        result.agentId is not msgspec.UNSET or result.totalDurationMs is not msgspec.UNSET)
    for block in blocks:
        if block.type != "tool_result":
            continue
        tool_use_id = _ident(block.tool_use_id)
        tool_use_ids.append(tool_use_id)
        content = block.content
        if content.__class__ is str:
            size = len(content) if content.isascii() else cc.size(content)
        elif content is None:
            size = 0
        else:
            content = [{"text": item.text} for item in content]
            size = cc.size(content)
        chunk.tool_results.append((session_id, agent_id, tool_use_id, ts, size,
                                   block.is_error is True, ctx.path, line_no))
        if answer:  # a subagent's answer: a broker subagent's blocks (SPEC §7)
            broker.scan_result(content, session_id, agent_id, ts, ctx.path, line_no,
                                      chunk)
    if is_result and isinstance(result.agentId, str) and result.agentId:
        chunk.agent_links.append({
            "session_id": session_id, "agent_id": _ident(result.agentId),
            "tool_use_id": tool_use_ids[0] if tool_use_ids else None,
            "agent_type": _kept(result.agentType, 80), "source_file": ctx.path,
            "line": line_no,
        })


__all__ = ["parse_line"]
