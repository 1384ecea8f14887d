"""Split one file of the collector's file exporter into OTLP messages, from a byte offset on.

The exporter writes (collector-contrib ``exporter/fileexporter``, OTel "OTLP File Exporter"):

- ``json``: one OTLP/JSON export request per line (the default);
- ``framed``: each message preceded by its length as a 4-byte big-endian unsigned integer,
  the message being protobuf (``format: proto``), or JSON, or either compressed on its own
  with zstd (``compression: zstd`` without the native-compression feature gate);
- ``zstd-stream``: the whole file one zstd stream (native compression) holding JSON lines or
  length-prefixed messages.

JSON lines and framed files grow by appending, so a later run reads from the byte offset
where the previous one stopped; an unfinished last line or frame is left for the next run,
unless the file has not been modified for ``STALE_PARTIAL_MINUTES`` (spec/ranges.py): then
the cut part is an error row. A zstd stream cannot be read from the middle: it is read whole
again when it grew.

Hostile input stays bounded (issue 47 item 2, the limits in spec/ranges.py): everything is
read as a stream, block by block, never a whole file in memory; a line or message longer than
``MESSAGE_MAX_BYTES`` after decompression is an error row and skipped; a zstd file or frame
that decompresses past ``DECOMPRESS_RATIO_MAX`` times its size is an error row and the rest is
not read; :func:`read` yields one :class:`Chunk` per ``READ_BATCH_BYTES`` of content, each
written in its own transaction, so memory holds one batch's rows whatever the input.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from brainlab.spec import ranges

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
BLOCK = 1 << 20  # bytes read from the file (or the decompressor) at a time


@dataclass(frozen=True)
class Limits:
    """The caps one read applies (defaults: spec/ranges.py; tests pass small ones)."""

    message_max: int = ranges.MESSAGE_MAX_BYTES
    ratio_max: int = ranges.DECOMPRESS_RATIO_MAX
    batch: int = ranges.READ_BATCH_BYTES
    problems: int = ranges.PROBLEMS_PER_READ
    stale_seconds: float = ranges.STALE_PARTIAL_MINUTES * 60.0

    def decompressed_max(self, compressed: int) -> int:
        """How far ``compressed`` bytes of zstd may decompress before it is called a bomb."""
        return max(self.message_max, self.ratio_max * compressed)


LIMITS = Limits()


@dataclass
class Message:
    """One OTLP export request as bytes: ``kind`` json or proto, ``line`` its line or frame."""

    line: int
    kind: str
    data: bytes


@dataclass
class Chunk:
    """What one batch of one file gave: messages, problems, and where the next read starts."""

    encoding: str
    messages: list[Message] = field(default_factory=list)
    problems: list[tuple[int | None, str, str]] = field(default_factory=list)  # line, reason, severity
    bytes_done: int = 0
    lines_done: int = 0
    whole: bool = False  # the file was read from its start (a zstd stream): replace its rows
    first: bool = True  # the first batch of this read (a whole read deletes the old rows)
    last: bool = True  # the last batch of this read
    content: int = 0  # content bytes (decompressed) this batch holds
    weight: int = 0  # content plus MESSAGE_WEIGHT_BYTES a message: what closes a batch

    def problem(self, line: int | None, reason: str, severity: str = "error") -> None:
        """Record one problem row."""
        self.problems.append((line, reason, severity))


def sniff(head: bytes) -> str:
    """The encoding of a file from its first bytes: json, framed or zstd-stream."""
    if head.startswith(ZSTD_MAGIC):
        return "zstd-stream"
    stripped = head.lstrip(b" \t\r\n\xef\xbb\xbf")
    if not stripped or stripped[:1] in (b"{", b"["):
        return "json"
    return "framed"


def content_head(path: Path, size: int) -> bytes:
    """The first ``size`` bytes of a file's content: decompressed when it is a zstd stream.

    A file's identity is its content (``ingest.py``): the same export as JSON lines and as
    a zstd stream has one key. At most ``size`` bytes are decompressed.
    """
    with open(path, "rb") as handle:
        head = handle.read(size)
        if not head.startswith(ZSTD_MAGIC):
            return head
        import zstandard

        handle.seek(0)
        try:
            reader = zstandard.ZstdDecompressor().stream_reader(handle, read_across_frames=True)
            return _read_upto(reader.read, size) or head
        except zstandard.ZstdError:
            return head


def read(path: Path, bytes_done: int = 0, lines_done: int = 0, limits: Limits = LIMITS,
         now: float | None = None) -> Iterator[Chunk]:
    """Read ``path`` from ``bytes_done`` (``lines_done`` lines or frames before it), in batches.

    ``now`` (seconds since the epoch, default the clock) decides whether the file is stale:
    unmodified for ``limits.stale_seconds``, its cut last line or frame is final.
    """
    with open(path, "rb") as handle:
        stat = os.fstat(handle.fileno())
        stale = (time.time() if now is None else now) - stat.st_mtime >= limits.stale_seconds
        encoding = sniff(handle.read(4))
        if encoding == "zstd-stream":
            handle.seek(0)
            yield from _stream(handle, stat.st_size, limits, stale)
            return
        handle.seek(bytes_done)
        split = _lines if encoding == "json" else _frames
        yield from split(_Source(handle.read), Chunk(encoding, bytes_done=bytes_done,
                                                     lines_done=lines_done),
                         limits, stale, stat.st_size, bytes_done)


class _Source:
    """A ``read(n)`` callable with a count of the bytes it gave (a file or a decompressor)."""

    def __init__(self, read: Callable[[int], bytes], cap: int | None = None):
        self._read, self.cap, self.given, self.capped = read, cap, 0, False

    def read(self, n: int) -> bytes:
        if self.cap is not None:
            if self.given >= self.cap:
                self.capped = self._read(1) != b""  # more than the cap: a bomb
                return b""
            n = min(n, self.cap - self.given)
        data = self._read(n)
        self.given += len(data)
        return data


def _read_upto(read: Callable[[int], bytes], n: int) -> bytes:
    """Up to ``n`` bytes from ``read`` (which may return fewer per call), b"" at the end."""
    parts, got = [], 0
    while got < n:
        data = read(min(BLOCK, n - got))
        if not data:
            break
        parts.append(data)
        got += len(data)
    return b"".join(parts)


def _next_chunk(chunk: Chunk) -> Chunk:
    return Chunk(chunk.encoding, bytes_done=chunk.bytes_done, lines_done=chunk.lines_done,
                 whole=chunk.whole, first=False)


def _add(chunk: Chunk, limits: Limits, line: int, kind: str, data: bytes) -> None:
    chunk.messages.append(Message(line, kind, data))
    chunk.content += len(data)
    chunk.weight += len(data) + ranges.MESSAGE_WEIGHT_BYTES


def _is(final: bool | Callable[[], bool]) -> bool:
    """``final``, or its answer once the source is at its end.

    A capped stream's cut last line is ours, not the writer's: not final.
    """
    return final() if callable(final) else final


def _lines(source: _Source, chunk: Chunk, limits: Limits, final, size: int,
           base: int) -> Iterator[Chunk]:
    """JSON lines: each complete line a message; a line past the cap an error row, skipped.

    An unfinished last line waits for the next run unless ``final`` (the file is stale or a
    complete stream): then it is read as it is.
    """
    pending: list[bytes] = []  # the unfinished line's parts
    pending_size = 0
    skipping = False  # inside a line longer than the cap
    pos = 0  # source bytes up to the end of the last complete line
    read = 0  # source bytes read so far
    while True:
        block = source.read(BLOCK)
        if not block:
            break
        start = 0
        while True:
            newline = block.find(b"\n", start)
            if newline < 0:
                rest = len(block) - start
                if not skipping:
                    pending_size += rest
                    if pending_size > limits.message_max:
                        skipping, pending, pending_size = True, [], 0
                    else:
                        pending.append(block[start:])
                break
            line = chunk.lines_done + 1
            chunk.lines_done = line
            if skipping or pending_size + newline - start > limits.message_max:
                chunk.problem(line, f"line {line}: longer than {limits.message_max:,} bytes"
                              " (MESSAGE_MAX_BYTES, spec/ranges.py); skipped")
            else:
                raw = b"".join(pending) + block[start:newline] if pending else \
                    block[start:newline]
                if raw.strip():
                    _add(chunk, limits, line, "json", raw)
            skipping, pending, pending_size = False, [], 0
            start = newline + 1
            pos = read + start
            chunk.bytes_done = base + pos
            if chunk.weight >= limits.batch:
                chunk.last = False
                yield chunk
                chunk = _next_chunk(chunk)
        read += len(block)
    if (pending_size or skipping) and _is(final):
        line = chunk.lines_done + 1
        chunk.lines_done = line
        if skipping:
            chunk.problem(line, f"line {line}: longer than {limits.message_max:,} bytes"
                          " (MESSAGE_MAX_BYTES, spec/ranges.py); skipped")
        else:
            raw = b"".join(pending)
            if raw.strip():
                _add(chunk, limits, line, "json", raw)
        chunk.bytes_done = base + read
    yield chunk


def _frames(source: _Source, chunk: Chunk, limits: Limits, final, size: int,
            base: int) -> Iterator[Chunk]:
    """Length-prefixed messages; a frame cut short waits for the next run (unless final).

    A length prefix past ``MESSAGE_MAX_BYTES`` is garbage or not telemetry (random bytes
    read as a length): an error row, the rest of the file not read.
    """
    pos = 0
    unzstd_total = 0
    while True:
        prefix = _read_upto(source.read, 4)
        number = chunk.lines_done + 1
        if len(prefix) < 4:
            if prefix and _is(final):
                chunk.problem(number, f"{len(prefix)} stray bytes at the end; the file has not"
                              f" changed for {limits.stale_seconds / 60:g} minutes")
                pos += len(prefix)
            break
        length = int.from_bytes(prefix, "big")
        if length > limits.message_max:
            chunk.problem(number, f"message {number}: length prefix {length:,} is past"
                          f" {limits.message_max:,} bytes (MESSAGE_MAX_BYTES, spec/ranges.py):"
                          " not telemetry or not a message; rest of the file not read")
            pos = size - base if not chunk.whole else pos
            chunk.bytes_done = base + pos
            chunk.lines_done = number
            break
        payload = _read_upto(source.read, length)
        if len(payload) < length:
            if _is(final):
                chunk.problem(number, f"message {number}: cut short ({len(payload):,} of"
                              f" {length:,} bytes) and the file has not changed for"
                              f" {limits.stale_seconds / 60:g} minutes; not read")
                chunk.lines_done = number
                pos += 4 + len(payload)
            break
        pos += 4 + length
        chunk.lines_done = number
        if payload.startswith(ZSTD_MAGIC):
            cap = min(limits.message_max, limits.decompressed_max(length))
            try:
                payload = _unzstd(payload, cap)
            except Exception as exc:  # noqa: BLE001 - any decoder failure is this message's problem
                chunk.problem(number, f"message {number}: zstd: {exc}")
                chunk.bytes_done = base + pos
                continue
            if payload is None:
                chunk.problem(number, f"message {number}: decompresses past {cap:,} bytes"
                              " (MESSAGE_MAX_BYTES, DECOMPRESS_RATIO_MAX, spec/ranges.py); skipped")
                chunk.bytes_done = base + pos
                continue
            unzstd_total += len(payload)
            if not chunk.whole and unzstd_total > limits.decompressed_max(size):
                chunk.problem(number, f"message {number}: the file's messages decompress past"
                              f" {limits.ratio_max} times its size (DECOMPRESS_RATIO_MAX,"
                              " spec/ranges.py): a decompression bomb; rest of the file not read")
                pos = size - base
                chunk.bytes_done = base + pos
                break
        kind = "json" if payload.lstrip()[:1] == b"{" else "proto"
        _add(chunk, limits, number, kind, payload)
        chunk.bytes_done = base + pos
        if chunk.weight >= limits.batch:
            chunk.last = False
            yield chunk
            chunk = _next_chunk(chunk)
    chunk.bytes_done = base + pos
    yield chunk


def _unzstd(payload: bytes, cap: int) -> bytes | None:
    """One zstd frame decompressed, or None when it holds more than ``cap`` bytes."""
    import zstandard

    reader = zstandard.ZstdDecompressor().stream_reader(payload, read_across_frames=True)
    data = _read_upto(reader.read, cap + 1)
    return None if len(data) > cap else data


class _ZstdReader:
    """``read(n)`` of a zstd stream, fed ``PIECE`` compressed bytes at a time.

    Each piece decompresses to at most a few megabytes (a zstd block is at most 128 KiB of
    output for a few bytes of input), so memory stays bounded whatever the ratio; unlike
    ``stream_reader``, it knows when the input ends inside a frame (a cut stream).
    """

    PIECE = 256

    def __init__(self, handle):
        import zstandard

        self._handle, self._error = handle, zstandard.ZstdError
        self._dctx = zstandard.ZstdDecompressor()
        self._obj = self._dctx.decompressobj()
        self._buffer, self._at = b"", 0
        self.in_frame = False
        self.failure: list[str] = []

    def read(self, n: int) -> bytes:
        while self._at >= len(self._buffer):
            if self.failure:
                return b""
            data = self._handle.read(self.PIECE)
            if not data:
                return b""
            parts = []
            try:
                while data:
                    parts.append(self._obj.decompress(data))
                    if self._obj.eof:  # a frame ended: the next one starts in unused_data
                        data, self._obj = self._obj.unused_data, self._dctx.decompressobj()
                        self.in_frame = False
                    else:
                        data, self.in_frame = b"", True
            except self._error as exc:
                self.failure.append(str(exc))
            self._buffer, self._at = b"".join(parts), 0
        out = self._buffer[self._at:self._at + n]
        self._at += len(out)
        return out


def _stream(handle, size: int, limits: Limits, stale: bool) -> Iterator[Chunk]:
    """A whole-file zstd stream, decompressed block by block into lines or frames.

    Decompressed bytes past ``limits.decompressed_max(size)`` are a bomb: an error row, the
    rest not read. A stream cut short is read up to the cut: a warning (the rest is read when
    the file is complete) or, when the file is stale, an error.
    """
    reader = _ZstdReader(handle)
    failure = reader.failure

    def raw_read(n: int) -> bytes:
        return reader.read(n)

    source = _Source(raw_read, limits.decompressed_max(size))
    head = _read_upto(source.read, 4)
    inner = sniff(head)
    given = iter([head])

    def replay(n: int) -> bytes:  # the 4 bytes read to sniff, then the rest
        first = next(given, None)
        return first if first else source.read(n)

    split = _lines if inner == "json" else _frames
    for chunk in split(_Source(replay), Chunk("zstd-stream", whole=True), limits,
                       lambda: not source.capped, size, 0):
        if not chunk.last:
            chunk.bytes_done = 0  # a whole read is done only when its last batch is written
            yield chunk
            continue
        if source.capped:
            chunk.problem(None, f"zstd stream decompresses past {source.cap:,} bytes"
                          f" ({limits.ratio_max} times its {size:,} bytes, DECOMPRESS_RATIO_MAX,"
                          " spec/ranges.py): a decompression bomb or not telemetry; rest not"
                          " read")
        elif reader.in_frame and not failure:
            failure.append("the stream ends inside a frame")
        if failure and not source.capped:
            if stale:
                chunk.problem(None, f"zstd stream: {failure[0]}; the file has not changed for"
                              f" {limits.stale_seconds / 60:g} minutes: rest not read")
            else:
                chunk.problem(None, f"zstd stream: {failure[0]}; the rest is read when the"
                              " file is complete", "warning")
                chunk.bytes_done = 0  # read whole again next run (an error once stale)
                yield chunk
                return
        chunk.bytes_done = size
        yield chunk
