"""Read one transcript file's new bytes into rows: line splitting, UTF-8 checks, fast path.

Pure: it runs in a worker process (or in the ingest's own for small runs and huge files).
Each complete line goes to the msgspec fast path (:mod:`brainlab.transcripts.fast`) and to
the general orjson path (:mod:`brainlab.transcripts.tolerant`) when it does not fit; an
unfinished last line is left for the next run. Rows come back per table, typed
(:mod:`brainlab.transcripts.rows`), with the file's error rows and new offsets.
"""

from __future__ import annotations

import codecs
import dataclasses
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from brainlab.sources.redact import redact, redact_truncate
from brainlab.transcripts import build, fast, tolerant
from brainlab.transcripts.plan import FileJob, edge_hashes
from brainlab.transcripts.rows import to_arrow, to_columns
from brainlab.transcripts.values import SOURCE

READ_BLOCK = 32 * 1024 * 1024  # bytes read at a time from a transcript


@dataclass
class FileRead:
    """One file's parsed new lines, ready to write.

    ``rows`` holds its tables; in a :class:`GroupRead` the group holds them and ``rows`` is
    empty, ``counts`` then saying how many rows (all tables) and request rows are the file's.
    """

    rows: dict[str, Any]  # table -> pyarrow.Table, or Columns
    errors: list[dict]
    bytes_done: int
    lines_done: int
    pending: int
    head: str
    layout: str
    counts: tuple[int, int] | None = None  # (rows, request rows) when the group holds them
    tail: str | None = None  # hash of the last HEAD_BYTES read (plan.edge_hashes)


@dataclass
class GroupRead:
    """Several files parsed in one task: their FileReads and their rows as one set of tables.

    Converting rows to Arrow costs a call per column per table, so small files pay it once
    per group instead of once each (and the writer receives a few large tables).
    """

    reads: list[FileRead]
    rows: dict[str, Any]  # table -> pyarrow.Table, or Columns


def _row_lists(chunk: build.Chunk, final: bool) -> dict[str, list]:
    """The chunk's rows per table (the file's SPEC §7 candidate requests only)."""
    rows = {
        "cc_request_lines": last_per_call(chunk.requests),
        "cc_tool_call_lines": chunk.tool_calls, "cc_tool_results": chunk.tool_results,
        "cc_agent_links": chunk.agent_links, "cc_compactions": chunk.compactions,
        "cc_marks": chunk.marks,
        **chunk.broker,  # broker_blocks / broker_block_files (broker)
    }
    if final:
        rows["cc_spans"] = build.span_rows(chunk)
    return {name: table_rows for name, table_rows in rows.items() if table_rows}


def _convert(rows: dict[str, list], arrow: bool) -> dict:
    convert = to_arrow if arrow else to_columns
    # Arrow tables travel cheaply from a worker process (buffers, not millions of objects)
    return {name: convert(name, table_rows) for name, table_rows in rows.items()}


def parse_group(jobs: list[FileJob], arrow: bool = True) -> GroupRead:
    """Parse several files (pure: a worker's task); a file that fails is an error row alone."""
    reads, merged = [], {}
    for job in jobs:
        try:
            rows, read = _parse_rows(job)
        except Exception as exc:  # a parser bug or an unreadable file must not cost the others
            reads.append(_failed(job, exc))
            continue
        read.counts = (sum(map(len, rows.values())), len(rows.get("cc_request_lines", ())))
        reads.append(read)
        for name, table_rows in rows.items():
            merged.setdefault(name, []).extend(table_rows)
    try:
        return GroupRead(reads, _convert(merged, arrow))
    except Exception:  # a row Arrow refuses: each file alone, so only its file fails
        return GroupRead([parse_safely(job, arrow) for job in jobs], {})


def parse_file(job: FileJob, arrow: bool = True,
               on_rows: Callable[[dict], None] | None = None) -> FileRead:
    """Parse the complete lines of ``job`` (pure: runs in a worker process).

    Rows come back as Arrow tables (cheap to send from a worker), or with ``arrow=False`` as
    column lists (building Arrow arrays from Python objects makes pyarrow import pandas,
    about half a second, which would be most of a small incremental run). With ``on_rows``,
    the rows of each block read go to it as they come, and the FileRead holds only the rest.
    """
    rows, read = _parse_rows(job, (lambda taken: on_rows(_convert(taken, arrow)))
                             if on_rows else None)
    read.rows = _convert(rows, arrow)
    return read


def _parse_rows(job: FileJob, on_rows: Callable[[dict], None] | None = None
                ) -> tuple[dict[str, list], FileRead]:
    """Parse ``job`` into row lists per table, and its FileRead without rows."""
    path = Path(job.file)
    ctx = build.FileContext.of(path)
    if job.path != ctx.path:  # rows carry the stored (redacted) path and ids, issue 29
        ctx = dataclasses.replace(ctx, path=job.path, session_id=redact(ctx.session_id),
                                  agent_id=redact(ctx.agent_id))
    chunk = build.Chunk()

    def tables(final: bool) -> dict:
        return _row_lists(chunk, final)

    def flush() -> None:
        taken = tables(final=False)
        chunk.requests, chunk.tool_calls, chunk.tool_results = [], [], []
        chunk.agent_links, chunk.compactions, chunk.broker = [], [], {}
        chunk.marks = []
        if taken:
            on_rows(taken)

    bytes_done, lines_done, pending = _read(path, job.offset, job.lines_done, job.size, ctx,
                                            chunk, flush if on_rows else None)
    if ctx.layout == "subagent" and job.offset == 0:
        meta = build.read_meta(path, ctx)
        if meta:
            chunk.agent_links.append(meta)
    head, tail = edge_hashes(path, bytes_done)
    return tables(final=True), FileRead({}, chunk.errors, bytes_done, lines_done, pending,
                                         head, ctx.layout, tail=tail)


def last_per_call(requests: list[tuple]) -> list[tuple]:
    """Keep, per call, the row the SPEC §7 view (cc_request_dedup) would keep among these.

    All rows come from one file. Rows of one (message.id, requestId, session, chain) are
    copies of one call in one session, which the view never splits, and its order (main
    chain first, then the larger token total, the larger reported cost, the latest, then
    file and line) reduces to (token total, cost, ts, line) among them: dropping the others
    here changes no result and halves the rows stored. Timestamps are ISO text of one shape,
    so text order is time order; rows without a timestamp are kept.
    """
    best: dict[tuple, tuple] = {}  # (message, request, session, main) -> (order, row)
    kept = []
    for row in requests:
        message_id, ts = row[3], row[5]
        if message_id is None or ts is None:
            kept.append(row)
            continue
        total = (row[6] or 0) + (row[7] or 0) + (row[8] or 0) + (row[11] or 0)
        cost = row[15]
        order = (total, cost is not None, cost or 0.0, ts, row[-1])
        key = (message_id, row[2], row[0], row[1] is None)
        old = best.get(key)
        if old is None or order > old[0]:
            best[key] = (order, row)
    kept.extend(row for _, row in best.values())
    return kept


def parse_safely(job: FileJob, arrow: bool = True,
                  on_rows: Callable[[dict], None] | None = None) -> FileRead:
    """Parse one file; an unexpected failure becomes an error row, never a lost run."""
    try:
        return parse_file(job, arrow, on_rows)
    except Exception as exc:  # a parser bug or an unreadable file must not cost the others
        return _failed(job, exc)


def _failed(job: FileJob, exc: Exception) -> FileRead:
    """A file whose parse failed: one error row; its offset unchanged (read again next run)."""
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    error = {"file": job.path, "line": None, "reason": f"parser failure"
             f" ({type(exc).__name__}: {redact_truncate(why, 200)}); file left for the"
             " next run", "source": SOURCE, "severity": "error"}
    try:
        head, tail = edge_hashes(Path(job.file), job.offset)
    except OSError:
        head, tail = "", None
    return FileRead({}, [error], job.offset, job.lines_done, 0, head, "main", tail=tail)


def _read(path: Path, offset: int, lines_done: int, size: int, ctx: build.FileContext,
          chunk: build.Chunk, flush: Callable[[], None] | None = None) -> tuple[int, int, int]:
    """Parse complete lines from ``offset``; return (bytes_done, lines_done, pending_bytes).

    Reads blocks of READ_BLOCK bytes (a longer line simply spans several) and never past
    ``size``, the size seen when the run started (the writer may still be appending). Each
    line goes to the msgspec fast path first, to the general orjson path when it does not
    fit. ``flush`` is called after each block (the caller takes the rows so far).
    """
    if size == 0:
        chunk.error(ctx.path, None, "empty file: nothing to read", "warning")
        return 0, 0, 0
    position, carry = offset, b""
    typed_line = fast.parse_line
    with open(path, "rb") as handle:
        handle.seek(offset)
        remaining = size - offset
        while remaining > 0:
            block = handle.read(min(READ_BLOCK, remaining))
            if not block:
                break
            remaining -= len(block)
            data = carry + block if carry else block
            if position == 0 and data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark
                data = b"   " + data[3:]  # blanked: offsets and line numbers unchanged
            last = data.rfind(b"\n") + 1
            # msgspec does not check the UTF-8 of the fields it skips: check the block once
            # (lines of a block that fails are checked one by one; the orjson path repairs)
            checked = data.isascii() or _valid_utf8_block(data, last)
            # lines as zero-copy views of the block
            view, find, start = memoryview(data), data.find, 0
            while (end := find(b"\n", start, last)) >= 0:
                lines_done += 1
                if end > start and (checked or _valid_utf8(data[start:end])):
                    if not typed_line(view, data, start, end, ctx, lines_done, chunk):
                        _slow(data[start:end], ctx, lines_done, chunk)
                elif end > start:
                    _slow(data[start:end], ctx, lines_done, chunk)
                start = end + 1
            position += start
            carry = data[start:]  # after the last newline: an unfinished line (or b"")
            if flush is not None:
                flush()
    if carry:
        # the last line has no newline: complete if it parses, else still being written
        try:
            orjson.loads(carry)
        except orjson.JSONDecodeError:
            return position, lines_done, len(carry)
        position += len(carry)
        lines_done += 1
        _slow(carry, ctx, lines_done, chunk)
    return position, lines_done, 0


def _slow(raw: bytes, ctx: build.FileContext, line_no: int, chunk: build.Chunk) -> None:
    """The tolerant decoder: orjson, repairs and error rows (tolerant.load_line)."""
    if raw.isspace():
        return
    for obj in tolerant.load_line(raw, ctx, line_no, chunk):
        tolerant.parse_object(obj, ctx, line_no, chunk)


_ASCII = bytes(range(128))
ARROW_CHECK_MIN_BYTES = 8 * 1024 * 1024  # a smaller block is checked by Python's decoder
# (~2 ms a MB, building the text) unless pyarrow is loaded already: importing it costs
# ~0.1 CPU-s, most of a small ingest; Arrow's validation costs ~0.5 ms a MB, no copy


def _valid_utf8_block(data: bytes, end: int, arrow: bool | None = None) -> bool:
    """Whether ``data[:end]`` is UTF-8, as strict as Python's decoder.

    No surrogates, overlong forms or code points past U+10FFFF. ``arrow``: check with
    Arrow's validation (no copy; 4x faster than decoding), else with Python's decoder;
    by default Arrow for a large block or once pyarrow is imported.
    """
    if arrow is None:
        arrow = end >= ARROW_CHECK_MIN_BYTES or "pyarrow" in sys.modules
    if not arrow:
        try:
            codecs.utf_8_decode(memoryview(data)[:end], "strict", True)
        except UnicodeDecodeError:
            return False
        return True
    import pyarrow as pa

    offsets = pa.py_buffer(struct.pack("<qq", 0, end))  # not pa.array: it imports pandas
    text = pa.LargeStringArray.from_buffers(1, offsets, pa.py_buffer(memoryview(data)[:end]))
    try:
        text.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def _valid_utf8(data: bytes) -> bool:
    """Whether ``data`` is UTF-8, checked on its non-ASCII bytes only (4x cheaper than all).

    Multi-byte sequences are made of bytes >= 0x80 only, so each run of them must decode on
    its own; runs are checked joined, so two broken runs that happen to join into a valid
    sequence pass (nothing read from such a line is affected: msgspec checks every string it
    decodes, orjson every content list it decodes).
    """
    if data.isascii():
        return True
    try:
        data.translate(None, _ASCII).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
