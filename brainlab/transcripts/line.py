"""The typed transcript line: the fields brainlab reads of a Claude Code line, and no other.

Both decoders produce these objects and the one row builder (:mod:`brainlab.transcripts.build`)
reads them. The typed decoder (:mod:`brainlab.transcripts.fast`) fills them with msgspec in C,
skipping every other field (prompts, tool outputs, file contents); the types are strict
(token counts are ints in BIGINT range, names are strings), so a line that does not fit goes to
the tolerant decoder (:mod:`brainlab.transcripts.tolerant`), which repairs what it can, records
warnings and builds the same objects (a value the builder checks itself, such as a timestamp
or a message that is not an object, is handed over as found).

A field added here must be read by the builder and drawn by the differential test's line
generator (tests/test_claude_fuzz.py fails on a field it never draws). :data:`RAW_FIELDS` says
which type a ``msgspec.Raw`` field is decoded to when it is read.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec

from brainlab.transcripts.values import MAX_TOKENS

Tokens = Annotated[int, msgspec.Meta(ge=0, le=MAX_TOKENS)] | None
NO_RAW = msgspec.Raw(b"")


class Creation(msgspec.Struct):
    """``usage.cache_creation``: cache writes by time to live."""

    ephemeral_5m_input_tokens: Tokens = None
    ephemeral_1h_input_tokens: Tokens = None


class Iteration(msgspec.Struct):
    """An entry of ``usage.iterations`` (newer Claude Code versions, issue 45 rule 1).

    Only ``type: "advisor_message"`` entries are read: each is a call of its own, to its own
    model (``None``: Claude Code 2.1.266 and later may write ``"model": null``); the other
    types are already inside the top-level usage.
    """

    type: str | None = None
    model: str | None = None
    input_tokens: Tokens = None
    output_tokens: Tokens = None
    cache_creation_input_tokens: Tokens = None
    cache_read_input_tokens: Tokens = None
    cache_creation: Creation | None = None


class Usage(msgspec.Struct):
    """``message.usage``. As decoded, an absent or null count is 0 for the four totals."""

    checked: ClassVar[bool] = False  # True: counts are final (None is NULL, not 0)
    input_tokens: Tokens = None
    output_tokens: Tokens = None
    cache_creation_input_tokens: Tokens = None
    cache_read_input_tokens: Tokens = None
    cache_creation: Creation | None = None
    speed: str | None = None
    iterations: list[Iteration] | None = None


class CheckedUsage(Usage):
    """A usage the tolerant decoder repaired: each count final, None a NULL (with a warning)."""

    checked: ClassVar[bool] = True


class Text(msgspec.Struct):
    """An item of a tool result's content list."""

    text: Any = None


class Block(msgspec.Struct):
    """A content block of a user or assistant message (the fields either kind reads)."""

    type: Any = None
    text: Any = None
    tool_use_id: Any = None  # tool_result
    is_error: Any = None
    content: str | list[Text] | None = None
    name: Any = None  # tool_use
    id: Any = None
    input: msgspec.Raw = NO_RAW  # decoded as Input once the tool's name is known


class Message(msgspec.Struct):
    """A user or assistant line's ``message``."""

    id: str | None = None
    model: str | None = None
    usage: Usage | None = None
    content: str | list[Block] | None = None


class NestedMessage(msgspec.Struct):
    """A progress line's nested message: content decoded only when it is an assistant's."""

    id: str | None = None
    model: str | None = None
    usage: Usage | None = None
    content: msgspec.Raw = NO_RAW  # a list[Block] when read


class Nested(msgspec.Struct):
    """A progress line's ``data.message``: the nested line (only an assistant one is read)."""

    type: Any = None
    timestamp: Any = None
    requestId: Any = None  # noqa: N815
    message: NestedMessage | None = None


class Progress(msgspec.Struct):
    """A progress line's ``data``, nested message typed in the same pass."""

    agentId: Any = None  # noqa: N815
    message: Nested | None = None


class Result(msgspec.Struct):
    """A user line's ``toolUseResult`` object (it may name a subagent, SPEC §7)."""

    agentId: Any = msgspec.UNSET  # noqa: N815
    agentType: Any = None  # noqa: N815
    totalDurationMs: Any = msgspec.UNSET  # noqa: N815


class Origin(msgspec.Struct):
    """A user line's ``origin``: ``kind`` "human" is a typed prompt, others are automatic."""

    kind: Any = None


class Line(msgspec.Struct):
    """One transcript line (JSON object), as far as brainlab reads it."""

    type: str | None = None
    sessionId: str | None = None  # noqa: N815 (the transcript's field names)
    agentId: str | None = None  # noqa: N815
    isSidechain: bool | None = None  # noqa: N815
    isMeta: Any = None  # noqa: N815
    timestamp: str | None = None
    cwd: str | None = None
    requestId: str | None = None  # noqa: N815
    message: Message | None = None
    subtype: str | None = None
    compactMetadata: msgspec.Raw = NO_RAW  # noqa: N815 (a CompactMetadata when read)
    microcompactMetadata: msgspec.Raw = NO_RAW  # noqa: N815
    data: Progress | None = None
    # an object may name a subagent (SPEC §7); a text or a list names nothing
    toolUseResult: Result | str | list[msgspec.Raw] | None = None  # noqa: N815
    parentToolUseID: str | None = None  # noqa: N815
    costUSD: float | None = None  # noqa: N815 (older versions' own cost: reported mode)
    gitBranch: str | None = None  # noqa: N815 (usage branches)
    # issue 45: who the call worked for (usage --by plugin|skill), the advisor's model (an
    # advisor iteration without one), a user line's origin (typed or automatic prompt)
    attributionPlugin: str | None = None  # noqa: N815
    attributionSkill: str | None = None  # noqa: N815
    advisorModel: str | None = None  # noqa: N815
    origin: Origin | None = None


class Input(msgspec.Struct):
    """The tool input fields a tool call row reads (a Write's content is skipped in C)."""

    file_path: Any = None
    notebook_path: Any = None
    path: Any = None
    pattern: Any = None
    subagent_type: Any = None
    command: Any = None


class CompactMetadata(msgspec.Struct):
    """A compaction's ``compactMetadata`` / ``microcompactMetadata`` (read as a dict)."""

    trigger: Any = None
    preTokens: Any = None  # noqa: N815


NO_INPUT = Input()
# (Struct, field) -> the type a Raw field holds when the builder reads it
RAW_FIELDS: dict[tuple[type, str], Any] = {
    (Block, "input"): Input, (NestedMessage, "content"): list[Block],
    (Line, "compactMetadata"): CompactMetadata, (Line, "microcompactMetadata"): CompactMetadata,
}
