"""What a transcript ingest run must read, in types that import no parser.

A run first compares the files on disk with ``cc_files`` (:mod:`claude_ingest`); most runs
(an ingest from a hook after each session) find little or nothing new. This module holds what
that planning and a run's summary need (a file job, the head hash that notices a rewritten
file, the summary), so a run with nothing new never imports the parser's modules (msgspec
Structs, orjson, the redaction rules: 50-60 ms of a 0.2 s run, issue 12).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

HEAD_BYTES = 4096  # the first bytes hashed to notice a rewritten file


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


@dataclass
class ClaudeSummary:
    """What one run did: files read / unchanged / reset / removed, bytes, rows, errors."""

    read: int = 0
    unchanged: int = 0
    reset: int = 0
    removed: int = 0
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
