"""The parser contract every source follows, and the rows it hands to the store.

A source reads one input format. :meth:`Source.discover` lists its files under a root,
:meth:`Source.parse` turns one file's bytes into rows per table plus :class:`ErrorRow`s. It
never touches the database: :mod:`brainlab.store.ingest` does the writing.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

from brainlab.sources.messages import said


@dataclass(frozen=True)
class ErrorRow:
    """One problem met while parsing: where (line, when known) and why."""

    line: int | None
    reason: str
    severity: str = "error"  # "error": something was not loaded; "warning": loaded, flagged

    def as_row(self, source: str, file: str) -> dict:
        """The ``ingest_errors`` row for this problem."""
        return {"file": file, "line": self.line, "reason": self.reason,
                "source": source, "severity": self.severity}


@dataclass
class Parsed:
    """What one file yielded: rows by table name, and errors."""

    rows: dict[str, list[dict]] = field(default_factory=dict)
    errors: list[ErrorRow] = field(default_factory=list)
    bytes_read: int = 0

    def add(self, table: str, row: dict) -> None:
        """Append one row to ``table``."""
        self.rows.setdefault(table, []).append(row)

    def error(self, line: int | None, reason: str, severity: str = "error") -> None:
        """Record one problem."""
        self.errors.append(ErrorRow(line, reason, severity))


class Source(ABC):
    """One input format: which files it reads and how one file becomes rows."""

    name: str = ""
    tables: tuple[str, ...] = ()

    @abstractmethod
    def discover(self, root: Path) -> list[Path]:
        """The files of this format under ``root``, in a stable order."""

    @abstractmethod
    def parse(self, path: Path, data: bytes, root: Path) -> Parsed:
        """Turn one file's bytes into rows (each with ``source_file``) and errors."""


def decode_text(data: bytes, parsed: Parsed) -> str | None:
    """Decode UTF-8, recording invalid bytes (with their line) and binary files as errors.

    Returns None for a binary file (a NUL byte): nothing of it can be trusted.
    """
    if b"\x00" in data:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        parsed.error(line, said("binary file (NUL byte): not a text file, skipped"))
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        parsed.error(line, said(f"invalid UTF-8 at byte {exc.start}: undecodable bytes replaced"),
                     severity="warning")
        return data.decode("utf-8", errors="replace")
