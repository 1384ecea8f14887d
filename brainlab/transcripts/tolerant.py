"""The tolerant decoder: any line the typed decoder refuses, repaired into the typed line.

A line goes here when it does not fit :mod:`brainlab.transcripts.fast`'s strict types or is
not valid JSON for msgspec. :func:`load_line` reads it with orjson (invalid UTF-8 replaced,
several JSON objects glued on one line split, each a warning; anything else that is not a JSON
object an error row with the file and line); :func:`parse_object` repairs each field the row
builder reads (token counts that are text, fractions, negative or past BIGINT, a ``costUSD``
that is not a cost, a value of the wrong type), recording a warning row for each repair, then
hands the same typed objects (:mod:`brainlab.transcripts.line`) to the same row builder
(:func:`brainlab.transcripts.build.line_rows`). A value the builder checks itself (a
timestamp, a ``message`` or ``usage`` that is not an object) is handed over as found.
"""

from __future__ import annotations

import json
import re

import msgspec
import orjson

from brainlab.sources.redact import redact_truncate
from brainlab.spec import ranges
from brainlab.transcripts.build import KNOWN_TYPES, MARKED_TOOLS, Chunk, FileContext, line_rows
from brainlab.transcripts.line import (
    NO_INPUT,
    Block,
    CheckedUsage,
    Creation,
    Input,
    Iteration,
    Line,
    Message,
    Nested,
    NestedMessage,
    Origin,
    Progress,
    Result,
    Text,
)
from brainlab.transcripts.values import MAX_COST, MAX_TOKENS, shown, string, text, tokens


def load_line(raw: bytes, ctx: FileContext, line_no: int, chunk: Chunk) -> list[dict]:
    """Parse one raw line into JSON objects, recording problems; [] when nothing is usable.

    Invalid UTF-8 is replaced (a warning) and the line still loads; several JSON objects
    glued on one line (seen in real transcripts) are split and each loads (a warning);
    anything else that is not a JSON object is an error row with the file and line.
    """
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:  # Python's strict decoder refuses what orjson does (surrogates included)
            decoded, valid = raw.decode("utf-8"), True
        except UnicodeDecodeError:
            decoded, valid = raw.decode("utf-8", errors="replace"), False
        if not valid:  # not orjson's message: a "\ud800" escape is valid UTF-8 text
            chunk.error(ctx.path, line_no, "invalid UTF-8: undecodable bytes replaced",
                        "warning")
            try:
                obj = orjson.loads(decoded.encode("utf-8", errors="replace"))
            except orjson.JSONDecodeError:
                obj = None
        else:
            obj = None
        if obj is None:
            objects = _split_glued(decoded)
            if objects and _SURROGATE_ESCAPE.search(decoded):
                objects, replaced = _without_lone_surrogates(objects)
                if replaced:  # orjson refused them; Python's json keeps them, DuckDB cannot
                    chunk.error(ctx.path, line_no, "unpaired UTF-16 surrogate escape(s)"
                                " replaced by U+FFFD", "warning")
            if len(objects) > 1:
                chunk.error(ctx.path, line_no, f"{len(objects)} JSON objects glued on one line:"
                            " split and loaded", "warning")
            if objects:  # one object: valid JSON orjson refuses (an integer past 64 bits)
                return objects
            chunk.error(ctx.path, line_no, f"invalid JSON ({len(raw):,} bytes): line skipped")
            return []
    if not isinstance(obj, dict):
        chunk.error(ctx.path, line_no, f"JSON {type(obj).__name__}, not an object: line skipped")
        return []
    return [obj]


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")  # paired or not: a cheap first look
_SURROGATE_CHAR = re.compile("[\ud800-\udfff]")


def _without_lone_surrogates(objects: list) -> tuple[list, bool]:
    """``objects`` with every unpaired surrogate of a key or string made U+FFFD; whether any was.

    Python's json decodes an escape such as ``"\\ud800"`` to a lone surrogate, which no
    UTF-8 text can hold (the store's insert refuses the whole batch). Only lines orjson
    refused come here.
    """
    found = False

    def clean(value):
        nonlocal found
        if isinstance(value, str):
            if _SURROGATE_CHAR.search(value):
                found = True
                return _SURROGATE_CHAR.sub("\ufffd", value)
            return value
        if isinstance(value, dict):
            return {clean(k): clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    return [clean(obj) for obj in objects], found


def _split_glued(decoded: str) -> list[dict]:
    decoder = json.JSONDecoder()
    objects, pos, end = [], 0, len(decoded)
    try:
        while pos < end:
            obj, pos = decoder.raw_decode(decoded, pos)
            if not isinstance(obj, dict):
                return []
            objects.append(obj)
            while pos < end and decoded[pos].isspace():
                pos += 1
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python recurses
        return []
    return objects


def parse_object(obj: dict, ctx: FileContext, line_no: int, chunk: Chunk) -> None:
    """Repair one transcript line (a JSON object) into the typed line and build its rows.

    Any shape is accepted: an odd value is a warning row and kept where unambiguous, NULL
    otherwise; an unknown or missing line type is a warning (once per type and read).
    """
    get = obj.get
    kind = get("type")
    message = get("message")
    typed = Line(type=kind if kind.__class__ is str else None,
                 sessionId=get("sessionId"), agentId=get("agentId"),
                 isSidechain=get("isSidechain"), isMeta=get("isMeta"),
                 timestamp=get("timestamp"), cwd=string(get("cwd")),
                 requestId=get("requestId"), gitBranch=string(get("gitBranch")),
                 parentToolUseID=text(get("parentToolUseID")), subtype=get("subtype"),
                 attributionPlugin=string(get("attributionPlugin")),
                 attributionSkill=string(get("attributionSkill")),
                 advisorModel=string(get("advisorModel")))
    origin = get("origin")
    if isinstance(origin, dict):
        typed.origin = Origin(origin.get("kind"))
    calls, nested_blocks, meta = (), None, None
    if kind == "assistant" and isinstance(message, dict):
        typed.costUSD = _cost(get("costUSD"), ctx, line_no, chunk)
        typed.message = _message(message, Message, ctx, line_no, chunk)
        if isinstance(typed.message.content, list):
            calls = _tools(message.get("content"))
    elif kind in ("assistant", "user"):
        typed.message = message  # None, or not an object: the builder says so
    if kind == "user":
        if isinstance(message, dict):  # a user message's usage is not read
            typed.message = Message(content=_content(message.get("content")))
        result = get("toolUseResult")
        if isinstance(result, dict):
            typed.toolUseResult = Result(result.get("agentId", msgspec.UNSET),
                                         result.get("agentType"),
                                         result.get("totalDurationMs", msgspec.UNSET))
    elif kind == "progress":
        typed.data, nested_blocks, calls = _progress(get("data"), ctx, line_no, chunk)
    elif kind == "system":
        meta = get("compactMetadata") or get("microcompactMetadata")
    line_rows(typed, ctx, line_no, chunk, calls, nested_blocks, meta)
    if not isinstance(kind, str) and kind is not None:
        chunk.error(ctx.path, line_no, f"line type is {shown(kind)}, not a string: line"
                    " ignored", "warning")
    elif kind not in KNOWN_TYPES:
        label = "missing" if kind is None else redact_truncate(kind, 40)
        if label not in chunk.unknown_types:
            chunk.unknown_types.add(label)
            chunk.error(ctx.path, line_no, f"unknown line type ({label}): ignored (first line"
                        " of this type in this read)", "warning")


def _cost(value, ctx: FileContext, line_no: int, chunk: Chunk) -> float | None:
    """The line's own ``costUSD`` (older Claude Code versions write it), NULL when absent.

    A value that is not a number from 0 to MAX_COST is a warning row and NULL.
    """
    if value is None:
        return None
    if type(value) in (int, float) and 0 <= value <= MAX_COST:
        return float(value)
    if type(value) in (int, float):  # a number out of range (NaN, inf, negative, huge)
        chunk.error(ctx.path, line_no, f"costUSD: {ranges.COST_USD.problem(value)}"
                    f" ({ranges.COST_USD.name}, spec/ranges.py): not stored, NULL")
        return None
    chunk.error(ctx.path, line_no, f"costUSD is {shown(value)}, not a cost in USD: NULL",
                "warning")
    return None


def _message(message: dict, kind: type, ctx: FileContext, line_no: int, chunk: Chunk):
    """A Message (or NestedMessage, content left to the caller) with its usage repaired."""
    get = message.get
    usage = get("usage")
    if isinstance(usage, dict):
        usage = _usage(usage, ctx, line_no, chunk)
    model = string(get("model"))
    if kind is NestedMessage:
        return NestedMessage(get("id"), model, usage)
    return Message(get("id"), model, usage, _content(get("content")))


def _usage(usage: dict, ctx: FileContext, line_no: int, chunk: Chunk) -> CheckedUsage:
    """Every count final: a plain int as is, absent or null 0, anything else repaired.

    The cache writes by time to live stay NULL when absent; a repair is a warning each
    (:func:`values.tokens`).
    """
    use = usage.get
    creation = use("cache_creation")
    creation = creation if isinstance(creation, dict) else {}

    def count(value, name: str, zero: bool = True):
        if type(value) is int and 0 <= value <= MAX_TOKENS:
            return value
        if value is None:  # absent or null: 0 as ccusage counts it (no warning)
            return 0 if zero else None
        return tokens(value, name, ctx.path, line_no, chunk)

    values = [count(use(name), name) for name in (
        "input_tokens", "output_tokens", "cache_creation_input_tokens")]
    five, hour = (count(creation.get(name), name, False) for name in (
        "ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"))
    read = count(use("cache_read_input_tokens"), "cache_read_input_tokens")
    return CheckedUsage(*values, read, Creation(five, hour), string(use("speed")),
                        _iterations(use("iterations"), count))


def _iterations(entries, count) -> list[Iteration] | None:
    """The advisor entries of ``usage.iterations`` repaired as the usage is (issue 45 rule 1).

    Other entry types are already in the top-level usage and are not read; an entry that is
    not an object, or a list that is not a list, is no advisor call.
    """
    if not isinstance(entries, list):
        return None
    kept = []
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("type") != "advisor_message":
            kept.append(Iteration(string(entry.get("type")) if isinstance(entry, dict)
                                  else None))
            continue
        use = entry.get
        creation = use("cache_creation")
        creation = creation if isinstance(creation, dict) else {}
        kept.append(Iteration(
            "advisor_message", string(use("model")),
            *(count(use(name), name) for name in (
                "input_tokens", "output_tokens", "cache_creation_input_tokens",
                "cache_read_input_tokens")),
            Creation(*(count(creation.get(name), name, False) for name in (
                "ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")))))
    return kept


def _content(content):
    """A message's content as the typed line holds it: text, a list of Blocks, or None."""
    if content.__class__ is str or content is None:
        return content
    if not isinstance(content, list):
        return None
    return [Block(b.get("type"), b.get("text"), b.get("tool_use_id"), b.get("is_error"),
                  _result_content(b.get("content")), b.get("name"), b.get("id"))
            for b in content if isinstance(b, dict)]


def _result_content(content):
    """A tool result's content: text, a list of Text items (dicts only), or None."""
    if content.__class__ is str:
        return content
    if isinstance(content, list):
        return [Text(item.get("text")) for item in content if isinstance(item, dict)]
    return None


def _tools(content: list) -> list[tuple]:
    """(Input, input dict or None) of each tool_use block, as the typed decoder gives them."""
    found = []
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "tool_use":
            continue
        value, name = block.get("input"), block.get("name")
        marked = name.__class__ is str and name in MARKED_TOOLS
        if isinstance(value, dict):
            get = value.get
            args = Input(get("file_path"), get("notebook_path"), get("path"), get("pattern"),
                         get("subagent_type"), get("command"))
            found.append((args, value if marked else None))
        else:
            found.append((NO_INPUT, {} if marked else None))
    return found


def _progress(data, ctx: FileContext, line_no: int, chunk: Chunk):
    """A progress line's data (Progress or None), its nested content blocks and tool calls."""
    if not isinstance(data, dict):
        return None, None, ()
    outer = data.get("message")
    if not isinstance(outer, dict) or outer.get("type") != "assistant" or not isinstance(
            outer.get("message"), dict):
        return Progress(data.get("agentId")), None, ()
    inner = outer["message"]
    nested = Nested("assistant", outer.get("timestamp"), outer.get("requestId"),
                    _message(inner, NestedMessage, ctx, line_no, chunk))
    blocks = inner.get("content")
    if not isinstance(blocks, list):
        return Progress(data.get("agentId"), nested), None, ()
    return Progress(data.get("agentId"), nested), _content(blocks), _tools(blocks)


__all__ = ["load_line", "parse_object"]
