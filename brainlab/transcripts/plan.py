"""What a transcript ingest run must read, in types that import no parser.

A run first compares the files on disk with ``cc_files`` (:mod:`ingest`); most runs
(an ingest from a hook after each session) find little or nothing new. This module holds what
that planning and a run's summary need (a file job, the hashes that notice a rewritten
file: of its first block and of the last block read, the summary), so a run with nothing
new never imports the parser's modules (msgspec Structs, orjson, the redaction rules:
50-60 ms of a 0.2 s run, issue 12).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

HEAD_BYTES = 4096  # the first bytes, and the last bytes read, hashed to notice a rewritten file


@dataclass(frozen=True)
class FileJob:
    """What to read of one file: from which byte and line, and what is known of it."""

    path: str
    offset: int
    lines_done: int
    size: int
    reset: bool
    is_new: bool
    runs: int
    rows_before: int
    errors_before: int
    mtime_ns: int | None = None  # the file's modification time when planned
    real: str = ""  # the path on disk when ``path`` (the stored key) is redacted (issue 29)

    @property
    def file(self) -> str:
        """The file to open: the real path (``path`` is its stored, redacted form)."""
        return self.real or self.path


@dataclass
class ClaudeSummary:
    """What one run did: files read / unchanged / reset / gone / pruned, bytes, rows, errors."""

    read: int = 0
    unchanged: int = 0
    reset: int = 0
    removed: int = 0  # gone files whose rows --prune removed
    removed_rows: int = 0  # the rows (every line table) they removed
    gone: int = 0  # files found missing by this run (their rows kept)
    gone_kept: int = 0  # files missing from disk whose rows the store keeps, after this run
    returned: int = 0  # files missing at an earlier run, found again
    bytes_read: int = 0
    rows: int = 0
    errors: int = 0  # error rows of severity "error" (input not loaded)
    warnings: int = 0  # error rows of severity "warning" (loaded, flagged)
    pending_files: int = 0
    unpriced_models: list[str] = field(default_factory=list)
    prices_files: list[str] = field(default_factory=list)


def head_hash(path: Path, bytes_done: int) -> str:
    """The hash of a file's first bytes (up to HEAD_BYTES, never past ``bytes_done``)."""
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read(min(HEAD_BYTES, bytes_done))).hexdigest()


def edge_hashes(path: Path, bytes_done: int) -> tuple[str, str]:
    """The hashes of the first and of the last HEAD_BYTES before ``bytes_done`` (one open).

    The second is what :func:`ingest.plan_file` compares before reading a grown file
    from its offset: a file truncated and written again past its old size, its first block
    unchanged, no longer has the same bytes there (issue 29, integrity 3).
    """
    with open(path, "rb") as handle:
        head = handle.read(min(HEAD_BYTES, bytes_done))
        if bytes_done <= HEAD_BYTES:
            last = head
        else:
            handle.seek(bytes_done - HEAD_BYTES)
            last = handle.read(HEAD_BYTES)
    return hashlib.sha256(head).hexdigest(), hashlib.sha256(last).hexdigest()
