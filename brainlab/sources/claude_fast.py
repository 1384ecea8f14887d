"""The fast path for transcript lines: msgspec Structs that decode only the fields brainlab reads.

Most of a transcript's bytes are prompts, tool outputs and file contents brainlab never keeps.
msgspec decodes a line into typed Structs in C and skips every other field without building
Python objects for it; content lists and tool results stay :class:`msgspec.Raw` until the
line's type says what is kept from them (tool calls, tool result sizes, a subagent's answer,
context-broker blocks: SPEC §7), and are then decoded with their own Structs. The Struct
types are strict (token counts are ints in BIGINT range, names are strings): a line that
does not fit them, or is not valid JSON, is handed back to the caller, which parses it with
the general orjson path of :mod:`brainlab.sources.claude_code` (warnings, repairs, glued
lines, error rows). Both paths give the same rows for a line that fits.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
import orjson

from brainlab.sources import claude_broker, claude_marks
from brainlab.sources import claude_code as cc

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


class _Message(msgspec.Struct):
    id: str | None = None
    model: str | None = None
    usage: _Usage | None = None
    content: msgspec.Raw = _NO_RAW


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
    data: msgspec.Raw = _NO_RAW
    toolUseResult: msgspec.Raw = _NO_RAW  # noqa: N815
    parentToolUseID: str | None = None  # noqa: N815


class _Text(msgspec.Struct):
    text: Any = None


class _UserBlock(msgspec.Struct):
    type: Any = None
    text: Any = None
    tool_use_id: Any = None
    is_error: Any = None
    content: str | list[_Text] | None = None


class _AssistantBlock(msgspec.Struct):
    type: Any = None
    text: Any = None
    name: Any = None
    id: Any = None
    input: msgspec.Raw = _NO_RAW


class _Input(msgspec.Struct):
    """The tool input fields claude_code.tool_call reads (a Write's content is skipped in C)."""

    file_path: Any = None
    notebook_path: Any = None
    path: Any = None
    pattern: Any = None
    subagent_type: Any = None
    command: Any = None


class _Nested(msgspec.Struct):
    """A progress line's data.message: the nested line (only an assistant one is read)."""

    type: Any = None
    timestamp: Any = None
    requestId: Any = None  # noqa: N815
    message: _Message | None = None


class _Progress(msgspec.Struct):
    """A progress line's data, nested message typed in the same pass (outputs skipped in C)."""

    agentId: Any = None  # noqa: N815
    message: _Nested | None = None


class _Result(msgspec.Struct):
    agentId: Any = msgspec.UNSET  # noqa: N815
    agentType: Any = None  # noqa: N815
    totalDurationMs: Any = msgspec.UNSET  # noqa: N815


_decode = msgspec.json.Decoder(_Line).decode
_user_blocks = msgspec.json.Decoder(list[_UserBlock]).decode
_assistant_blocks = msgspec.json.Decoder(list[_AssistantBlock]).decode
_input = msgspec.json.Decoder(_Input).decode
_progress = msgspec.json.Decoder(_Progress).decode
_result = msgspec.json.Decoder(_Result).decode
_FAILED = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)
_IGNORED = cc.KNOWN_TYPES - {"assistant", "user", "progress", "system"}


def _raw(value: msgspec.Raw):
    """Decode a Raw field (None when absent)."""
    return orjson.loads(memoryview(value)) if len(value) else None


def _is_list(value: msgspec.Raw) -> bool:
    return len(value) > 0 and memoryview(value)[0] == 0x5B  # "["


def _is_object(value: msgspec.Raw) -> bool:
    return len(value) > 0 and memoryview(value)[0] == 0x7B  # "{"


def _args(value: msgspec.Raw, name=None) -> dict:
    """A tool call's input as the dict tool_call reads ({} when it is not an object).

    To-do and file-writing tools are decoded whole: claude_marks reads their to-dos and the
    decision lines they add to a workspace log (issue 13).
    """
    if not _is_object(value):
        return {}
    if name in cc.MARKED_TOOLS:
        return orjson.loads(memoryview(value))
    args = _input(memoryview(value))
    return {"file_path": args.file_path, "notebook_path": args.notebook_path,
            "path": args.path, "pattern": args.pattern, "subagent_type": args.subagent_type,
            "command": args.command}


def _may_hold_call(data: bytes, start: int, end: int) -> bool:
    """Whether a progress line's data may name an agent or nest a message (C-speed scans).

    Without the bytes ``"agentId"`` and ``"message"`` (and no ``\\u`` escape that could spell
    them), its data gives no row: decoding it would find neither field.
    """
    find = data.find
    return (find(b'"agentId"', start, end) >= 0 or find(b'"message"', start, end) >= 0
            or find(b"\\u", start, end) >= 0)


def parse_line(view: memoryview, data: bytes, start: int, end: int, ctx: cc.FileContext,
               line_no: int, chunk: cc.Chunk) -> bool:
    """Parse ``data[start:end]`` into ``chunk``; False (nothing recorded) when it does not fit.

    ``view`` is ``memoryview(data)``: the line is decoded without copying it. Content lists
    are decoded with typed Structs too (texts, tool names and ids; tool inputs with orjson).
    """
    try:
        line = _decode(view[start:end])
        kind = line.type
        if kind not in cc.KNOWN_TYPES:
            return False  # unknown, missing: the general path says so
        blocks = result = None
        if kind == "user":
            message = line.message
            if message is not None and _is_list(message.content):
                blocks = _user_blocks(memoryview(message.content))
            if _is_object(line.toolUseResult):  # only an object can name a subagent
                result = _result(memoryview(line.toolUseResult))
        elif kind == "assistant":
            message = line.message
            if message is not None and _is_list(message.content):
                blocks = _assistant_blocks(memoryview(message.content))
                tools = [(b, _args(b.input, b.name)) for b in blocks if b.type == "tool_use"]
        elif kind == "progress":  # bash, hook, mcp progress hold no call: their data is skipped
            progress = nested = None
            if _is_object(line.data) and _may_hold_call(data, start, end):
                progress = _progress(memoryview(line.data))
                outer = progress.message
                if outer is not None and outer.type == "assistant":
                    nested = outer.message
                    if nested is not None and _is_list(nested.content):
                        blocks = _assistant_blocks(memoryview(nested.content))
                        tools = [(b, _args(b.input, b.name)) for b in blocks
                                 if b.type == "tool_use"]
        elif kind == "system" and line.subtype in ("compact_boundary", "microcompact_boundary"):
            meta = _raw(line.compactMetadata) or _raw(line.microcompactMetadata)
    except _FAILED:
        return False
    except orjson.JSONDecodeError:  # a Raw part past orjson's limits: the general path
        return False
    session_id = cc.ident(line.sessionId) or ctx.session_id
    agent_id = cc.ident(line.agentId) or ctx.agent_id
    if agent_id is None and line.isSidechain is True:
        agent_id = "sidechain"
    ts_text = line.timestamp
    if ts_text is not None:
        ts_text = cc.checked_ts(ts_text, ctx, line_no, chunk)
    if session_id is not None:
        cc.span(chunk, session_id, agent_id, ts_text, line.cwd, ctx.path)
    if kind in _IGNORED:
        return True
    if kind == "assistant":
        message = line.message
        if message is None:
            chunk.error(ctx.path, line_no, "assistant message is None, not an object: no"
                        " request read", "warning")
            return True
        _assistant(message, blocks, tools if blocks else (), cc.ident(line.requestId),
                   session_id, agent_id, ts_text, line.cwd, ctx, line_no, chunk, False)
    elif kind == "user":
        if agent_id is None:  # the type / mode keywords of a human prompt (SPEC §2.7)
            _prompt(line, blocks, session_id, ts_text, ctx, line_no, chunk)
        _user(blocks, result, session_id, agent_id, ts_text, ctx, line_no, chunk)
    elif kind == "progress":  # as claude_code.progress_line
        if progress is not None:
            agent_id = cc.ident(progress.agentId)
            if agent_id and line.parentToolUseID:
                cc.progress_link(chunk, session_id, agent_id, line.parentToolUseID, ctx.path,
                                 line_no)
            if nested is not None:  # an assistant message: a subagent's call (SPEC §7)
                nested_ts = outer.timestamp
                nested_ts = (ts_text if nested_ts is None
                             else cc.checked_ts(nested_ts, ctx, line_no, chunk))
                _assistant(nested, blocks, tools if blocks else (), cc.ident(outer.requestId),
                           session_id, agent_id or "progress", nested_ts, line.cwd, ctx,
                           line_no, chunk, True)
    elif kind == "system":
        if line.subtype in ("compact_boundary", "microcompact_boundary"):
            obj = {"subtype": line.subtype, "compactMetadata": meta}
            cc.system_line(obj, session_id, agent_id, ts_text, ctx, line_no, chunk)
    return True


def _assistant(message: _Message, blocks, tools, request_id, session_id, agent_id, ts_text, cwd,
               ctx: cc.FileContext, line_no: int, chunk: cc.Chunk, nested: bool) -> None:
    """The request row, tool calls and broker blocks of an assistant message (as claude_code)."""
    ts = cc.to_utc(ts_text)
    usage = message.usage
    if usage is not None:
        creation = usage.cache_creation
        chunk.requests.append((
            session_id, agent_id, request_id, cc.ident(message.id),
            cc.kept(message.model, 80), ts,
            usage.input_tokens or 0, usage.output_tokens or 0,
            usage.cache_creation_input_tokens or 0,
            creation.ephemeral_5m_input_tokens if creation is not None else None,
            creation.ephemeral_1h_input_tokens if creation is not None else None,
            usage.cache_read_input_tokens or 0, cc.kept(usage.speed, 40),
            nested, cc.kept(cwd, 300), ctx.path, line_no,
        ))
    if blocks:
        for block, args in tools:  # tool calls (SPEC §7)
            cc.tool_call({"name": block.name, "id": block.id, "input": args}, session_id,
                         agent_id, ts, ctx, line_no, chunk)
        for block in blocks:  # context-broker inhale/expire blocks (SPEC §7)
            if block.type != "tool_use" and claude_broker.marked(block.text):
                claude_broker.scan(block.text, session_id, agent_id, ts, ctx.path, line_no,
                                   chunk)
            if agent_id is None and block.type == "text":  # ADR-019 redirections
                chunk.marks += filter(None, [claude_marks.redirect_mark(
                    block.text, session_id, agent_id, ts, ctx.path, line_no)])


def _prompt(line: _Line, blocks, session_id, ts_text, ctx: cc.FileContext, line_no: int,
            chunk: cc.Chunk) -> None:
    """The ``cc_marks`` prompt row of a main-chain human prompt, as claude_code.user_line."""
    message = line.message
    if message is None:
        return
    if blocks is not None:
        if any(b.type == "tool_result" for b in blocks):
            return  # a tool's answer, not a prompt
        content = [{"type": b.type, "text": b.text} for b in blocks]
    elif len(message.content) and memoryview(message.content)[0] == 0x22:  # a JSON string
        content = orjson.loads(memoryview(message.content))
    else:
        return
    obj = {"isMeta": line.isMeta, "isSidechain": line.isSidechain,
           "message": {"content": content}}
    mark = claude_marks.prompt_mark(obj, session_id, cc.to_utc(ts_text), ctx.path, line_no)
    if mark:
        chunk.marks.append(mark)


def _user(blocks, result, session_id, agent_id, ts_text, ctx: cc.FileContext, line_no: int,
          chunk: cc.Chunk) -> None:
    """What claude_code.user_line keeps, from the typed blocks: sizes, links, answers."""
    tool_use_ids = []
    if blocks:
        answer = isinstance(result, _Result) and (
            result.agentId is not msgspec.UNSET or result.totalDurationMs is not msgspec.UNSET)
        ts = cc.to_utc(ts_text)
        for block in blocks:
            if block.type != "tool_result":
                continue
            tool_use_id = cc.ident(block.tool_use_id)
            tool_use_ids.append(tool_use_id)
            content = block.content
            if isinstance(content, list):
                content = [{"text": item.text} for item in content]
            chunk.tool_results.append((session_id, agent_id, tool_use_id, ts,
                                       cc.size(content), block.is_error is True, ctx.path,
                                       line_no))
            if answer:  # a subagent's answer: a broker subagent's blocks (SPEC §7)
                claude_broker.scan_result(content, session_id, agent_id, ts, ctx.path, line_no,
                                          chunk)
    if isinstance(result, _Result) and isinstance(result.agentId, str) and result.agentId:
        chunk.agent_links.append({
            "session_id": session_id, "agent_id": cc.ident(result.agentId),
            "tool_use_id": tool_use_ids[0] if tool_use_ids else None,
            "agent_type": cc.kept(result.agentType, 80), "source_file": ctx.path,
            "line": line_no,
        })


__all__ = ["parse_line"]
