"""The ingest log and runner: each file parsed by its source, loaded in one transaction.

Contract with sources (``brainlab.sources.base.Source``): a source names the tables it owns
and turns one file into rows (every row carries ``source_file``) plus error rows. The runner
skips files whose content hash is already logged, replaces the rows of files that changed,
removes rows of files that disappeared under the ingested root, and never lets one bad file
cost another file's rows.
"""

from __future__ import annotations

import hashlib
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from brainlab.common.errors import SourceError
from brainlab.sources import brain_sources, no_brain_message
from brainlab.sources.base import ErrorRow, Parsed, Source
from brainlab.sources.files import Refused, read_input
from brainlab.sources.messages import Message, bounded, said
from brainlab.sources.redact import redact
from brainlab.store import trend_scan
from brainlab.store.columns import insert_columns
from brainlab.store.connection import engine

if TYPE_CHECKING:
    import duckdb

ProgressFn = Callable[[str, Path, str], None]


@dataclass
class IngestSummary:
    """What one ingest run did, per source: files loaded, skipped, removed, rows and errors."""

    loaded: dict[str, int] = field(default_factory=dict)
    unchanged: dict[str, int] = field(default_factory=dict)
    removed: dict[str, int] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)  # severity "error": input not loaded
    warnings: dict[str, int] = field(default_factory=dict)  # severity "warning": loaded, flagged

    def add(self, counter: str, source: str, n: int = 1) -> None:
        """Increase one counter of one source."""
        bucket = getattr(self, counter)
        bucket[source] = bucket.get(source, 0) + n

    @property
    def total_errors(self) -> int:
        """Error rows (severity error) written in this run, all sources together."""
        return sum(self.errors.values())

    @property
    def total_warnings(self) -> int:
        """Warning rows (loaded but flagged) written in this run, all sources together."""
        return sum(self.warnings.values())


def file_digest(data: bytes) -> str:
    """Content hash used to decide whether a file changed since it was ingested."""
    return hashlib.sha256(data).hexdigest()


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: list[dict]) -> None:
    """Append dict rows to ``table`` by column name (columns absent from rows become NULL).

    As one list per column, cast to the table's column types (:func:`insert_columns`): no
    Arrow, whose tables built from Python objects import pandas (~0.3 CPU-s with pyarrow's
    own import, most of a ``brainlab check`` or a small ``ingest brain``).
    """
    if not rows:
        return
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    insert_columns(con, table, list(columns), [[r.get(c) for r in rows] for c in columns])


# What a value the database refuses raises while a batch is stored.
_STORE_ERRORS = (engine().Error, OverflowError, ValueError, TypeError)


def write_files(
    con: duckdb.DuckDBPyConnection, source: Source, batch: list[tuple[str, str, Parsed]]
) -> None:
    """Replace everything the files of ``batch`` contributed, in one transaction per try.

    Each file is all-or-nothing: its old rows go and its new rows, errors and ingest-log entry
    come in the same transaction. Batching files only saves round trips: when the database
    refuses a batch, its files are stored one by one, and a file whose rows it refuses is
    recorded with an error row saying why, so one bad value never costs another file's rows.
    """
    if not batch:
        return
    try:
        _write_batch(con, source, batch)
    except _STORE_ERRORS as exc:
        if len(batch) > 1:
            for item in batch:
                write_files(con, source, [item])
            return
        file, digest, parsed = batch[0]
        reason = f"rows could not be stored ({type(exc).__name__}: {str(exc)[:200]}): " \
                 "nothing of this file loaded"
        failed = Parsed(errors=[*parsed.errors, ErrorRow(None, reason)],
                        bytes_read=parsed.bytes_read)
        _write_batch(con, source, [(file, digest, failed)])


def _write_batch(
    con: duckdb.DuckDBPyConnection, source: Source, batch: list[tuple[str, str, Parsed]]
) -> None:
    con.execute("BEGIN TRANSACTION")
    try:
        _delete_files(con, source, [file for file, _digest, _parsed in batch])
        for table in source.tables:
            insert_rows(con, table, [row for _f, _d, parsed in batch
                                     for row in parsed.rows.get(table, [])])
        insert_rows(con, "ingest_errors", [e.as_row(source.name, file)
                                           for file, _d, parsed in batch for e in parsed.errors])
        insert_rows(con, "ingest_files", [{
            "file": file, "source": source.name, "sha256": digest, "bytes": parsed.bytes_read,
            "rows_loaded": sum(len(parsed.rows.get(t, [])) for t in source.tables),
            "errors": len(parsed.errors),
        } for file, digest, parsed in batch])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def _delete_files(con: duckdb.DuckDBPyConnection, source: Source, files: list[str]) -> None:
    """Delete what ``files`` contributed, in the caller's transaction (which rewrites them).

    The trend inputs change: the stored change points are stale until a rescan.
    """
    trend_scan.inputs_changed(con)
    for table in source.tables:
        con.execute(f'DELETE FROM "{table}" WHERE source_file IN '
                    "(SELECT unnest(?::VARCHAR[]))", [files])
    con.execute("DELETE FROM ingest_errors WHERE source = ? AND file IN "
                "(SELECT unnest(?::VARCHAR[]))", [source.name, files])
    con.execute("DELETE FROM ingest_files WHERE source = ? AND file IN "
                "(SELECT unnest(?::VARCHAR[]))", [source.name, files])


BATCH_BYTES = 32 * 1024 * 1024  # parsed input held before a write, bounding memory


def run(
    con: duckdb.DuckDBPyConnection,
    sources: Iterable[Source],
    root: Path,
    progress: ProgressFn | None = None,
) -> IngestSummary:
    """Ingest every file each source finds under ``root``; return what happened."""
    summary = IngestSummary()
    root = Path(root).resolve()
    for source in sources:
        try:
            files = source.discover(root)
        except OSError as exc:  # a source's own discovery; brain sources use list_files
            files = []
            write_files(con, source, [(str(root), "discovery-failed", Parsed(errors=[ErrorRow(
                None, f"cannot list the files of {source.name} ({exc}): none read")]))])
        known = dict(con.execute(
            "SELECT file, sha256 FROM ingest_files WHERE source = ? AND starts_with(file, ?)",
            [source.name, str(root) + "/"],
        ).fetchall())
        seen: set[str] = set()
        batch: list[tuple[str, str, Parsed]] = []
        held = 0
        for path in files:
            got = read_input(path, root)
            if isinstance(got, Refused):  # recorded as an error row under its listed name
                key, data = str(path), b""
                digest = "refused:" + file_digest(got.reason.encode())
            else:
                key, data = got
                digest = file_digest(data)
            if key in seen:  # a second name (symlink) for a file already read
                if progress:
                    progress(source.name, path, "unchanged")
                continue
            seen.add(key)
            if known.get(key) == digest:
                summary.add("unchanged", source.name)
            else:
                parsed = Parsed(errors=[ErrorRow(None, got.reason)]) if isinstance(got, Refused) \
                    else _parse_safely(source, Path(key), data, root)
                batch.append((key, digest, parsed))
                held += len(data)
                summary.add("loaded", source.name)
                summary.add("rows", source.name, sum(len(v) for v in parsed.rows.values()))
                warned = sum(e.severity == "warning" for e in parsed.errors)
                summary.add("errors", source.name, len(parsed.errors) - warned)
                summary.add("warnings", source.name, warned)
                if held >= BATCH_BYTES:
                    write_files(con, source, batch)
                    batch, held = [], 0
            if progress:
                progress(source.name, path, "loaded" if known.get(key) != digest else "unchanged")
        write_files(con, source, batch)
        gone = sorted(set(known) - seen)
        if gone:
            con.execute("BEGIN TRANSACTION")
            _delete_files(con, source, gone)
            con.execute("COMMIT")
            summary.add("removed", source.name, len(gone))
    return summary


def ingest_sources(db: str | Path | duckdb.DuckDBPyConnection, sources: Iterable[Source],
                   root: Path, progress: ProgressFn | None = None) -> IngestSummary:
    """Ingest ``root`` with ``sources`` into ``db`` (a store path, or an open writer).

    Given a path, the store is opened as the one writer, sealed (external access off,
    settings locked: its views are code a ``.duckdb`` file carries, and a store whose raw
    table is a view is refused; the sources are read by Python, not DuckDB) and closed at the
    end; given a connection (``brainlab check``'s throw-away store, which then attaches the
    user's store), it is used as it is and left open.
    """
    if isinstance(db, engine().DuckDBPyConnection):
        return run(db, sources, root, progress)
    from brainlab.store.connection import seal_writer
    from brainlab.store.schema import open_writer  # the schema code: loaded by writers only

    con = open_writer(db, engine_only=True)  # SQL only: no relations, Arrow or DataFrames
    try:
        seal_writer(con)  # before anything runs on the store (issue 46 item 4; docs/security.md)
        return run(con, sources, root, progress)
    finally:
        con.close()


def ingest_brain(db: str | Path | duckdb.DuckDBPyConnection, root: Path,
                 progress: ProgressFn | None = None, require_files: bool = False
                 ) -> IngestSummary:
    """Ingest a brain checkout (metabolism logs, agents, contexts, claims, ...) into ``db``.

    The one library entry point for ``brainlab ingest brain``, ``brainlab demo``,
    ``brainlab check`` and the tests. ``require_files``: refuse (SourceError, before the
    store is touched) a folder in which no brain source finds a file.
    """
    if require_files:
        require_brain(root)
    return ingest_sources(db, brain_sources(), root, progress)


def require_brain(root: Path) -> None:
    """Raise SourceError, naming what was looked for, when no brain source finds a file."""
    if not any(s.discover(Path(root).resolve()) for s in brain_sources()):
        raise SourceError(no_brain_message(Path(root)))


def _parse_safely(source: Source, path: Path, data: bytes, root: Path) -> Parsed:
    """Parse one file; a parser crash becomes an error row instead of stopping the run."""
    try:
        parsed = source.parse(path, data, root)
    except Exception as exc:  # a parser bug must not cost the other files
        where = traceback.extract_tb(exc.__traceback__)[-1]
        parsed = Parsed(errors=[ErrorRow(
            None, said(f"parser failure ({type(exc).__name__}: {{}}) at "
                       f"{Path(where.filename).name}:{where.lineno}", exc))])
    parsed.bytes_read = len(data)
    _bound_integers(parsed)
    _redact_rows(parsed)
    return parsed


def _redact_rows(parsed: Parsed) -> None:
    """Redact every string a brain file yields, rows and error reasons alike (issue 10 §14).

    A token pasted in a log's notes never reaches the store or a report.
    """
    for rows in parsed.rows.values():
        for row in rows:
            for column, value in row.items():
                if isinstance(value, str):
                    row[column] = redact(value)
                elif isinstance(value, list) and any(isinstance(v, str) for v in value):
                    row[column] = [redact(v) if isinstance(v, str) else v for v in value]
    parsed.errors = [e if isinstance(e.reason, Message)
                     else ErrorRow(e.line, bounded(redact(e.reason)), e.severity)
                     for e in parsed.errors]  # brainlab's own words are not redacted (issue 47)


INT64 = (-(2**63), 2**63 - 1)  # what a BIGINT column holds


def _bound_integers(parsed: Parsed) -> None:
    """An integer no column can hold becomes NULL with a warning row, not a failed write."""
    for table, rows in parsed.rows.items():
        for row in rows:
            for column, value in row.items():
                if isinstance(value, int) and not INT64[0] <= value <= INT64[1]:
                    row[column] = None
                    parsed.error(row.get("line") if isinstance(row.get("line"), int) else None,
                                 said(f"{table}.{column}: a {value.bit_length()}-bit integer"
                                      " is too large to store: left empty"), "warning")
