"""Claude Code transcripts (SPEC §7): which files, and how one line becomes rows.

A transcript tree is ``projects/<encoded-cwd>/<session>.jsonl`` with subagents either inline
(``isSidechain`` lines), in ``<session>/subagents/agent-<id>.jsonl`` (+ ``.meta.json``), in
older project-level ``agent-<id>.jsonl`` files, or nested in ``progress`` lines of the parent.
This module only parses: :mod:`brainlab.store.claude_ingest` reads byte ranges and writes.

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

from brainlab.sources import claude_broker, claude_marks
from brainlab.sources.redact import redact, redact_truncate

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
_MARKED_TOOLS = {"TodoWrite", "TaskCreate", "TaskUpdate", "Edit", "Write", "MultiEdit"}
_GIT_COMMIT = re.compile(
    r"(?:^|[;&|(\s`])git\s+(?:(?:-C|-c)\s+\S+\s+|--?[\w-]+(?:=\S+)?\s+)*commit\b")
REQUEST_COLUMNS = (
    "session_id", "agent_id", "request_id", "message_id", "model", "ts", "input_tokens",
    "output_tokens", "cache_creation_tokens", "cache_creation_5m_tokens",
    "cache_creation_1h_tokens", "cache_read_tokens", "speed", "is_nested", "cwd",
    "source_file", "line")
TOOL_CALL_COLUMNS = (
    "session_id", "agent_id", "ts", "tool", "tool_use_id", "file_path", "pattern",
    "launched_subagent_type", "command", "is_git_commit", "source_file", "line")
TOOL_RESULT_COLUMNS = (
    "session_id", "agent_id", "tool_use_id", "ts", "result_bytes", "is_error", "source_file",
    "line")
_DATE_SUFFIX = re.compile(r"-\d{8}$")
_AGENT_FILE = re.compile(r"^agent-(.+)\.jsonl$")


def discover(root: Path) -> list[Path]:
    """Every ``*.jsonl`` under ``root`` (a config dir, its ``projects/``, or one project)."""
    root = Path(root)
    if root.is_file():
        return [root]
    projects = root / "projects"
    base = projects if projects.is_dir() else root
    return sorted(p for p in base.rglob("*.jsonl") if p.is_file())


@dataclass(frozen=True)
class FileContext:
    """What a file's place in the tree says about its lines (used when a line does not say)."""

    path: str
    session_id: str | None  # from the file name (main file, or the folder of subagents/)
    agent_id: str | None  # from agent-<id>.jsonl
    layout: str  # main | subagent | project-agent

    @classmethod
    def of(cls, path: Path) -> FileContext:
        """Derive session and agent from the path, following both subagent layouts."""
        match = _AGENT_FILE.match(path.name)
        if match and path.parent.name == "subagents":
            return cls(str(path), path.parent.parent.name, match.group(1), "subagent")
        if match:
            return cls(str(path), None, match.group(1), "project-agent")
        return cls(str(path), path.stem, None, "main")


@dataclass
class Chunk:
    """Rows and errors parsed from a run of complete lines of one file."""

    # the three high-volume tables hold tuples in the table's column order (*_COLUMNS)
    requests: list[tuple] = field(default_factory=list)
    tool_calls: list[tuple] = field(default_factory=list)
    tool_results: list[tuple] = field(default_factory=list)
    agent_links: list[dict] = field(default_factory=list)
    compactions: list[dict] = field(default_factory=list)
    spans: dict[tuple, list] = field(default_factory=dict)  # see _span()
    errors: list[dict] = field(default_factory=list)
    unknown_types: set[str] = field(default_factory=set)
    broker: dict[str, list[dict]] = field(default_factory=dict)  # claude_broker's table rows
    marks: list[tuple] = field(default_factory=list)  # cc_marks rows (claude_marks)

    def error(self, file: str, line: int | None, reason: str, severity: str = "error") -> None:
        """Record one problem as an ``ingest_errors`` row."""
        self.errors.append({"file": file, "line": line, "reason": reason, "source": SOURCE,
                            "severity": severity})


_UTC_TEXT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?Z")


def to_utc(value) -> str | None:
    """ISO-8601 text to naive UTC text DuckDB casts to TIMESTAMP; None if unreadable.

    Claude Code writes ``...Z`` (UTC): kept as is without the Z, which is fast. Any other
    offset is converted to UTC first (DuckDB's own cast would drop the offset).
    """
    if not isinstance(value, str) or not value:
        return None
    if _UTC_TEXT.fullmatch(value):
        return value[:-1]
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.isoformat()


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
            if objects:
                chunk.error(ctx.path, line_no, f"{len(objects)} JSON objects glued on one line:"
                            " split and loaded", "warning")
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
    except ValueError:
        return []
    return objects if len(objects) > 1 else []


def parse_object(obj: dict, ctx: FileContext, line_no: int, chunk: Chunk) -> None:
    """Turn one transcript line (a JSON object) into rows of ``chunk``."""
    # hot path (every line): one lookup per field, _str inlined
    get = obj.get
    kind = get("type")
    value = get("sessionId")
    session_id = value if isinstance(value, str) and value else ctx.session_id
    value = get("agentId")
    agent_id = value if isinstance(value, str) and value else ctx.agent_id
    if agent_id is None and get("isSidechain") is True:
        agent_id = "sidechain"  # older inline subagent lines name no agent
    ts_text = get("timestamp")
    if not isinstance(ts_text, str):
        ts_text = None
    cwd = get("cwd")
    if session_id is not None:
        _span(chunk, session_id, agent_id, ts_text, cwd, ctx.path)
    if kind == "assistant":
        message = get("message")
        if isinstance(message, dict):
            _assistant(message, _str(get("requestId")), session_id, agent_id, ts_text,
                       cwd, ctx, line_no, chunk, nested=False)
    elif kind == "user":
        _user(obj, session_id, agent_id, ts_text, ctx, line_no, chunk)
    elif kind == "progress":
        _progress(obj, session_id, ts_text, ctx, line_no, chunk)
    elif kind == "system":
        subtype = obj.get("subtype")
        if subtype in ("compact_boundary", "microcompact_boundary"):
            meta = obj.get("compactMetadata") or obj.get("microcompactMetadata") or {}
            meta = meta if isinstance(meta, dict) else {}
            chunk.compactions.append({
                "session_id": session_id, "agent_id": agent_id, "ts": to_utc(ts_text),
                "kind": subtype, "trigger": _str(meta.get("trigger")),
                "pre_tokens": _int(meta.get("preTokens")), "source_file": ctx.path,
                "line": line_no,
            })
    elif kind not in KNOWN_TYPES and (kind is None or isinstance(kind, str)):
        label = "missing" if kind is None else redact_truncate(kind, 40)
        if label not in chunk.unknown_types:
            chunk.unknown_types.add(label)
            chunk.error(ctx.path, line_no, f"unknown line type ({label}): ignored (first line"
                        " of this type in this read)", "warning")


def _assistant(message: dict, request_id, session_id, agent_id, ts_text, cwd, ctx: FileContext,
               line_no: int, chunk: Chunk, nested: bool) -> None:
    get = message.get
    usage = get("usage")
    ts = to_utc(ts_text)
    if isinstance(usage, dict):
        use = usage.get
        creation = use("cache_creation")
        creation = creation.get if isinstance(creation, dict) else _no_value
        # token counts are ints in every real line: test that first, _int() for the rest
        inp, out = use("input_tokens"), use("output_tokens")
        cc_in, cc_read = use("cache_creation_input_tokens"), use("cache_read_input_tokens")
        cc_5m, cc_1h = creation("ephemeral_5m_input_tokens"), creation("ephemeral_1h_input_tokens")
        chunk.requests.append((
            session_id, agent_id,
            request_id, _str(get("id")),
            _kept(get("model"), 80), ts,
            inp if type(inp) is int else _int(inp) or 0,
            out if type(out) is int else _int(out) or 0,
            cc_in if type(cc_in) is int else _int(cc_in) or 0,
            cc_5m if type(cc_5m) is int else _int(cc_5m),
            cc_1h if type(cc_1h) is int else _int(cc_1h),
            cc_read if type(cc_read) is int else _int(cc_read) or 0,
            _str(use("speed")),
            nested, _kept(cwd, 300),
            ctx.path, line_no,
        ))
    content = get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                _tool_call(block, session_id, agent_id, ts, ctx, line_no, chunk)
            elif isinstance(block, dict) and claude_broker.marked(block.get("text")):
                claude_broker.scan(block["text"], session_id, agent_id, ts, ctx.path, line_no,
                                   chunk)  # context-broker inhale/expire blocks (SPEC §7)


def _tool_call(block: dict, session_id, agent_id, ts, ctx: FileContext, line_no: int,
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
        session_id, agent_id, ts, _kept(name, 80),
        _str(block.get("id")),
        _kept(file_path, 500), redact_truncate(pattern, 200) if pattern else None,
        _kept(launched, 80),
        redact_truncate(command, COMMAND_CHARS) if command else None,
        bool(command and _GIT_COMMIT.search(command)),
        ctx.path, line_no,
    ))
    if name in _MARKED_TOOLS:  # to-dos and workspace decisions (issue 13)
        chunk.marks += claude_marks.tool_marks(name, args, _str(block.get("id")), session_id,
                                               agent_id, ts, ctx.path, line_no)


def _user(obj: dict, session_id, agent_id, ts_text, ctx: FileContext, line_no: int,
          chunk: Chunk) -> None:
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    tool_use_ids = []
    if agent_id is None:  # the type / mode keywords of a human prompt (SPEC §2.7)
        mark = claude_marks.prompt_mark(obj, session_id, to_utc(ts_text), ctx.path, line_no)
        if mark:
            chunk.marks.append(mark)
    if isinstance(content, list):
        answer = claude_broker.subagent_answer(obj)
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                tool_use_id = _str(block.get("tool_use_id"))
                tool_use_ids.append(tool_use_id)
                chunk.tool_results.append((
                    session_id, agent_id,
                    tool_use_id, to_utc(ts_text),
                    _size(block.get("content")),
                    block.get("is_error") is True,
                    ctx.path, line_no,
                ))
                if answer:  # a subagent's answer: a broker subagent's blocks (SPEC §7)
                    claude_broker.scan_result(block.get("content"), session_id, agent_id,
                                              to_utc(ts_text), ctx.path, line_no, chunk)
    result = obj.get("toolUseResult")
    if isinstance(result, dict) and _str(result.get("agentId")):
        chunk.agent_links.append({
            "session_id": session_id, "agent_id": _str(result.get("agentId")),
            "tool_use_id": tool_use_ids[0] if tool_use_ids else None,
            "agent_type": redact_truncate(_str(result.get("agentType")), 80),
            "source_file": ctx.path, "line": line_no,
        })


def _progress(obj: dict, session_id, ts_text, ctx: FileContext, line_no: int,
              chunk: Chunk) -> None:
    """Subagent calls nested in ``progress`` lines count like any other call (SPEC §7)."""
    data = obj.get("data")
    if not isinstance(data, dict):
        return
    agent_id = _str(data.get("agentId"))
    outer = data.get("message")
    if agent_id and _str(obj.get("parentToolUseID")):
        chunk.agent_links.append({
            "session_id": session_id, "agent_id": agent_id,
            "tool_use_id": _str(obj.get("parentToolUseID")), "agent_type": None,
            "source_file": ctx.path, "line": line_no,
        })
    if not isinstance(outer, dict) or outer.get("type") != "assistant":
        return
    inner = outer.get("message")
    if isinstance(inner, dict):
        nested_ts = outer.get("timestamp") if isinstance(outer.get("timestamp"), str) else ts_text
        _assistant(inner, _str(outer.get("requestId")), session_id, agent_id or "progress",
                   nested_ts, obj.get("cwd"), ctx, line_no, chunk, nested=True)


def _span(chunk: Chunk, session_id, agent_id, ts_text, cwd, path: str) -> None:
    # a span is [first_ts, last_ts, lines, cwd, file] per (session, agent); see span_rows()
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


def _kept(value, limit: int) -> str | None:
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


def _no_value(_key):
    return None


def _int(value) -> int | None:
    if type(value) is int:  # the usual case, first
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _size(content) -> int:
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


__all__ = ["SOURCE", "Chunk", "FileContext", "base_model", "discover", "load_line",
           "parse_object", "read_meta", "redact", "span_rows", "to_utc"]
