"""Write parsed transcript files to the store: whole files per transaction, batched.

Each file's rows, error rows and new ``cc_files`` offset are committed together; small files
share a transaction (up to BATCH_BYTES / BATCH_FILES) so a tree of many files does not pay
one disk sync each. A file too large to hold is streamed: parsed here and inserted block by
block in its own transaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brainlab.store.columns import column_types, insert_columns
from brainlab.store.connection import engine
from brainlab.transcripts import broker
from brainlab.transcripts.plan import ClaudeSummary, FileJob
from brainlab.transcripts.rows import Columns
from brainlab.transcripts.scan import FileRead, GroupRead, parse_safely
from brainlab.transcripts.values import SOURCE

if TYPE_CHECKING:
    import duckdb


TABLES = ("cc_request_lines", "cc_tool_call_lines", "cc_tool_results", "cc_agent_links",
          "cc_compactions", "cc_spans", "cc_marks") + broker.TABLES
# commit after this many bytes read: each commit writes the WAL (on 1 GB, 16 commits took
# 1.4-1.7 s of writer CPU, 2 commits 0.8 s); the open batch holds its rows (~6% of its bytes)
BATCH_BYTES = 512_000_000
BATCH_FILES = 500  # ... or after this many files, whichever comes first


FILE_COLUMNS = ("source_file", "layout", "bytes_done", "lines_done", "pending_bytes",
                "head_sha256", "size_seen", "runs", "rows_loaded", "errors", "tail_sha256",
                "mtime_ns", "gone_at")
LOG_COLUMNS = ("file", "source", "sha256", "bytes", "rows_loaded", "errors")  # ingest_files
ERROR_COLUMNS = ("file", "line", "reason", "source", "severity")  # ingest_errors


def file_row(job: FileJob, read: FileRead, requests: int) -> tuple:
    """The ``cc_files`` row (FILE_COLUMNS) of a file read: offsets, hashes, counts so far.

    ``requests``: the cc_request_lines rows this read gave (the file's earlier ones are in
    ``job.rows_before``). The lake's adapter writes the same row (lake/parse.py).
    """
    return (job.path, read.layout, read.bytes_done, read.lines_done, read.pending, read.head,
            job.size, job.runs + 1, job.rows_before + requests,
            job.errors_before + len(read.errors), read.tail, job.mtime_ns, None)


def log_row(file: tuple) -> tuple:
    """The ``ingest_files`` row (LOG_COLUMNS) of a ``cc_files`` row: the shared ingest log."""
    return (file[0], SOURCE, f"tail:{file[2]}", file[2], file[8], file[9])


def error_columns(errors: list[dict]) -> list[list]:
    """Error rows (dicts) as one list per ERROR_COLUMNS column."""
    return [[e[n] for e in errors] for n in ERROR_COLUMNS]


class Writer:
    """Writes parsed files with typed Arrow batches, whole files per transaction.

    Small files are grouped (up to BATCH_BYTES / BATCH_FILES) so a tree of many small files
    does not pay one disk sync each; a file is never split across transactions, so each
    file's rows, errors and offset land together or not at all.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, first=None):
        self.con = con
        # the run's bookkeeping (the roll-up's key removed, measures pending, ...): run in the
        # first transaction that writes, so it commits with rows or not at all (a full disk
        # that refuses the rows keeps the roll-up's key: issue 47); again after a rollback
        self.first, self.first_committed = first, first is None
        self.open, self.batch_bytes, self.batch_files = False, 0, 0
        self.files: list[tuple] = []  # cc_files rows of the open batch
        self.tables: dict[str, list] = {}  # its rows (Arrow or Columns), inserted at commit
        self.started: set[str] = set()  # files whose old rows this transaction already cleared
        self.streamed = [0, 0]  # rows, request rows a stream() inserted for the next write()
        column_types(con)  # every table's, set before workers fork, so they inherit them

    def stream(self, job: FileJob) -> FileRead:
        """Parse a large file here, inserting its rows block by block in its own transaction.

        Memory stays bounded by the read block. The open batch is committed first, so a
        parser failure rolls back this file alone (its error row is then written).
        """
        self.commit()
        self._begin(job)
        counts = [0, 0]  # rows, request rows inserted so far

        def insert(tables: dict) -> None:
            for name, rows in tables.items():
                self.insert(name, [rows])
                counts[0] += rows.num_rows
                counts[1] += rows.num_rows if name == "cc_request_lines" else 0

        read = parse_safely(job, True, insert)
        if not read.rows and read.errors and read.errors[0]["reason"].startswith("parser"):
            self.rollback()  # drop the rows inserted before the failure
        else:
            self.streamed = counts
        return read

    def _begin(self, job: FileJob) -> None:
        if not self.open:
            self.con.execute("BEGIN TRANSACTION")
            self.open = True
            self.bookkeep()
        if job.path in self.started:
            return
        self.started.add(job.path)
        if job.reset:
            delete_file(self.con, job.path)
        elif not job.is_new and job.errors_before:  # cc_files.errors counts its error rows
            self.con.execute("DELETE FROM ingest_errors WHERE file = ? AND source = ?"
                             " AND line IS NULL", [job.path, SOURCE])  # e.g. "empty file"

    def insert(self, table: str, parts: list) -> None:
        """Append rows (Arrow tables, or Columns) to ``table`` (columns by name)."""
        if isinstance(parts[0], Columns):
            names = parts[0].names
            insert_columns(self.con, table, names,
                           [[v for part in parts for v in part.values[i]]
                            for i in range(len(names))])
            return
        import pyarrow as pa

        engine(full=True)  # Arrow scans need the duckdb package (it sets up duckdb._sources)
        rows = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        self.con.register("_cc_rows", rows)
        try:
            self.con.execute(f'INSERT INTO "{table}" BY NAME SELECT * FROM _cc_rows')
        finally:
            self.con.unregister("_cc_rows")

    def write_group(self, jobs: list[FileJob], group: GroupRead, summary: ClaudeSummary) -> None:
        """Write a group's files and rows (all in one batch: a file is never split)."""
        for job, read in zip(jobs, group.reads, strict=True):
            self.write(job, read, summary, commit=False)
        for table, table_rows in group.rows.items():  # inserted at commit, one per table
            self.tables.setdefault(table, []).append(table_rows)
        if self.batch_bytes >= BATCH_BYTES or self.batch_files >= BATCH_FILES:
            self.commit()

    def write(self, job: FileJob, read: FileRead, summary: ClaudeSummary,
              commit: bool = True) -> None:
        """Write one file's new rows and its cc_files row (committed with its batch)."""
        con = self.con
        (n_rows, n_requests), self.streamed = self.streamed, [0, 0]
        if read.counts is not None:  # its rows came with its group
            n_rows, n_requests = n_rows + read.counts[0], n_requests + read.counts[1]
        n_rows += sum(t.num_rows for t in read.rows.values())
        requests = read.rows.get("cc_request_lines")
        n_requests += requests.num_rows if requests is not None else 0
        self._begin(job)
        for table, table_rows in read.rows.items():  # inserted at commit, one per table
            self.tables.setdefault(table, []).append(table_rows)
        if read.errors:
            insert_columns(con, "ingest_errors", ERROR_COLUMNS, error_columns(read.errors))
        self.files.append(file_row(job, read, n_requests))
        summary.read += 1
        summary.reset += job.reset
        summary.bytes_read += read.bytes_done - job.offset
        summary.rows += n_rows
        warned = sum(e.get("severity") == "warning" for e in read.errors)
        summary.errors += len(read.errors) - warned
        summary.warnings += warned
        summary.pending_files += read.pending > 0
        self.batch_bytes += read.bytes_done - job.offset
        self.batch_files += 1
        if commit and (self.batch_bytes >= BATCH_BYTES or self.batch_files >= BATCH_FILES):
            self.commit()

    def commit(self) -> None:
        """Commit the open batch of whole files (each file is in exactly one batch)."""
        if self.open:
            for table, parts in self.tables.items():
                self.insert(table, parts)
            if self.files:
                for table, names, rows in (
                        ("cc_files", FILE_COLUMNS, self.files),
                        ("ingest_files", LOG_COLUMNS, [log_row(f) for f in self.files])):
                    insert_columns(self.con, table, names,
                                   [list(c) for c in zip(*rows, strict=True)], replace=True)
            self.con.execute("COMMIT")
            self.first_committed = True
        self.open, self.batch_bytes, self.batch_files, self.files = False, 0, 0, []
        self.tables, self.started = {}, set()

    def bookkeep(self) -> None:
        """Run the run's bookkeeping in the open transaction unless a commit already holds it.

        The caller commits it (a batch's :meth:`commit`, or its own transaction then
        :meth:`committed`).
        """
        if not self.first_committed and self.first is not None:
            self.first()

    def committed(self) -> None:
        """Say a transaction of the caller's that ran :meth:`bookkeep` committed."""
        self.first_committed = True

    def rollback(self) -> None:
        """Drop the open batch: its files keep their old cc_files rows and are read again."""
        if self.open:
            self.con.execute("ROLLBACK")
        self.open, self.batch_bytes, self.batch_files, self.files = False, 0, 0, []
        self.tables, self.started = {}, set()


def delete_files(con: duckdb.DuckDBPyConnection, keys: list[str]) -> int:
    """Delete every row of ``keys`` and their cc_files rows; the line-table rows deleted.

    The caller holds the transaction (``--prune`` removes every gone file in one).
    """
    deleted = 0
    for table in TABLES:
        deleted += con.execute(f'DELETE FROM "{table}" WHERE source_file IN'
                               " (SELECT unnest(?::VARCHAR[]))", [keys]).fetchone()[0]
    for table, column in (("ingest_errors", "file"), ("ingest_files", "file"),
                          ("cc_files", "source_file")):
        extra = " AND source = ?" if table != "cc_files" else ""
        con.execute(f"DELETE FROM {table} WHERE {column} IN (SELECT unnest(?::VARCHAR[])){extra}",
                    [keys, SOURCE] if extra else [keys])
    return deleted


def delete_file(con: duckdb.DuckDBPyConnection, key: str) -> None:
    """Delete every row a file gave (its rows are about to be read again, or it is gone)."""
    for table in TABLES:
        con.execute(f'DELETE FROM "{table}" WHERE source_file = ?', [key])
    con.execute("DELETE FROM ingest_errors WHERE file = ? AND source = ?", [key, SOURCE])
    con.execute("DELETE FROM ingest_files WHERE file = ? AND source = ?", [key, SOURCE])
