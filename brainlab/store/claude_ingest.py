"""Load Claude Code transcripts into DuckDB incrementally: new files whole, grown files by tail.

Each file keeps in ``cc_files`` the byte offset after its last complete line. A run reads only
new bytes; an unfinished last line (a file still being written) is left for the next run. A
file that shrank or whose first bytes changed was rewritten: its rows are replaced. A file's
rows, error rows (``ingest_errors``, source ``claude``) and new offset are written in one
transaction (small files share one), so a crash never leaves half a file. The SPEC §7
deduplication is global, so it lives in views over the raw line tables: appending lines never
needs to revisit earlier files.
"""

from __future__ import annotations

import gc
import hashlib
import itertools
import multiprocessing
import os
import signal
import struct
import sys
import tomllib
import types
import warnings
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import date
from importlib import resources
from pathlib import Path

import duckdb
import orjson
import pyarrow as pa

from brainlab.errors import ConfigError, SourceError
from brainlab.sources import claude_broker, claude_fast, claude_files, claude_marks
from brainlab.sources import claude_code as cc
from brainlab.sources.redact import redact_truncate
from brainlab.store import usage_rollup
from brainlab.store.measured import refresh_measures

TABLES = ("cc_request_lines", "cc_tool_call_lines", "cc_tool_results", "cc_agent_links",
          "cc_compactions", "cc_spans", "cc_marks") + claude_broker.TABLES
HEAD_BYTES = 4096  # the first bytes hashed to notice a rewritten file
PRICES_ENV = "BRAINLAB_PRICES"
# commit after this many bytes read: each commit writes the WAL (on 1 GB, 16 commits took
# 1.4-1.7 s of writer CPU, 2 commits 0.8 s); the open batch holds its rows (~6% of its bytes)
BATCH_BYTES = 512_000_000
BATCH_FILES = 500  # ... or after this many files, whichever comes first
READ_BLOCK = 32 * 1024 * 1024  # bytes read at a time from a transcript
# a file with more than this to read is parsed in this process and its rows inserted block by
# block (memory bounded by the read block, whatever the file's size), after the pooled files
STREAM_MIN_BYTES = 128 * 1024 * 1024
PARALLEL_MIN_BYTES = 8_000_000  # below this, forking worker processes costs more than it saves
# Below this, rows go to DuckDB as column lists: building Arrow arrays from Python objects makes
# pyarrow import pandas (~0.5 s, most of a small incremental run); above it Arrow pays back
# (cheap to send from a worker, several times faster to insert than lists)
ARROW_MIN_BYTES = 64_000_000

ProgressFn = Callable[[Path, str], None]


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


def default_root() -> Path:
    """Where Claude Code keeps transcripts: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects."""
    config_dir = os.environ.get("CLAUDE_CONFIG_DIR")
    if config_dir:
        first = config_dir.split(",")[0].strip()
        return Path(first).expanduser() / "projects"
    return Path.home() / ".claude" / "projects"


def load_prices(user_file: str | os.PathLike | None = None) -> tuple[list[dict], list[str]]:
    """Load price rows: the package's dated table, then the user's file (argument or env)."""
    package = resources.files("brainlab") / "data" / "prices.toml"
    tables = [("brainlab/data/prices.toml", package.read_text(encoding="utf-8"))]
    user_file = user_file or os.environ.get(PRICES_ENV)
    if user_file:
        path = Path(user_file)
        if not path.is_file():
            raise ConfigError(f"price file not found: {path}")
        tables.append((str(path.resolve()), path.read_text(encoding="utf-8")))
    merged: dict[str, dict] = {}
    for name, text in tables:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{name}: {exc}") from exc
        as_of = data.get("as_of")
        as_of = date.fromisoformat(str(as_of)) if as_of else None
        for model, rates in (data.get("models") or {}).items():
            missing = {"input", "output", "cache_write_5m", "cache_read"} - set(rates)
            if missing:
                raise ConfigError(f"{name}: model {model!r} lacks {sorted(missing)}")
            merged[model] = {
                "model": model, "input_usd_mtok": float(rates["input"]),
                "output_usd_mtok": float(rates["output"]),
                "cache_write_5m_usd_mtok": float(rates["cache_write_5m"]),
                "cache_write_1h_usd_mtok": float(rates.get("cache_write_1h",
                                                           rates["cache_write_5m"])),
                "cache_read_usd_mtok": float(rates["cache_read"]),
                "long_context_threshold": rates.get("long_context_threshold"),
                "long_input_multiplier": rates.get("long_input_multiplier"),
                "long_output_multiplier": rates.get("long_output_multiplier"),
                "prices_as_of": as_of, "prices_file": name,
            }
    return list(merged.values()), [name for name, _ in tables]


def write_prices(con: duckdb.DuckDBPyConnection, rows: list[dict]) -> bool:
    """Replace the price table in the store (one transaction); False when it was unchanged."""
    cursor = con.execute("SELECT * FROM cc_prices")
    names = [d[0] for d in cursor.description]
    stored = sorted(cursor.fetchall(), key=lambda r: r[0])
    wanted = sorted((tuple(row.get(n) for n in names) for row in rows), key=lambda r: r[0])
    if stored == wanted:  # the usual incremental run: nothing to write, nothing to commit
        return False
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("DELETE FROM cc_prices")
        insert_columns(con, "cc_prices", names, [list(c) for c in zip(*wanted, strict=True)])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return True


def ingest_claude_db(db: str | os.PathLike, root: str | os.PathLike,
                     prices: str | os.PathLike | None = None, progress: ProgressFn | None = None,
                     workers: int | None = None) -> ClaudeSummary:
    """:func:`ingest_claude` into the store at ``db``, opened (or created) and closed here.

    Creating a store (schema, views, first checkpoint) takes seconds: when ``db`` does not
    exist yet, every file is new, so the workers start parsing first and the store is
    created while they work.
    """
    from brainlab.store.schema import open_writer

    if Path(db).exists():
        con = open_writer(db)
        try:
            return ingest_claude(con, root, prices, progress, workers)
        finally:
            con.close()
    opened: list[duckdb.DuckDBPyConnection] = []
    try:
        return ingest_claude(lambda: opened.append(open_writer(db)) or opened[0], root, prices,
                             progress, workers)
    finally:
        for con in opened:
            con.close()


def ingest_claude(con: duckdb.DuckDBPyConnection | Callable[[], duckdb.DuckDBPyConnection],
                  root: str | os.PathLike, prices: str | os.PathLike | None = None,
                  progress: ProgressFn | None = None, workers: int | None = None) -> ClaudeSummary:
    """Read every transcript under ``root`` (only what is new since the last run).

    Files are parsed in ``workers`` processes (default: one per CPU; in this process when
    there is little to read) and written by this process, whole files per transaction.
    ``con`` may be a function that opens a new, empty store: it is called once the workers
    are parsing (every file is then new).
    """
    root = Path(root).expanduser()
    if not root.exists():
        raise SourceError(f"no transcripts at {root}")
    root = root.resolve()
    summary = ClaudeSummary()
    price_rows, summary.prices_files = load_prices(prices)
    files, refused = claude_files.discover(root)
    prefix = str(root) if root.is_file() else str(root) + os.sep
    opener = None
    if isinstance(con, duckdb.DuckDBPyConnection):
        known = {row[0]: row for row in con.execute(
            "SELECT source_file, bytes_done, lines_done, pending_bytes, head_sha256, runs,"
            " rows_loaded, errors FROM cc_files"
            " WHERE source_file = ? OR starts_with(source_file, ?)",
            [str(root), prefix]).fetchall()}
    else:  # a store still to create: nothing known; column types from the schema alone
        opener, known = con, {}
        _schema_types()
    seen, jobs = set(), []
    for path in files:
        key = str(path)
        try:
            job = plan_file(path, known.get(key))
        except OSError as exc:  # vanished or unreadable since discovery
            refused.append((key, f"skipped: cannot read ({exc.strerror or type(exc).__name__})"))
            continue
        seen.add(key)
        if job is None:
            summary.unchanged += 1
            if progress:
                progress(path, "unchanged")
        else:
            jobs.append(job)
    streamed = [job for job in jobs if job.size - job.offset >= STREAM_MIN_BYTES]
    pooled = [job for job in jobs if job.size - job.offset < STREAM_MIN_BYTES]
    opened: list[duckdb.DuckDBPyConnection] = []
    parsed_files = _parse_all(pooled, workers, (lambda: opened.append(opener())) if opener
                              else None)
    if opener is not None:  # the store is created once the workers are parsing
        first = next(parsed_files, None)
        parsed_files = itertools.chain([first] if first else [], parsed_files)
        con = opened[0]
    removed = sorted(set(known) - seen)
    # the usage roll-up: refreshed for the days this run touches, or whole (issue 12)
    rollup_whole = write_prices(con, price_rows) or not usage_rollup.is_current(con)
    if jobs or removed:
        usage_rollup.invalidate(con)
        if not rollup_whole:  # the calls of rows about to be deleted
            usage_rollup.remember(con, [job.path for job in jobs if job.reset] + removed)
    _record_refused(con, refused, summary)
    writer = _Writer(con)
    # the parse workers keep the cores busy: DuckDB's own insert threads only contended with
    # them (main process 2.8 -> 2.1 CPU-s per GB of corpus, no slower); restored at the end
    threads = con.execute("SELECT current_setting('threads')").fetchone()[0]
    con.execute("SET threads = 1")
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of short-lived tuples: the cyclic GC alone doubled the run time
    try:
        for job, parsed in parsed_files:
            writer.write(job, parsed, summary)
            if progress:
                progress(Path(job.path), "reset" if job.reset else "loaded")
        for job in streamed:
            writer.write(job, writer.stream(job), summary)
            if progress:
                progress(Path(job.path), "reset" if job.reset else "loaded")
        writer.commit()
    except BaseException:
        writer.rollback()
        raise
    finally:
        if gc_was_enabled:
            gc.enable()
        try:
            con.execute(f"SET threads = {int(threads)}")
        except duckdb.Error:  # a connection an interrupt left unusable: the error above counts
            pass
    touched = [row[0] for row in con.execute(  # sessions whose measures change (issue 13)
        "SELECT DISTINCT session_id FROM cc_spans WHERE source_file IN"
        " (SELECT unnest(?::VARCHAR[])) AND session_id IS NOT NULL",
        [[job.path for job in jobs] + removed]).fetchall()]
    for gone in removed:
        con.execute("BEGIN TRANSACTION")
        _delete_file(con, gone)
        con.execute("DELETE FROM cc_files WHERE source_file = ?", [gone])
        con.execute("COMMIT")
        summary.removed += 1
    if rollup_whole or jobs or removed:
        usage_rollup.refresh(con, None if rollup_whole else [job.path for job in jobs] + removed)
    if not _measures_stored(con):
        refresh_measures(con)  # measured metabolism per session (issue 13), all of it
    elif touched:
        refresh_measures(con, touched)
    summary.unpriced_models = [  # names only: no dedup needed; a line without a model too
        r[0] if r[0] is not None else "(no model)" for r in con.execute(
            "SELECT model FROM cc_model_prices WHERE priced_as IS NULL"
            " ORDER BY model NULLS LAST").fetchall()]
    return summary


def _record_refused(con: duckdb.DuckDBPyConnection, refused: list[tuple[str, str]],
                    summary: ClaudeSummary) -> None:
    """Error rows for the paths discovery refused (replacing those of earlier runs)."""
    if not refused:
        return
    con.execute("BEGIN TRANSACTION")
    paths = sorted({path for path, _ in refused})
    con.execute("DELETE FROM ingest_errors WHERE source = ? AND line IS NULL"
                " AND file IN (SELECT unnest(?::VARCHAR[])) AND starts_with(reason, 'skipped:')",
                [cc.SOURCE, paths])
    insert_columns(con, "ingest_errors", ("file", "line", "reason", "source", "severity"),
                   [[p for p, _ in refused], [None] * len(refused), [r for _, r in refused],
                    [cc.SOURCE] * len(refused), ["error"] * len(refused)])
    con.execute("COMMIT")
    summary.errors += len(refused)


def _measures_stored(con: duckdb.DuckDBPyConnection) -> bool:
    """False when transcripts are stored but their measures are not (e.g. a rebuilt catalog)."""
    return con.execute("SELECT (SELECT count(*) FROM cc_session_measures) > 0"
                       " OR NOT EXISTS (SELECT 1 FROM cc_spans)").fetchone()[0]


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
class FileRead:
    """One file's parsed new lines, ready to write."""

    rows: dict[str, pa.Table | Columns]
    errors: list[dict]
    bytes_done: int
    lines_done: int
    pending: int
    head: str
    layout: str


def plan_file(path: Path, state: tuple | None) -> FileJob | None:
    """Decide what to read of ``path`` given its cc_files row; None when nothing is new."""
    size = path.stat().st_size
    if state is None:
        return FileJob(str(path), 0, 0, size, False, True, 0, 0, 0)
    _, bytes_done, lines_done, pending, head, runs, rows_before, errors_before = state
    same_head = _head_hash(path, bytes_done) == head
    if size == bytes_done + pending and same_head:
        return None
    if size < bytes_done or not same_head:  # rewritten: read again from the start
        return FileJob(str(path), 0, 0, size, True, False, runs, 0, 0)
    return FileJob(str(path), bytes_done, lines_done, size, False, False, runs,
                   rows_before or 0, errors_before or 0)


@dataclass
class Columns:
    """One table's rows as column lists: the in-process path, written without Arrow."""

    names: tuple[str, ...]
    values: list[list]

    @property
    def num_rows(self) -> int:
        """How many rows (the length of every column)."""
        return len(self.values[0]) if self.values else 0


def parse_file(job: FileJob, arrow: bool = True,
               on_rows: Callable[[dict], None] | None = None) -> FileRead:
    """Parse the complete lines of ``job`` (pure: runs in a worker process).

    Rows come back as Arrow tables (cheap to send from a worker), or with ``arrow=False`` as
    column lists (building Arrow arrays from Python objects makes pyarrow import pandas,
    about half a second, which would be most of a small incremental run). With ``on_rows``,
    the rows of each block read go to it as they come, and the FileRead holds only the rest.
    """
    path = Path(job.path)
    ctx = cc.FileContext.of(path)
    chunk = cc.Chunk()
    convert = to_arrow if arrow else to_columns

    def tables(final: bool) -> dict:
        rows = {
            "cc_request_lines": last_per_call(chunk.requests),
            "cc_tool_call_lines": chunk.tool_calls, "cc_tool_results": chunk.tool_results,
            "cc_agent_links": chunk.agent_links, "cc_compactions": chunk.compactions,
            "cc_marks": chunk.marks,
            **chunk.broker,  # broker_blocks / broker_block_files (claude_broker)
        }
        if final:
            rows["cc_spans"] = cc.span_rows(chunk)
        # Arrow tables travel cheaply from a worker process (buffers, not millions of objects)
        return {name: convert(name, table_rows) for name, table_rows in rows.items()
                if table_rows}

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
        meta = cc.read_meta(path, ctx)
        if meta:
            chunk.agent_links.append(meta)
    return FileRead(tables(final=True), chunk.errors, bytes_done, lines_done, pending,
                    _head_hash(path, bytes_done), ctx.layout)


def last_per_call(requests: list[tuple]) -> list[tuple]:
    """Keep, per (message.id, requestId), the row the SPEC §7 view would keep among these.

    All rows come from one file, so the view's order (ts, file, line) reduces to (ts, line):
    dropping the others here changes no result and halves the rows stored. Timestamps are
    ISO text of one shape, so text order is time order; rows without a timestamp are kept.
    """
    best: dict[tuple, tuple] = {}
    kept = []
    for row in requests:
        message_id, ts = row[3], row[5]
        if message_id is None or ts is None:
            kept.append(row)
            continue
        key = (message_id, row[2])
        old = best.get(key)
        if old is None or (ts, row[-1]) > (old[5], old[-1]):
            best[key] = row
    kept.extend(best.values())
    return kept


def _parse_all(jobs: list[FileJob], workers: int | None,
               meanwhile: Callable[[], None] | None = None):
    """Yield (job, FileRead) pairs, parsing in worker processes when it pays.

    ``meanwhile`` (creating the store) runs once the workers have up to BATCH_BYTES of
    files to parse, before the first result is taken.
    """
    if workers is None:
        workers = os.cpu_count() or 1
    todo = sum(job.size - job.offset for job in jobs)
    arrow = todo >= ARROW_MIN_BYTES
    if (workers <= 1 or len(jobs) < 2 or todo < PARALLEL_MIN_BYTES
            or "fork" not in multiprocessing.get_all_start_methods()):
        if meanwhile:
            meanwhile()
        for job in jobs:
            yield job, _parse_safely(job, arrow)
        return
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context,
                             initializer=_die_with_parent, initargs=(os.getpid(),)) as pool:
        pending, queue = {}, list(reversed(jobs))
        if meanwhile:  # keep the workers busy meanwhile: more files in flight, once
            ahead = 0
            while queue and ahead < BATCH_BYTES:
                job = queue.pop()
                ahead += job.size - job.offset
                pending[pool.submit(_parse_safely, job, arrow)] = job
            meanwhile()
        while queue or pending:
            while queue and len(pending) < 2 * workers:  # bound memory: few results in flight
                job = queue.pop()
                pending[pool.submit(_parse_safely, job, arrow)] = job
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield pending.pop(future), future.result()


def _die_with_parent(parent: int) -> None:
    """Worker start-up: the kernel kills this worker when the parent dies (even by SIGKILL)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG (Linux)
    except (OSError, AttributeError):  # not Linux: the executor's own shutdown only
        pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
    _arrow_without_pandas()


def _arrow_without_pandas() -> None:
    """Keep pyarrow from importing pandas in a worker (0.7 CPU-s each, for nothing here).

    pyarrow looks for pandas on its first ``pa.array`` and turns its pandas integration off
    when the version found is below 1.0: a stand-in module answers that once, then is
    removed, so nothing else in the worker can see it. Workers only build arrays from lists.
    """
    if "pandas" in sys.modules:
        return
    stand_in = types.ModuleType("pandas")
    stand_in.__version__ = "0.0.0"
    sys.modules["pandas"] = stand_in
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pa.array([0])
    finally:
        del sys.modules["pandas"]


def _parse_safely(job: FileJob, arrow: bool = True,
                  on_rows: Callable[[dict], None] | None = None) -> FileRead:
    """Parse one file; an unexpected failure becomes an error row, never a lost run."""
    try:
        return parse_file(job, arrow, on_rows)
    except Exception as exc:  # a parser bug or an unreadable file must not cost the others
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        error = {"file": job.path, "line": None, "reason": f"parser failure"
                 f" ({type(exc).__name__}: {redact_truncate(why, 200)}); file left for the"
                 " next run", "source": cc.SOURCE, "severity": "error"}
        try:
            head = _head_hash(Path(job.path), job.offset)
        except OSError:
            head = ""
        return FileRead({}, [error], job.offset, job.lines_done, 0, head, "main")


class _Writer:
    """Writes parsed files with typed Arrow batches, whole files per transaction.

    Small files are grouped (up to BATCH_BYTES / BATCH_FILES) so a tree of many small files
    does not pay one disk sync each; a file is never split across transactions, so each
    file's rows, errors and offset land together or not at all.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con
        self.open, self.batch_bytes, self.batch_files = False, 0, 0
        self.files: list[tuple] = []  # cc_files rows of the open batch
        self.tables: dict[str, list] = {}  # its rows (Arrow or Columns), inserted at commit
        self.started: set[str] = set()  # files whose old rows this transaction already cleared
        self.streamed = [0, 0]  # rows, request rows a stream() inserted for the next write()
        _column_types(con)  # every table's, set before workers fork, so they inherit them

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

        read = _parse_safely(job, True, insert)
        if not read.rows and read.errors and read.errors[0]["reason"].startswith("parser"):
            self.rollback()  # drop the rows inserted before the failure
        else:
            self.streamed = counts
        return read

    def _begin(self, job: FileJob) -> None:
        if not self.open:
            self.con.execute("BEGIN TRANSACTION")
            self.open = True
        if job.path in self.started:
            return
        self.started.add(job.path)
        if job.reset:
            _delete_file(self.con, job.path)
        elif not job.is_new and job.errors_before:  # cc_files.errors counts its error rows
            self.con.execute("DELETE FROM ingest_errors WHERE file = ? AND source = ?"
                             " AND line IS NULL", [job.path, cc.SOURCE])  # e.g. "empty file"

    def insert(self, table: str, parts: list) -> None:
        """Append rows (Arrow tables, or Columns) to ``table`` (columns by name)."""
        if isinstance(parts[0], Columns):
            names = parts[0].names
            insert_columns(self.con, table, names,
                           [[v for part in parts for v in part.values[i]]
                            for i in range(len(names))])
            return
        rows = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        self.con.register("_cc_rows", rows)
        try:
            self.con.execute(f'INSERT INTO "{table}" BY NAME SELECT * FROM _cc_rows')
        finally:
            self.con.unregister("_cc_rows")

    def write(self, job: FileJob, read: FileRead, summary: ClaudeSummary) -> None:
        """Write one file's new rows and its cc_files row (committed with its batch)."""
        con, key = self.con, job.path
        (n_rows, n_requests), self.streamed = self.streamed, [0, 0]
        n_rows += sum(t.num_rows for t in read.rows.values())
        requests = read.rows.get("cc_request_lines")
        rows_total = (job.rows_before + n_requests
                      + (requests.num_rows if requests is not None else 0))
        errors_total = job.errors_before + len(read.errors)
        self._begin(job)
        for table, table_rows in read.rows.items():  # inserted at commit, one per table
            self.tables.setdefault(table, []).append(table_rows)
        if read.errors:
            names = tuple(read.errors[0])
            insert_columns(con, "ingest_errors", names,
                           [[e[n] for e in read.errors] for n in names])
        self.files.append((key, read.layout, read.bytes_done, read.lines_done, read.pending,
                           read.head, job.size, job.runs + 1, rows_total, errors_total))
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
        if self.batch_bytes >= BATCH_BYTES or self.batch_files >= BATCH_FILES:
            self.commit()

    def commit(self) -> None:
        """Commit the open batch of whole files (each file is in exactly one batch)."""
        if self.open:
            for table, parts in self.tables.items():
                self.insert(table, parts)
            if self.files:
                names = ("source_file", "layout", "bytes_done", "lines_done", "pending_bytes",
                         "head_sha256", "size_seen", "runs", "rows_loaded", "errors")
                columns = [list(c) for c in zip(*self.files, strict=True)]
                insert_columns(self.con, "cc_files", names, columns, replace=True)
                self.con.execute(
                    "INSERT OR REPLACE INTO ingest_files SELECT source_file, ?,"
                    " 'tail:' || bytes_done, bytes_done, rows_loaded, errors FROM cc_files"
                    " WHERE source_file IN (SELECT unnest(?::VARCHAR[]))",
                    [cc.SOURCE, columns[0]])
            self.con.execute("COMMIT")
        self.open, self.batch_bytes, self.batch_files, self.files = False, 0, 0, []
        self.tables, self.started = {}, set()

    def rollback(self) -> None:
        """Drop the open batch: its files keep their old cc_files rows and are read again."""
        if self.open:
            self.con.execute("ROLLBACK")
        self.open, self.batch_bytes, self.batch_files, self.files = False, 0, 0, []
        self.tables, self.started = {}, set()


_ARROW_TYPES: dict[str, list[tuple[str, pa.DataType]]] = {}  # table -> typed columns
_SQL_TYPES: dict[str, dict[str, str]] = {}  # table -> column -> DuckDB type


def _column_types(con: duckdb.DuckDBPyConnection, table: str | None = None
                  ) -> dict[str, str]:
    """``table``'s column types, for Arrow and for list inserts (all tables read at once).

    Without ``table``: (re)read every table's (the writer does so at each run).
    """
    if table is None or table not in _SQL_TYPES:
        cols: dict[str, list[tuple[str, str]]] = {}
        for name, column, data_type in con.execute(
                "SELECT table_name, column_name, data_type FROM duckdb_columns()"  # 3x faster
                " WHERE schema_name = 'main' AND database_name = current_database()"
                " ORDER BY table_name, column_index").fetchall():
            cols.setdefault(name, []).append((column, data_type))
        for name, typed in cols.items():
            _SQL_TYPES[name] = dict(typed)
            _ARROW_TYPES[name] = [(c, _ARROW.get(t, pa.string())) for c, t in typed]
    return _SQL_TYPES.get(table, {}) if table else {}


def _schema_types() -> None:
    """Every table's column types from the schema alone (an in-memory database, ~0.2 s)."""
    from brainlab.store.connection import StoreConfig, connect
    from brainlab.store.schema import _sql_files

    mem = connect(StoreConfig(path=Path(":memory:"), read_only=False))
    try:
        for _, sql in _sql_files("schema"):
            mem.execute(sql)
        _column_types(mem)
    finally:
        mem.close()


def insert_columns(con: duckdb.DuckDBPyConnection, table: str, names, columns: list[list],
                   replace: bool = False) -> None:
    """Append rows given as one list per column (``names``) to ``table``, without Arrow.

    The lists are query parameters unnested side by side; TIMESTAMP columns receive ISO text
    (as in the Arrow path) and DuckDB casts it on insert. ``replace``: INSERT OR REPLACE.
    """
    if not columns or not columns[0]:
        return
    types = _column_types(con, table)
    select = ", ".join(
        f'unnest(${i}::{"VARCHAR" if types[n] == "TIMESTAMP" else types[n]}[]) AS "{n}"'
        for i, n in enumerate(names, 1))
    verb = "INSERT OR REPLACE" if replace else "INSERT"
    con.execute(f'{verb} INTO "{table}" BY NAME SELECT {select}', columns)


def to_columns(table: str, rows: list) -> Columns:
    """Rows (dicts, or tuples in the order of TUPLE_COLUMNS[table]) as column lists."""
    if isinstance(rows[0], tuple):
        return Columns(TUPLE_COLUMNS[table], [list(c) for c in zip(*rows, strict=True)])
    names = tuple(c for c, _ in _ARROW_TYPES[table])
    return Columns(names, [[r.get(c) for r in rows] for c in names])


def to_arrow(table: str, rows: list) -> pa.Table:
    """Rows (dicts, or tuples in the order of TUPLE_COLUMNS[table]) as a typed Arrow table."""
    typed = _ARROW_TYPES[table]
    if isinstance(rows[0], tuple):
        types = dict(typed)
        columns = zip(*rows, strict=True)
        return pa.table({c: pa.array(v, type=types[c])
                         for c, v in zip(TUPLE_COLUMNS[table], columns, strict=True)})
    return pa.table({c: pa.array([r.get(c) for r in rows], type=t) for c, t in typed})


TUPLE_COLUMNS = {"cc_request_lines": cc.REQUEST_COLUMNS,
                 "cc_tool_call_lines": cc.TOOL_CALL_COLUMNS,
                 "cc_tool_results": cc.TOOL_RESULT_COLUMNS,
                 "cc_marks": claude_marks.MARK_COLUMNS}
_ARROW = {"VARCHAR": pa.string(), "BIGINT": pa.int64(), "INTEGER": pa.int32(),
          "BOOLEAN": pa.bool_(), "DOUBLE": pa.float64(), "TIMESTAMP": pa.string()}


def _read(path: Path, offset: int, lines_done: int, size: int, ctx: cc.FileContext,
          chunk: cc.Chunk, flush: Callable[[], None] | None = None) -> tuple[int, int, int]:
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
    fast = claude_fast.parse_line
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
                    if not fast(view, data, start, end, ctx, lines_done, chunk):
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


def _slow(raw: bytes, ctx: cc.FileContext, line_no: int, chunk: cc.Chunk) -> None:
    """The general path: orjson, repairs and error rows (claude_code.load_line)."""
    if raw.isspace():
        return
    for obj in cc.load_line(raw, ctx, line_no, chunk):
        cc.parse_object(obj, ctx, line_no, chunk)


_ASCII = bytes(range(128))


def _valid_utf8_block(data: bytes, end: int) -> bool:
    """Whether ``data[:end]`` is UTF-8: Arrow's validation, without copying (3x faster).

    Strict as Python's decoder (no surrogates, overlong forms or code points past U+10FFFF).
    """
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


def _head_hash(path: Path, bytes_done: int) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read(min(HEAD_BYTES, bytes_done))).hexdigest()


def _delete_file(con: duckdb.DuckDBPyConnection, key: str) -> None:
    for table in TABLES:
        con.execute(f'DELETE FROM "{table}" WHERE source_file = ?', [key])
    con.execute("DELETE FROM ingest_errors WHERE file = ? AND source = ?", [key, cc.SOURCE])
    con.execute("DELETE FROM ingest_files WHERE file = ? AND source = ?", [key, cc.SOURCE])
