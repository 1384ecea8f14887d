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

import duckdb
import pyarrow as pa

from brainlab.sources.base import ErrorRow, Parsed, Source

ProgressFn = Callable[[str, Path, str], None]


@dataclass
class IngestSummary:
    """What one ingest run did, per source: files loaded, skipped, removed, rows and errors."""

    loaded: dict[str, int] = field(default_factory=dict)
    unchanged: dict[str, int] = field(default_factory=dict)
    removed: dict[str, int] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)

    def add(self, counter: str, source: str, n: int = 1) -> None:
        """Increase one counter of one source."""
        bucket = getattr(self, counter)
        bucket[source] = bucket.get(source, 0) + n

    @property
    def total_errors(self) -> int:
        """Error rows written in this run, all sources together."""
        return sum(self.errors.values())


def file_digest(data: bytes) -> str:
    """Content hash used to decide whether a file changed since it was ingested."""
    return hashlib.sha256(data).hexdigest()


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: list[dict]) -> None:
    """Append dict rows to ``table`` by column name (columns absent from rows become NULL)."""
    if not rows:
        return
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    arrow = pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in rows])
    con.register("_brainlab_rows", arrow)
    try:
        con.execute(f'INSERT INTO "{table}" BY NAME SELECT * FROM _brainlab_rows')
    finally:
        con.unregister("_brainlab_rows")


def write_file(
    con: duckdb.DuckDBPyConnection, source: Source, file: str, digest: str, parsed: Parsed
) -> None:
    """Replace everything ``file`` contributed with ``parsed``, in one transaction."""
    con.execute("BEGIN TRANSACTION")
    try:
        _delete_file(con, source, file)
        for table in source.tables:
            insert_rows(con, table, parsed.rows.get(table, []))
        insert_rows(con, "ingest_errors", [e.as_row(source.name, file) for e in parsed.errors])
        n_rows = sum(len(parsed.rows.get(t, [])) for t in source.tables)
        con.execute(
            "INSERT OR REPLACE INTO ingest_files VALUES (?, ?, ?, ?, ?, ?)",
            [file, source.name, digest, parsed.bytes_read, n_rows, len(parsed.errors)],
        )
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def _delete_file(con: duckdb.DuckDBPyConnection, source: Source, file: str) -> None:
    for table in source.tables:
        con.execute(f'DELETE FROM "{table}" WHERE source_file = ?', [file])
    con.execute("DELETE FROM ingest_errors WHERE file = ? AND source = ?", [file, source.name])
    con.execute("DELETE FROM ingest_files WHERE file = ? AND source = ?", [file, source.name])


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
        files = source.discover(root)
        known = dict(con.execute(
            "SELECT file, sha256 FROM ingest_files WHERE source = ? AND starts_with(file, ?)",
            [source.name, str(root) + "/"],
        ).fetchall())
        seen: set[str] = set()
        for path in files:
            key = str(path.resolve())
            seen.add(key)
            data = path.read_bytes()
            digest = file_digest(data)
            if known.get(key) == digest:
                summary.add("unchanged", source.name)
                if progress:
                    progress(source.name, path, "unchanged")
                continue
            parsed = _parse_safely(source, path, data, root)
            write_file(con, source, key, digest, parsed)
            summary.add("loaded", source.name)
            summary.add("rows", source.name, sum(len(v) for v in parsed.rows.values()))
            summary.add("errors", source.name, len(parsed.errors))
            if progress:
                progress(source.name, path, "loaded")
        for gone in sorted(set(known) - seen):
            con.execute("BEGIN TRANSACTION")
            _delete_file(con, source, gone)
            con.execute("COMMIT")
            summary.add("removed", source.name)
    return summary


def _parse_safely(source: Source, path: Path, data: bytes, root: Path) -> Parsed:
    """Parse one file; a parser crash becomes an error row instead of stopping the run."""
    try:
        parsed = source.parse(path, data, root)
    except Exception as exc:  # a parser bug must not cost the other files
        where = traceback.extract_tb(exc.__traceback__)[-1]
        parsed = Parsed(errors=[ErrorRow(
            None, f"parser failure ({type(exc).__name__}: {exc}) at "
            f"{Path(where.filename).name}:{where.lineno}")])
    parsed.bytes_read = len(data)
    return parsed
