"""The typed decoder: one msgspec decode per transcript line into the typed line, in C.

Most of a transcript's bytes are prompts, tool outputs and file contents brainlab never keeps.
msgspec decodes a line into the Structs of :mod:`brainlab.transcripts.line` and skips every
other field without building Python objects for it. A progress line's nested content and tool
inputs stay :class:`msgspec.Raw` until the builder needs them: the nested content only for an
assistant message, a tool's input once its name says which fields are read. A line that does
not fit the strict types, or is not valid JSON, is handed back to the caller, which gives it to
the tolerant decoder (:mod:`brainlab.transcripts.tolerant`). Both hand their typed lines to the
same row builder (:func:`brainlab.transcripts.build.line_rows`), so a line that fits gives the
same rows either way (tests/test_claude_fuzz.py).
"""

from __future__ import annotations

import msgspec
import orjson

from brainlab.transcripts.build import COMPACTIONS, KNOWN_TYPES, MARKED_TOOLS, Chunk, FileContext, line_rows
from brainlab.transcripts.line import NO_INPUT, Block, Input, Line
from brainlab.transcripts.values import MAX_COST

_decode = msgspec.json.Decoder(Line).decode
_blocks = msgspec.json.Decoder(list[Block]).decode
_input = msgspec.json.Decoder(Input).decode
_FAILED = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)


def _raw(value: msgspec.Raw):
    """Decode a Raw field (None when absent)."""
    return orjson.loads(memoryview(value)) if len(value) else None


def _is_object(value: msgspec.Raw) -> bool:
    return len(value) > 0 and memoryview(value)[0] == 0x7B  # "{"


def tools(blocks: list[Block]) -> list[tuple]:
    """(Input, input dict or None) of each tool call in order, decoded before any row.

    The fields a tool call row reads come from :class:`Input` (a Write's content skipped in
    C); to-do and file-writing tools are also decoded whole, as the dict
    :mod:`~brainlab.transcripts.marks` reads (to-dos, decision lines a workspace log gains).
    """
    found = []
    for block in blocks:
        if block.type != "tool_use":
            continue
        value = block.input
        name = block.name
        marked = name.__class__ is str and name in MARKED_TOOLS
        whole = None
        if not _is_object(value):
            args = NO_INPUT
            if marked:
                whole = {}
        elif marked:
            whole = orjson.loads(memoryview(value))
            get = whole.get
            args = Input(get("file_path"), get("notebook_path"), get("path"), get("pattern"),
                         get("subagent_type"), get("command"))
        else:
            args = _input(memoryview(value))
        found.append((args, whole))
    return found


def parse_line(view: memoryview, data: bytes, start: int, end: int, ctx: FileContext,
               line_no: int, chunk: Chunk) -> bool:
    """Decode ``data[start:end]`` and build its rows; False (nothing recorded) when it does not fit.

    ``view`` is ``memoryview(data)``: the line is decoded without copying it.
    """
    try:
        line = _decode(view[start:end])
        kind = line.type
        if kind not in KNOWN_TYPES:
            return False  # unknown, missing: the tolerant decoder says so
        calls = ()
        nested_blocks = meta = None
        if kind == "assistant":
            cost = line.costUSD
            if cost is not None and not 0 <= cost <= MAX_COST:
                return False  # an odd cost: the tolerant decoder warns
            message = line.message
            blocks = message.content if message is not None else None
            if blocks.__class__ is list:
                calls = tools(blocks)
        elif kind == "progress":
            progress = line.data
            if progress is not None:
                outer = progress.message
                if outer is not None and outer.type == "assistant":
                    nested = outer.message
                    if nested is not None and len(nested.content) and (
                            memoryview(nested.content)[0] == 0x5B):  # "[": a content list
                        nested_blocks = _blocks(memoryview(nested.content))
                        calls = tools(nested_blocks)
        elif kind == "system" and line.subtype in COMPACTIONS:
            meta = _raw(line.compactMetadata) or _raw(line.microcompactMetadata)
    except _FAILED:
        return False
    except orjson.JSONDecodeError:  # a Raw part past orjson's limits: the tolerant decoder
        return False
    line_rows(line, ctx, line_no, chunk, calls, nested_blocks, meta)
    return True


__all__ = ["parse_line", "tools"]
