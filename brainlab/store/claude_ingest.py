"""Load Claude Code transcripts into DuckDB incrementally: new files whole, grown files by tail.

Each file keeps in ``cc_files`` the byte offset after its last complete line. A run reads only
new bytes; an unfinished last line (a file still being written) is left for the next run. A
file that shrank or whose first bytes changed was rewritten: its rows are replaced. A file's
rows, error rows (``ingest_errors``, source ``claude``) and new offset are written in one
transaction (small files share one), so a crash never leaves half a file. The SPEC §7
deduplication is global, so it lives in views over the raw line tables: appending lines never
needs to revisit earlier files.

This module plans a run and orders its steps; worker processes (:mod:`claude_pool`) read
groups of files (:mod:`claude_read`) into typed rows (:mod:`claude_rows`), which
:mod:`claude_writer` writes; then the derived tables are stored (:mod:`usage_rollup`,
:mod:`measured`), so read commands never re-derive them.
"""

from __future__ import annotations

import gc
import itertools
import os
import threading
import tomllib
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from brainlab.errors import ConfigError, SourceError
from brainlab.sources import claude_files
from brainlab.store import usage_rollup
from brainlab.store.claude_plan import HEAD_BYTES, ClaudeSummary, FileJob, head_hash
from brainlab.store.connection import engine
from brainlab.store.measured import refresh_measures

# The parser's modules (claude_pool, claude_read, claude_writer, claude_rows and the sources
# they import: 50-60 ms) are imported once planning found something to read: a run with
# nothing new, the usual ingest from a hook, never loads them (issue 12).

if TYPE_CHECKING:
    import duckdb

PRICES_ENV = "BRAINLAB_PRICES"
# a file with more than this to read is parsed in this process and its rows inserted block by
# block (memory bounded by the read block, whatever the file's size), after the pooled files
STREAM_MIN_BYTES = 128 * 1024 * 1024

ProgressFn = Callable[[Path, str], None]


def default_root() -> Path:
    """Where Claude Code keeps transcripts: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects."""
    config_dir = os.environ.get("CLAUDE_CONFIG_DIR")
    if config_dir:
        first = config_dir.split(",")[0].strip()
        return Path(first).expanduser() / "projects"
    return Path.home() / ".claude" / "projects"


def load_prices(user_file: str | os.PathLike | None = None) -> tuple[list[dict], list[str]]:
    """Load price rows: the package's dated table, then the user's file (argument or env)."""
    package = Path(__file__).parents[1] / "data" / "prices.toml"  # no importlib.resources
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
            if missing and any(isinstance(v, dict) for v in rates.values()):  # [models.a.b]
                inner = next(k for k, v in rates.items() if isinstance(v, dict))
                raise ConfigError(f'{name}: [models.{model}.{inner}] is read as model {model!r}'
                                  f' holding a table {inner!r}: quote a model name holding a'
                                  f' dot, [models."{model}.{inner}"]')
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
    from brainlab.store.claude_rows import insert_columns

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

    A new store is a copy of the cached empty store (0.04 CPU-s); when that template must
    be built first (1-2 CPU-s, the very first run), every file is new, so the workers start
    parsing first and the store is created while they work.
    """
    from brainlab.store.schema import open_writer, template_ready

    if Path(db).exists() or template_ready():
        # the file system is read while DuckDB opens the store (a new one: no hashes needed)
        survey = Survey(_root(root), hashes=Path(db).exists())
        try:
            con = open_writer(db, engine_only=True)
        except BaseException:
            survey.result(quiet=True)
            raise
        try:
            return ingest_claude(con, root, prices, progress, workers, survey)
        finally:
            con.close()
    opened: list[duckdb.DuckDBPyConnection] = []
    try:
        return ingest_claude(lambda: opened.append(open_writer(db, engine_only=True))
                             or opened[0], root, prices,
                             progress, workers)
    finally:
        for con in opened:
            con.close()


def ingest_claude(con: duckdb.DuckDBPyConnection | Callable[[], duckdb.DuckDBPyConnection],
                  root: str | os.PathLike, prices: str | os.PathLike | None = None,
                  progress: ProgressFn | None = None, workers: int | None = None,
                  survey: Survey | None = None) -> ClaudeSummary:
    """Read every transcript under ``root`` (only what is new since the last run).

    Files are parsed in ``workers`` processes (default: one per CPU; in this process when
    there is little to read) and written by this process, whole files per transaction.
    ``con`` may be a function that opens a new, empty store: it is called once the workers
    are parsing (every file is then new). ``survey``: the :class:`Survey` of ``root``
    started earlier (else it is taken here).
    """
    root = _root(root) if survey is None else survey.root
    summary = ClaudeSummary()
    price_rows, summary.prices_files = load_prices(prices)
    files, refused = survey.result() if survey else claude_files.discover(root)
    heads = survey.heads if survey else {}
    prefix = str(root) if root.is_file() else str(root) + os.sep
    opener = None
    if isinstance(con, engine().DuckDBPyConnection):
        known = {row[0]: row for row in con.execute(
            "SELECT source_file, bytes_done, lines_done, pending_bytes, head_sha256, runs,"
            " rows_loaded, errors FROM cc_files"
            " WHERE source_file = ? OR starts_with(source_file, ?)",
            [str(root), prefix]).fetchall()}
    else:  # a store still to create: nothing known; column types from the schema alone
        from brainlab.store.claude_rows import schema_types

        opener, known = con, {}
        schema_types()
    seen, jobs = set(), []
    for path in files:
        key = str(path)
        try:
            job = plan_file(path, known.get(key), heads.get(key))
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
    if opener is None and not jobs and not set(known) - seen:  # nothing new: no parser
        rollup_stale = write_prices(con, price_rows) or not usage_rollup.is_current(con)
        _record_refused(con, refused, summary)
        return _finish(con, summary, rollup_stale, [], [], not _measures_stored(con), [])
    from brainlab.store import claude_pool
    from brainlab.store.claude_pool import parse_all
    from brainlab.store.claude_writer import Writer, delete_file

    streamed = [job for job in jobs if job.size - job.offset >= STREAM_MIN_BYTES]
    pooled = [job for job in jobs if job.size - job.offset < STREAM_MIN_BYTES]
    opened: list[duckdb.DuckDBPyConnection] = []
    parsed_files = parse_all(pooled, workers, (lambda: opened.append(opener())) if opener
                             else None)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of short-lived tuples: the cyclic GC alone doubled the run time
    try:
        if opener is not None:  # the store is created once the workers are parsing
            first = next(parsed_files, None)
            parsed_files = itertools.chain([first] if first else [], parsed_files)
            con = opened[0]
        removed = sorted(set(known) - seen)
        # the usage roll-up (issue 12): rewritten when prices or rows change, or it is stale
        rollup_stale = write_prices(con, price_rows) or not usage_rollup.is_current(con)
        if jobs or removed:
            usage_rollup.invalidate(con)
            if not rollup_stale:  # its rows about to be deleted: the groups they leave change
                usage_rollup.capture_deleted(con, [j.path for j in jobs if j.reset] + removed)
        _record_refused(con, refused, summary)
        writer = Writer(con)
        # the parse workers keep the cores busy: DuckDB's own insert threads only contended
        # with them (main process 2.8 -> 2.1 CPU-s per GB of corpus, no slower); restored at
        # the end. A run parsed here keeps DuckDB's threads (setting them: 4 ms each way)
        threads = None
        if streamed or claude_pool.uses_pool(pooled, workers):
            threads = con.execute("SELECT current_setting('threads')").fetchone()[0]
            con.execute("SET threads = 1")
        try:
            for group_jobs, group in parsed_files:
                writer.write_group(group_jobs, group, summary)
                for job in group_jobs if progress else ():
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
            try:
                if threads is not None:
                    con.execute(f"SET threads = {int(threads)}")
            except engine().Error:  # a connection an interrupt left unusable: the error
                pass  # above counts
    finally:
        if gc_was_enabled:
            gc.enable()
    # sessions whose measures change (issue 13); none to list when all are measured again
    measure_all = not _measures_stored(con)
    touched = [] if measure_all else [row[0] for row in con.execute(
        "SELECT DISTINCT session_id FROM cc_spans WHERE source_file IN"
        " (SELECT unnest(?::VARCHAR[])) AND session_id IS NOT NULL",
        [[job.path for job in jobs] + removed]).fetchall()]
    for gone in removed:
        con.execute("BEGIN TRANSACTION")
        delete_file(con, gone)
        con.execute("DELETE FROM cc_files WHERE source_file = ?", [gone])
        con.execute("COMMIT")
        summary.removed += 1
    return _finish(con, summary, rollup_stale, jobs, removed, measure_all, touched)


def _finish(con: duckdb.DuckDBPyConnection, summary: ClaudeSummary, rollup_stale: bool,
            jobs: list[FileJob], removed: list[str], measure_all: bool,
            touched: list[str]) -> ClaudeSummary:
    """Bring the derived tables up to date with the rows; the summary's unpriced models.

    Also for a run with nothing new (no jobs): a new price file, or a roll-up or measures a
    rebuilt catalogue dropped, still get their tables rewritten.
    """
    if rollup_stale:
        usage_rollup.refresh(con)
    elif jobs or removed:  # only the groups the new and deleted lines can change
        usage_rollup.refresh_touched(con, [(j.path, 0 if j.reset else j.lines_done)
                                           for j in jobs])
    if measure_all:
        refresh_measures(con)  # measured metabolism per session (issue 13), all of it
    elif touched:
        refresh_measures(con, touched)
    summary.unpriced_models = _unpriced(con)
    return summary


def _unpriced(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The models no price row covers: names only (no dedup needed); a line without a model too."""
    return [r[0] if r[0] is not None else "(no model)" for r in con.execute(
        "SELECT model FROM cc_model_prices WHERE priced_as IS NULL"
        " ORDER BY model NULLS LAST").fetchall()]


def _root(root: str | os.PathLike) -> Path:
    """``root`` resolved; a SourceError when there is nothing there."""
    path = Path(root).expanduser()
    if not path.exists():
        raise SourceError(f"no transcripts at {path}")
    return path.resolve()


class Survey:
    """What planning reads from the file system, read in a thread while the store opens.

    The transcripts under ``root`` (:func:`claude_files.discover`), and per file its size
    and the hash of its first HEAD_BYTES (what :func:`plan_file` compares with cc_files),
    or the OSError met (``hashes=False``, for a new store: sizes only). DuckDB releases the
    GIL while it opens a store, so this costs the run nothing (812 files: 20-30 ms of open,
    read and hash hidden behind a 30 ms open).
    """

    def __init__(self, root: Path, hashes: bool = True):
        self.root, self.hashes = root, hashes
        self.heads: dict[str, tuple[int, str | None] | OSError] = {}
        self._found: tuple[list[Path], list[tuple[str, str]]] | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="brainlab-survey", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            files, refused = claude_files.discover(self.root)
            for path in files:
                try:
                    size = os.stat(path).st_size
                    self.heads[str(path)] = (size, head_hash(path, HEAD_BYTES)
                                             if self.hashes and size >= HEAD_BYTES else None)
                except OSError as exc:  # vanished or unreadable: refused when planned
                    self.heads[str(path)] = exc
            self._found = files, refused
        except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread
            self._error = exc

    def result(self, quiet: bool = False) -> tuple[list[Path], list[tuple[str, str]]]:
        """Wait for the survey; (files, refused) as discover() returns them."""
        self._thread.join()
        if self._error is not None and not quiet:
            raise self._error
        return self._found or ([], [])


def _record_refused(con: duckdb.DuckDBPyConnection, refused: list[tuple[str, str]],
                    summary: ClaudeSummary) -> None:
    """Error rows for the paths discovery refused (replacing those of earlier runs)."""
    if not refused:
        return
    from brainlab.sources import claude_code as cc
    from brainlab.store.claude_rows import insert_columns

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


def plan_file(path: Path, state: tuple | None,
              seen: tuple[int, str | None] | OSError | None = None) -> FileJob | None:
    """Decide what to read of ``path`` given its cc_files row; None when nothing is new.

    ``seen``: its (size, hash of its first HEAD_BYTES or None) or the error, from a
    :class:`Survey`; else read here.
    """
    if isinstance(seen, OSError):
        raise seen
    size, first = seen if seen is not None else (path.stat().st_size, None)
    if state is None:
        return FileJob(str(path), 0, 0, size, False, True, 0, 0, 0)
    _, bytes_done, lines_done, pending, head, runs, rows_before, errors_before = state
    same_head = (first if first is not None and bytes_done >= HEAD_BYTES
                 else head_hash(path, bytes_done)) == head
    if size == bytes_done + pending and same_head:
        return None
    if size < bytes_done or not same_head:  # rewritten: read again from the start
        return FileJob(str(path), 0, 0, size, True, False, runs, 0, 0)
    return FileJob(str(path), bytes_done, lines_done, size, False, False, runs,
                   rows_before or 0, errors_before or 0)


__all__ = ["ClaudeSummary", "Survey", "default_root", "ingest_claude", "ingest_claude_db",
           "load_prices", "plan_file", "write_prices"]
