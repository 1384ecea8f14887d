"""Split one file of the collector's file exporter into OTLP messages, from a byte offset on.

The exporter writes (collector-contrib ``exporter/fileexporter``, OTel "OTLP File Exporter"):

- ``json``: one OTLP/JSON export request per line (the default);
- ``framed``: each message preceded by its length as a 4-byte big-endian unsigned integer,
  the message being protobuf (``format: proto``), or JSON, or either compressed on its own
  with zstd (``compression: zstd`` without the native-compression feature gate);
- ``zstd-stream``: the whole file one zstd stream (native compression) holding JSON lines or
  length-prefixed messages.

JSON lines and framed files grow by appending, so a later run reads from the byte offset
where the previous one stopped; an unfinished last line or frame is left for the next run. A
zstd stream cannot be read from the middle: it is read whole again when it grew.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
MAX_FRAME = 256 * 1024 * 1024  # a larger length prefix is garbage, not a message


@dataclass
class Message:
    """One OTLP export request as bytes: ``kind`` json or proto, ``line`` its line or frame."""

    line: int
    kind: str
    data: bytes


@dataclass
class Chunk:
    """What one read of one file gave: messages, problems, and where the next read starts."""

    encoding: str
    messages: list[Message] = field(default_factory=list)
    problems: list[tuple[int | None, str, str]] = field(default_factory=list)  # line, reason, severity
    bytes_done: int = 0
    lines_done: int = 0
    whole: bool = False  # the file was read from its start (a zstd stream): replace its rows


def sniff(head: bytes) -> str:
    """The encoding of a file from its first bytes: json, framed or zstd-stream."""
    if head.startswith(ZSTD_MAGIC):
        return "zstd-stream"
    stripped = head.lstrip(b" \t\r\n\xef\xbb\xbf")
    if not stripped or stripped[:1] in (b"{", b"["):
        return "json"
    return "framed"


def read(path: Path, bytes_done: int = 0, lines_done: int = 0) -> Chunk:
    """Read ``path`` from ``bytes_done`` (``lines_done`` lines or frames before it)."""
    with open(path, "rb") as handle:
        head = handle.read(4)
        encoding = sniff(head)
        if encoding == "zstd-stream":
            handle.seek(0)
            return _stream(handle.read())
        handle.seek(bytes_done)
        data = handle.read()
    chunk = Chunk(encoding, bytes_done=bytes_done, lines_done=lines_done)
    if encoding == "json":
        _lines(data, chunk)
    else:
        _frames(data, chunk)
    return chunk


def _lines(data: bytes, chunk: Chunk, final: bool = False) -> None:
    """JSON lines: each complete line a message; an unfinished last line waits (unless final)."""
    end = len(data) if final else data.rfind(b"\n") + 1
    if end == 0:
        return
    body = data[:end - 1] if data[end - 1:end] == b"\n" else data[:end]
    line = chunk.lines_done
    for raw in body.split(b"\n"):
        line += 1
        if raw.strip():
            chunk.messages.append(Message(line, "json", raw))
    chunk.lines_done = line
    chunk.bytes_done += end


def _frames(data: bytes, chunk: Chunk, final: bool = False) -> None:
    """Length-prefixed messages; a frame cut short waits for the next run (unless final)."""
    pos, size = 0, len(data)
    while pos + 4 <= size:
        length = int.from_bytes(data[pos:pos + 4], "big")
        number = chunk.lines_done + 1
        if length > MAX_FRAME or (final and pos + 4 + length > size):
            chunk.problems.append((number, f"message {number}: length prefix {length} does not"
                                   f" fit the file ({size - pos - 4} bytes left); rest of the"
                                   " file not read", "error"))
            pos = size
            break
        if pos + 4 + length > size:
            break  # still being written
        payload = data[pos + 4:pos + 4 + length]
        pos += 4 + length
        chunk.lines_done = number
        try:
            if payload.startswith(ZSTD_MAGIC):
                payload = _unzstd(payload)
        except Exception as exc:  # noqa: BLE001 - any decoder failure is this message's problem
            chunk.problems.append((number, f"message {number}: zstd: {exc}", "error"))
            continue
        kind = "json" if payload.lstrip()[:1] == b"{" else "proto"
        chunk.messages.append(Message(number, kind, payload))
    if final and 0 < size - pos < 4:
        chunk.problems.append((chunk.lines_done + 1, f"{size - pos} stray bytes at the end",
                               "error"))
        pos = size
    chunk.bytes_done += pos


def _unzstd(payload: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdDecompressor().decompressobj().decompress(payload)


def _stream(raw: bytes) -> Chunk:
    """A whole-file zstd stream: decompress what is complete, then lines or frames."""
    import zstandard

    chunk = Chunk("zstd-stream", whole=True)
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        parts = []
        while True:
            try:
                block = reader.read(1 << 20)
            except zstandard.ZstdError as exc:  # a stream cut short: keep what decoded
                chunk.problems.append((None, f"zstd stream: {exc}; the rest is read when the"
                                       " file is complete", "warning"))
                break
            if not block:
                break
            parts.append(block)
        data = b"".join(parts)
    except zstandard.ZstdError as exc:
        chunk.problems.append((None, f"zstd stream: {exc}", "error"))
        data = b""
    inner = sniff(data[:4])
    if inner == "json":
        _lines(data, chunk, final=True)
    else:
        _frames(data, chunk, final=True)
    chunk.bytes_done = len(raw)
    return chunk
