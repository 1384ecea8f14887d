"""Claude Code transcripts (SPEC §7): how one line becomes rows (the general, orjson path).

A transcript tree is ``projects/<encoded-cwd>/<session>.jsonl`` with subagents either inline
(``isSidechain`` lines), in ``<session>/subagents/agent-<id>.jsonl`` (+ ``.meta.json``), in
older project-level ``agent-<id>.jsonl`` files, or nested in ``progress`` lines of the parent.
This module only parses: :mod:`brainlab.transcripts.discovery` says which files,
:mod:`brainlab.transcripts.fast` decodes most lines (msgspec) and hands the others here,
:mod:`brainlab.transcripts.ingest` reads byte ranges and writes. Odd values (impossible
timestamps, token counts that are text, fractions, negative or past BIGINT, a ``message`` or
``usage`` of the wrong type) are warning rows, the value kept when unambiguous, else NULL.

Kept per line: request candidates (usage, before the global SPEC §7 deduplication, which is a
view), tool calls (tool, path, pattern, a redacted and truncated command), tool result sizes,
subagent links, compactions and per-session time spans. Prompts, file contents and command
output are never kept; every string kept goes through :func:`brainlab.sources.redact.redact`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import orjson

from brainlab.sources.redact import redact, redact_truncate
from brainlab.sources.secret_rules import has_candidate
from brainlab.transcripts import broker, discovery, marks

SOURCE = "claude"
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
_GIT_COMMIT = re.compile(
    r"(?:^|[;&|(\s`])git\s+(?:(?:-C|-c)\s+\S+\s+|--?[\w-]+(?:=\S+)?\s+)*+commit\b")  # *+: linear
REQUEST_COLUMNS = (
    "session_id", "agent_id", "request_id", "message_id", "model", "ts", "input_tokens",
    "output_tokens", "cache_creation_tokens", "cache_creation_5m_tokens",
    "cache_creation_1h_tokens", "cache_read_tokens", "speed", "is_nested", "cwd",
    "reported_cost_usd", "git_branch", "source_file", "line")
TOOL_CALL_COLUMNS = (
    "session_id", "agent_id", "ts", "tool", "tool_use_id", "file_path", "pattern",
    "launched_subagent_type", "command", "is_git_commit", "source_file", "line")
TOOL_RESULT_COLUMNS = (
    "session_id", "agent_id", "tool_use_id", "ts", "result_bytes", "is_error", "source_file",
    "line")
MAX_COST = 1e9  # USD: a larger costUSD is not one API call's cost
_DATE_SUFFIX = re.compile(r"-\d{8}$")
_AGENT_FILE = re.compile(r"^agent-(.+)\.jsonl$")


@dataclass(frozen=True)
class FileContext:
    """What a file's place in the tree says about its lines (used when a line does not say)."""

    path: str
    session_id: str | None  # from the file name (main file, or the folder of subagents/)
    agent_id: str | None  # from agent-<id>.jsonl
    layout: str  # main | subagent | project-agent

    @classmethod
    def of(cls, path: Path) -> FileContext:
        """Derive session and agent from the path, following both subagent layouts.

        A line without ``sessionId`` takes :func:`discovery.fallback_session` (rule 5).
        """
        match = _AGENT_FILE.match(path.name)
        if match and path.parent.name == "subagents":
            return cls(str(path), discovery.fallback_session(path.parent.parent),
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
    spans: dict[tuple, list] = field(default_factory=dict)  # see span()
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


# ...Z timestamps as Claude Code writes them, with a valid time of day (the date is checked
# apart, once per distinct day: see _day_state)
_UTC_TEXT = re.compile(
    r"\d{4}-\d\d-\d\dT(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,6})?Z")
UNDATED = "usage line without a usable timestamp: counted in totals, left out of dated views"
FUTURE_DAYS = 2  # a timestamp later than this many days after the run: a warning (value kept)
MAX_TOKENS = 2**63 - 1  # BIGINT: a larger count is a warning and NULL, never a failed commit
_DAYS: dict[str, int] = {}  # "YYYY-MM-DD" -> 0 valid, 1 impossible date, 2 in the future
_TODAY = datetime.now(UTC).date().toordinal()


def _day_state(day: str) -> int:
    state = _DAYS.get(day)
    if state is None:
        try:
            ordinal = datetime.strptime(day, "%Y-%m-%d").date().toordinal()
        except ValueError:
            state = 1
        else:
            state = 2 if ordinal > _TODAY + FUTURE_DAYS else 0
        if len(_DAYS) > 100_000:
            _DAYS.clear()
        _DAYS[day] = state
    return state


def to_utc(value) -> str | None:
    """ISO-8601 text to naive UTC text DuckDB casts to TIMESTAMP; None if unreadable.

    Claude Code writes ``...Z`` (UTC): kept as is without the Z, which is fast. Any other
    offset is converted to UTC first (DuckDB's own cast would drop the offset). Impossible
    dates (``2026-02-30``, month 13) are None: DuckDB would refuse them at commit.
    """
    if not isinstance(value, str) or not value:
        return None
    if _UTC_TEXT.fullmatch(value):
        return value[:-1] if _day_state(value[:10]) != 1 else None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is not None:
        try:
            moment = moment.astimezone(UTC).replace(tzinfo=None)
        except OverflowError:
            return None
    return moment.isoformat()


def checked_ts(value, ctx: FileContext, line_no: int, chunk: Chunk) -> str | None:
    """A line's ``timestamp`` as given when usable, else None; a warning row when it is not.

    Unreadable or impossible timestamps load as NULL; timestamps more than FUTURE_DAYS ahead
    are kept (the clock of the machine that wrote them may be wrong), both with a warning.
    """
    if value is None:
        return None
    if type(value) is str and _UTC_TEXT.fullmatch(value):
        state = _day_state(value[:10])
        if state == 0:
            return value
    else:
        state = 1 if to_utc(value) is None else 0
        if state == 0:
            if to_utc(value)[:10] > datetime.fromordinal(_TODAY + FUTURE_DAYS).date().isoformat():
                state = 2
            else:
                return value
    if state == 1:
        chunk.error(ctx.path, line_no, f"unreadable timestamp ({_shown(value)}): NULL",
                    "warning")
        return None
    chunk.error(ctx.path, line_no, f"timestamp {_shown(value)} is more than {FUTURE_DAYS}"
                " days in the future: kept", "warning")
    return value


def _shown(value) -> str:
    """A short, redacted rendering of a bad value for an error row."""
    if isinstance(value, (list, dict)):
        return f"a JSON {'array' if isinstance(value, list) else 'object'}"
    text = repr(value[:80] if isinstance(value, str) else value)
    return redact_truncate(text if len(text) <= 4300 else text[:60] + "...", 60)


def base_model(model: str | None) -> str | None:
    """Strip the date suffix from a model name (claude-opus-4-5-20251101 -> claude-opus-4-5)."""
    return _DATE_SUFFIX.sub("", model) if model else model


def load_line(raw: bytes, ctx: FileContext, line_no: int, chunk: Chunk) -> list[dict]:
    """Parse one raw line into JSON objects, recording problems; [] when nothing is usable.

    Invalid UTF-8 is replaced (a warning) and the line still loads; several JSON objects
    glued on one line (seen in real transcripts) are split and each loads (a warning);
    anything else that is not a JSON object is an error row with the file and line.
    """
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        text = raw.decode("utf-8", errors="replace")
        if "utf-8" in str(exc).lower() or "surrogate" in str(exc).lower():
            chunk.error(ctx.path, line_no, "invalid UTF-8: undecodable bytes replaced",
                        "warning")
            try:
                obj = orjson.loads(text.encode("utf-8", errors="replace"))
            except orjson.JSONDecodeError:
                obj = None
        else:
            obj = None
        if obj is None:
            objects = _split_glued(text)
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


def _split_glued(text: str) -> list[dict]:
    decoder = json.JSONDecoder()
    objects, pos, end = [], 0, len(text)
    try:
        while pos < end:
            obj, pos = decoder.raw_decode(text, pos)
            if not isinstance(obj, dict):
                return []
            objects.append(obj)
            while pos < end and text[pos].isspace():
                pos += 1
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python recurses
        return []
    return objects


def parse_object(obj: dict, ctx: FileContext, line_no: int, chunk: Chunk) -> None:
    """Turn one transcript line (a JSON object) into rows of ``chunk``.

    The general path (the fallback of :mod:`brainlab.transcripts.fast`): any shape is
    accepted; an odd value is a warning row and kept where unambiguous, NULL otherwise.
    """
    get = obj.get
    kind = get("type")
    session_id = ident(get("sessionId")) or ctx.session_id
    agent_id = ident(get("agentId")) or ctx.agent_id
    if agent_id is None and get("isSidechain") is True:
        agent_id = "sidechain"  # older inline subagent lines name no agent
    ts_text = checked_ts(get("timestamp"), ctx, line_no, chunk)
    cwd = get("cwd")
    if session_id is not None:
        span(chunk, session_id, agent_id, ts_text, cwd, ctx.path)
    if kind == "assistant":
        message = get("message")
        if isinstance(message, dict):
            _assistant(message, ident(get("requestId")), session_id, agent_id, ts_text,
                       cwd, ctx, line_no, chunk, nested=False,
                       cost=reported_cost(get("costUSD"), ctx, line_no, chunk),
                       branch=get("gitBranch"))
        else:
            chunk.error(ctx.path, line_no, f"assistant message is {_shown(message)}, not an"
                        " object: no request read", "warning")
    elif kind == "user":
        user_line(obj, session_id, agent_id, ts_text, ctx, line_no, chunk)
    elif kind == "progress":
        progress_line(obj, session_id, ts_text, ctx, line_no, chunk)
    elif kind == "system":
        system_line(obj, session_id, agent_id, ts_text, ctx, line_no, chunk)
    elif not isinstance(kind, str) and kind is not None:
        chunk.error(ctx.path, line_no, f"line type is {_shown(kind)}, not a string: line"
                    " ignored", "warning")
    elif kind not in KNOWN_TYPES:
        label = "missing" if kind is None else redact_truncate(kind, 40)
        if label not in chunk.unknown_types:
            chunk.unknown_types.add(label)
            chunk.error(ctx.path, line_no, f"unknown line type ({label}): ignored (first line"
                        " of this type in this read)", "warning")


def system_line(obj: dict, session_id, agent_id, ts_text, ctx: FileContext, line_no: int,
                chunk: Chunk) -> None:
    """A compaction row for a ``compact_boundary`` / ``microcompact_boundary`` system line."""
    subtype = obj.get("subtype")
    if subtype in ("compact_boundary", "microcompact_boundary"):
        meta = obj.get("compactMetadata") or obj.get("microcompactMetadata") or {}
        meta = meta if isinstance(meta, dict) else {}
        chunk.compactions.append({
            "session_id": session_id, "agent_id": agent_id, "ts": to_utc(ts_text),
            "kind": subtype, "trigger": kept(meta.get("trigger"), 80),
            "pre_tokens": _tokens(meta.get("preTokens"), "preTokens", ctx, line_no, chunk),
            "source_file": ctx.path, "line": line_no,
        })


def reported_cost(value, ctx: FileContext, line_no: int, chunk: Chunk) -> float | None:
    """The line's own ``costUSD`` (older Claude Code versions write it), NULL when absent.

    A value that is not a number from 0 to MAX_COST is a warning row and NULL.
    """
    if value is None:
        return None
    if type(value) in (int, float) and 0 <= value <= MAX_COST:
        return float(value)
    chunk.error(ctx.path, line_no, f"costUSD is {_shown(value)}, not a cost in USD: NULL",
                "warning")
    return None


def _assistant(message: dict, request_id, session_id, agent_id, ts_text, cwd, ctx: FileContext,
               line_no: int, chunk: Chunk, nested: bool, cost: float | None = None,
               branch=None) -> None:
    get = message.get
    usage = get("usage")
    ts = to_utc(ts_text)
    if isinstance(usage, dict):
        use = usage.get
        creation = use("cache_creation")
        creation = creation.get if isinstance(creation, dict) else _no_value

        def tokens(value, name: str, zero: bool = True):
            if type(value) is int and 0 <= value <= MAX_TOKENS:
                return value
            if value is None:  # absent or null: 0 as ccusage counts it (no warning)
                return 0 if zero else None
            return _tokens(value, name, ctx, line_no, chunk)

        chunk.requests.append((
            session_id, agent_id,
            request_id, ident(get("id")),
            kept(get("model"), 80), ts,
            tokens(use("input_tokens"), "input_tokens"),
            tokens(use("output_tokens"), "output_tokens"),
            tokens(use("cache_creation_input_tokens"), "cache_creation_input_tokens"),
            tokens(creation("ephemeral_5m_input_tokens"), "ephemeral_5m_input_tokens", False),
            tokens(creation("ephemeral_1h_input_tokens"), "ephemeral_1h_input_tokens", False),
            tokens(use("cache_read_input_tokens"), "cache_read_input_tokens"),
            kept(use("speed"), 40),
            nested, kept(cwd, 300), cost, kept(branch, 200),
            ctx.path, line_no,
        ))
        if ts is None:  # counted in totals, left out of dated views (counting rule 4)
            chunk.error(ctx.path, line_no, UNDATED, "warning")
    elif usage is not None:
        chunk.error(ctx.path, line_no, f"usage is {_shown(usage)}, not an object: no tokens"
                    " read", "warning")
    scan_content(get("content"), session_id, agent_id, ts, ctx, line_no, chunk)


def scan_content(content, session_id, agent_id, ts, ctx: FileContext, line_no: int,
                 chunk: Chunk) -> None:
    """Tool calls and context-broker blocks of an assistant message's content list."""
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                tool_call(block, session_id, agent_id, ts, ctx, line_no, chunk)
            elif isinstance(block, dict) and broker.marked(block.get("text")):
                broker.scan(block["text"], session_id, agent_id, ts, ctx.path, line_no,
                                   chunk)  # context-broker inhale/expire blocks (SPEC §7)
            if agent_id is None and isinstance(block, dict) and block.get("type") == "text":
                chunk.marks += filter(None, [marks.redirect_mark(  # ADR-019 redirect
                    block.get("text"), session_id, agent_id, ts, ctx.path, line_no)])


def tool_call(block: dict, session_id, agent_id, ts, ctx: FileContext, line_no: int,
               chunk: Chunk) -> None:
    name = _str(block.get("name")) or "?"
    args = block.get("input") if isinstance(block.get("input"), dict) else {}
    file_path = pattern = launched = command = None
    if name in FILE_TOOLS:
        file_path = _str(args.get("file_path")) or _str(args.get("notebook_path"))
    elif name in SEARCH_TOOLS:
        file_path = _str(args.get("path"))
        pattern = _str(args.get("pattern"))
    elif name in LAUNCH_TOOLS:
        launched = _str(args.get("subagent_type")) or "general-purpose"
    elif name == "Bash":
        command = _str(args.get("command"))
    chunk.tool_calls.append((
        session_id, agent_id, ts, kept(name, 80),
        ident(block.get("id")),
        kept(file_path, 500), redact_truncate(pattern, 200) if pattern else None,
        kept(launched, 80),
        redact_truncate(command, COMMAND_CHARS) if command else None,
        bool(command and _GIT_COMMIT.search(command)),
        ctx.path, line_no,
    ))
    if name in MARKED_TOOLS:  # to-dos and workspace decisions (issue 13)
        chunk.marks += marks.tool_marks(name, args, _str(block.get("id")), session_id,
                                               agent_id, ts, ctx.path, line_no)


def user_line(obj: dict, session_id, agent_id, ts_text, ctx: FileContext, line_no: int,
              chunk: Chunk) -> None:
    """Tool result sizes, subagent links and subagent answers' broker blocks of a user line."""
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if message is not None and not isinstance(message, dict):
        chunk.error(ctx.path, line_no, f"user message is {_shown(message)}, not an object:"
                    " nothing read from it", "warning")
    tool_use_ids = []
    if agent_id is None:  # the type / mode keywords of a human prompt (SPEC §2.7)
        mark = marks.prompt_mark(obj, session_id, to_utc(ts_text), ctx.path, line_no)
        if mark:
            chunk.marks.append(mark)
    if isinstance(content, list):
        answer = broker.subagent_answer(obj)
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                tool_use_id = ident(block.get("tool_use_id"))
                tool_use_ids.append(tool_use_id)
                chunk.tool_results.append((
                    session_id, agent_id,
                    tool_use_id, to_utc(ts_text),
                    size(block.get("content")),
                    block.get("is_error") is True,
                    ctx.path, line_no,
                ))
                if answer:  # a subagent's answer: a broker subagent's blocks (SPEC §7)
                    broker.scan_result(block.get("content"), session_id, agent_id,
                                              to_utc(ts_text), ctx.path, line_no, chunk)
    result = obj.get("toolUseResult")
    if isinstance(result, dict) and _str(result.get("agentId")):
        chunk.agent_links.append({
            "session_id": session_id, "agent_id": ident(result.get("agentId")),
            "tool_use_id": tool_use_ids[0] if tool_use_ids else None,
            "agent_type": redact_truncate(_str(result.get("agentType")), 80),
            "source_file": ctx.path, "line": line_no,
        })


def progress_line(obj: dict, session_id, ts_text, ctx: FileContext, line_no: int,
                  chunk: Chunk) -> None:
    """Subagent calls nested in ``progress`` lines count like any other call (SPEC §7)."""
    data = obj.get("data")
    if not isinstance(data, dict):
        return
    agent_id = ident(data.get("agentId"))
    outer = data.get("message")
    if agent_id and _str(obj.get("parentToolUseID")):
        progress_link(chunk, session_id, agent_id, obj["parentToolUseID"], ctx.path, line_no)
    if not isinstance(outer, dict) or outer.get("type") != "assistant":
        return
    inner = outer.get("message")
    if isinstance(inner, dict):
        nested_ts = outer.get("timestamp")
        nested_ts = ts_text if nested_ts is None else checked_ts(nested_ts, ctx, line_no, chunk)
        _assistant(inner, ident(outer.get("requestId")), session_id, agent_id or "progress",
                   nested_ts, obj.get("cwd"), ctx, line_no, chunk, nested=True,
                   branch=obj.get("gitBranch"))


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


def span(chunk: Chunk, session_id, agent_id, ts_text, cwd, path: str) -> None:
    """Widen the (session, agent) span by one line: [first_ts, last_ts, lines, cwd, file]."""
    key = (session_id, agent_id)
    span = chunk.spans.get(key)
    if span is None:
        span = chunk.spans[key] = [None, None, 0, None, path]
    span[2] += 1
    if ts_text:
        if span[0] is None or ts_text < span[0]:
            span[0] = ts_text
        if span[1] is None or ts_text > span[1]:
            span[1] = ts_text
    if isinstance(cwd, str) and cwd:
        span[3] = cwd


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
            "agent_type": redact_truncate(_str(meta.get("agentType")), 80),
            "source_file": ctx.path, "line": None}


def _str(value) -> str | None:
    return value if isinstance(value, str) and value else None


_KEPT: dict[tuple, str | None] = {}  # (text, limit) -> redact_truncate(text, limit)
_KEPT_MAX = 100_000


def kept(value, limit: int) -> str | None:
    """``redact_truncate(_str(value), limit)``, memoised (cwd, model, names, paths repeat)."""
    key = (value, limit)
    try:
        return _KEPT[key]
    except KeyError:
        pass
    except TypeError:  # an unhashable value (list, dict) is not a string: None
        return None
    text = redact_truncate(_str(value), limit)
    if len(_KEPT) >= _KEPT_MAX:
        _KEPT.clear()
    _KEPT[key] = text
    return text


# Identifiers the API generates (message, request, tool-use ids): no secret has these shapes,
# and they are unique per line, so redacting each (a cache miss, every rule run) was a fifth
# of the parse time. Any other id goes through kept().
_ID_PREFIXES = ("msg_", "req_", "toolu_", "srvtoolu_")  # then 8-64 ASCII letters and digits
GENERATED_ID = re.compile(  # one C call (fast tests it before calling ident())
    "(?:" + "|".join(_ID_PREFIXES) + ")[A-Za-z0-9]{8,64}").fullmatch


_IDENTS: dict[str, str | None] = {}  # value -> ident(value), for ids that repeat (session, agent)
_MISSING = object()


def ident(value) -> str | None:
    """An identifier as stored: as is when it has a generated id's shape, else kept(value)."""
    if type(value) is not str:
        return None  # kept() of anything but a string
    text = _IDENTS.get(value, _MISSING)  # a session id repeats on every line: one lookup
    if text is not _MISSING:
        return text
    if GENERATED_ID(value):
        return value  # unique per call: not memoised
    if 0 < len(value) <= 200 and not has_candidate(value, value.lower()):
        text = value  # kept(value, 200) without its memo: no rule can apply, nothing cut
    else:
        text = kept(value, 200)
    if len(_IDENTS) >= _KEPT_MAX:
        _IDENTS.clear()
    _IDENTS[value] = text
    return text


def _no_value(_key):
    return None


def _tokens(value, name: str, ctx: FileContext, line_no: int, chunk: Chunk) -> int | None:
    """A token count that is not a plain int in range: the value when unambiguous, else NULL.

    Integral floats (``12.0``) load silently, as before; digits in a string (``"12"``) load
    with a warning; fractions, negatives, booleans, counts past BIGINT (2^63, ``1e25``) and
    anything else are NULL with a warning: never a silent 0, never a failed commit.
    """
    if value is None:
        return None
    if type(value) is int and 0 <= value <= MAX_TOKENS:
        return value
    if isinstance(value, float) and value.is_integer() and 0 <= value <= MAX_TOKENS:
        return int(value)
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 19:
        chunk.error(ctx.path, line_no, f"{name} given as text ({_shown(value)}): read as"
                    " a number", "warning")
        return int(value)
    chunk.error(ctx.path, line_no, f"{name} is {_shown(value)}: not a token count, NULL",
                "warning")
    return None


def size(content) -> int:
    """Bytes of a tool result's text (its size is kept, never its content)."""
    if isinstance(content, str):
        return _utf8_len(content)
    if isinstance(content, list):
        total = 0
        for item in content:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                total += _utf8_len(item["text"])
        return total
    return 0


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", errors="replace"))


__all__ = ["SOURCE", "Chunk", "FileContext", "base_model", "checked_ts", "ident", "kept",
           "load_line", "parse_object", "progress_line", "progress_link", "read_meta", "redact",
           "scan_content", "span", "span_rows", "system_line", "to_utc", "user_line"]
