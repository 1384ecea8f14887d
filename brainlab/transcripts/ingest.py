"""Load Claude Code transcripts into DuckDB incrementally: new files whole, grown files by tail.

Each file keeps in ``cc_files`` the byte offset after its last complete line. A run reads only
new bytes; an unfinished last line (a file still being written) is left for the next run. A
file that shrank, whose first bytes or last bytes read changed, or that was written since
without growing, was rewritten: its rows are replaced (issue 29, integrity 3). A file gone
from disk (Claude Code deletes transcripts after ``cleanupPeriodDays``) keeps its rows and is
marked gone (``cc_files.gone_at``); only ``prune`` removes them, all in one transaction; a
gone file that comes back is read as any other, so it is never counted twice. A file's
rows, error rows (``ingest_errors``, source ``claude``) and new offset are written in one
transaction (small files share one), so a crash never leaves half a file. The SPEC §7
deduplication is global, so it lives in views over the raw line tables: appending lines never
needs to revisit earlier files.

This module plans a run and orders its steps; worker processes (:mod:`pool`) read
groups of files (:mod:`scan`) into typed rows (:mod:`rows`), which
:mod:`writer` writes; then the derived tables are stored (:mod:`usage_rollup`,
:mod:`measured`), so read commands never re-derive them.
"""

from __future__ import annotations

import gc
import itertools
import os
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from brainlab.common.errors import SourceError
from brainlab.store import trend_scan, usage_rollup
from brainlab.store.connection import engine, seal_writer, sealed
from brainlab.store.measured import refresh_measures
from brainlab.store.prices import PRICES_ENV, load_prices, write_prices  # noqa: F401
from brainlab.transcripts import discovery
from brainlab.transcripts.plan import HEAD_BYTES, ClaudeSummary, FileJob, edge_hashes, head_hash

# The parser's modules (pool, scan, writer, rows and the modules
# they import: 50-60 ms) are imported once planning found something to read: a run with
# nothing new, the usual ingest from a hook, never loads them (issue 12).

if TYPE_CHECKING:
    import duckdb

# a file with more than this to read is parsed in this process and its rows inserted block by
# block (memory bounded by the read block, whatever the file's size), after the pooled files
STREAM_MIN_BYTES = 128 * 1024 * 1024

ProgressFn = Callable[[Path, str], None]
Roots = str | os.PathLike | Sequence[str | os.PathLike]  # one transcript root, or several


def default_roots() -> list[Path]:
    """Every ``projects/`` folder Claude Code writes to (:func:`discovery.default_roots`).

    A SourceError naming the folders tried when there is none.
    """
    found, tried = discovery.default_roots()
    if not found:
        raise SourceError("no transcripts at " + ", ".join(str(t) for t in tried)
                          + ": give the projects folder as PATH (or set CLAUDE_CONFIG_DIR)")
    return found


def default_root() -> Path:
    """The first Claude root (callers that take one root; ``ingest claude`` reads them all)."""
    found, tried = discovery.default_roots()
    return found[0] if found else tried[-1]


def ingest_claude_db(db: str | os.PathLike, root: Roots, prices: str | os.PathLike | None = None,
                     progress: ProgressFn | None = None, workers: int | None = None,
                     prune: bool = False) -> ClaudeSummary:
    """:func:`ingest_claude` into the store at ``db``, opened (or created) and closed here.

    A new store is a copy of the cached empty store (0.04 CPU-s); when that template must
    be built first (1-2 CPU-s, the very first run), every file is new, so the workers start
    parsing first and the store is created while they work.
    """
    from brainlab.store.schema import open_writer, template_ready

    if Path(db).exists() or template_ready():
        # the file system is read while DuckDB opens the store (a new one: no hashes needed)
        survey = Survey(_roots(root), hashes=Path(db).exists())
        try:
            con = open_writer(db, engine_only=True)
        except BaseException:
            survey.result(quiet=True)
            raise
        try:
            return ingest_claude(con, root, prices, progress, workers, survey, prune)
        finally:
            con.close()
    opened: list[duckdb.DuckDBPyConnection] = []
    try:
        return ingest_claude(lambda: opened.append(open_writer(db, engine_only=True))
                             or opened[0], root, prices,
                             progress, workers, prune=prune)
    finally:
        for con in opened:
            con.close()


def ingest_claude(con: duckdb.DuckDBPyConnection | Callable[[], duckdb.DuckDBPyConnection],
                  root: Roots, prices: str | os.PathLike | None = None,
                  progress: ProgressFn | None = None, workers: int | None = None,
                  survey: Survey | None = None, prune: bool = False) -> ClaudeSummary:
    """Read every transcript under ``root`` (only what is new since the last run).

    ``root``: a folder or file, or several (every Claude root: :func:`default_roots`; a call
    found under two of them counts once, as the deduplication is by message.id). Files known
    under them and no longer on disk keep their rows; ``prune`` removes those rows.

    Files are parsed in ``workers`` processes (default: one per CPU; in this process when
    there is little to read) and written by this process, whole files per transaction.
    ``con`` may be a function that opens a new, empty store: it is called once the workers
    are parsing (every file is then new). ``survey``: the :class:`Survey` of ``root``
    started earlier (else it is taken here).
    """
    roots = _roots(root) if survey is None else survey.roots
    summary = ClaudeSummary()
    price_rows, summary.prices_files = load_prices(prices)
    files, refused = survey.result() if survey else _discover(roots)
    heads = survey.heads if survey else {}
    opener, stored = None, False
    if isinstance(con, engine().DuckDBPyConnection):
        # a new store (a copy of the template) knows no file: its two lookups cost 10 ms
        stored = con.execute("SELECT EXISTS (SELECT 1 FROM cc_files)").fetchone()[0]
        known = _known(con, roots, str) if stored else {}
    else:  # a store still to create: nothing known; column types from the schema alone
        from brainlab.store.columns import schema_types

        opener, known = con, {}
        schema_types()
    seen, jobs, redacted_roots = set(), [], not stored
    for path in files:
        key = str(path)
        if key not in known:  # new, or stored redacted (issue 29): the stored form
            key = stored_path(path)  # (a run with nothing new imports no redaction rules)
            if not redacted_roots:
                redacted_roots = True
                known.update(_known(con, roots, stored_path))
        try:
            job = plan_file(path, known.get(key), heads.get(str(path)), key)
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
    refused = [(stored_path(path), reason) for path, reason in refused]
    missing = set(known) - seen - {path for path, _ in refused}  # unreadable is not gone
    pruned = sorted(missing) if prune else []
    if opener is None:  # gone files keep their rows (issue 24): only noted, until pruned
        _note_gone(con, known, missing, seen, summary)
    if opener is None and not jobs and not pruned:  # nothing new: no parser
        rollup_stale = write_prices(con, price_rows) or not usage_rollup.is_current(con)
        _record_refused(con, refused, summary)
        measure_all = not _measures_stored(con)  # and what a killed run left to measure
        return _finish(con, summary, rollup_stale, [], [], measure_all,
                       [] if measure_all else _sessions_of(con, _measures_pending(con)))
    from brainlab.transcripts import pool
    from brainlab.transcripts.pool import parse_all
    from brainlab.transcripts.writer import Writer, delete_files

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
        removed = pruned
        # the usage roll-up (issue 12): rewritten when prices or rows change, or it is stale
        rollup_stale = write_prices(con, price_rows) or not usage_rollup.is_current(con)
        if jobs or removed:
            if not rollup_stale:  # its rows about to be deleted: the groups they leave change
                usage_rollup.capture_deleted(con, [j.path for j in jobs if j.reset] + removed)
        _record_refused(con, refused, summary)

        def bookkeeping() -> None:  # in the first transaction that writes rows (the Writer's)
            usage_rollup.invalidate(con)  # a full disk that refuses them keeps the key
            trend_scan.inputs_changed(con)  # the stored change points: stale (no pandas here)
            _mark_measures_pending(con, [j.path for j in jobs] + removed)

        writer = Writer(con, bookkeeping if jobs or removed else None)
        # the parse workers keep the cores busy: DuckDB's own insert threads only contended
        # with them (main process 2.8 -> 2.1 CPU-s per GB of corpus, no slower); restored at
        # the end. A run parsed here keeps DuckDB's threads (setting them: 4 ms each way)
        threads = None
        if (streamed or pool.uses_pool(pooled, workers)) and not sealed(con):  # a second
            # ingest on a connection the first one sealed (the hooks' spool) keeps them
            threads = con.execute("SELECT current_setting('threads')").fetchone()[0]
            con.execute("SET threads = 1")
        try:
            for group_jobs, group in parsed_files:
                writer.write_group(group_jobs, group, summary)
                for job in group_jobs if progress else ():
                    progress(Path(job.file), "reset" if job.reset else "loaded")
            for job in streamed:
                writer.write(job, writer.stream(job), summary)
                if progress:
                    progress(Path(job.file), "reset" if job.reset else "loaded")
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
    touched = [] if measure_all else _sessions_of(
        con, [job.path for job in jobs] + removed + _measures_pending(con))
    if removed:  # --prune: every gone file's rows in one transaction (a kill: before or after)
        con.execute("BEGIN TRANSACTION")
        try:
            writer.bookkeep()  # when no file was written: the removal carries it
            summary.removed_rows = delete_files(con, removed)
            con.execute("COMMIT")
            writer.committed()
        except BaseException:
            con.execute("ROLLBACK")
            raise
        summary.removed, summary.gone_kept = len(removed), 0
    return _finish(con, summary, rollup_stale, jobs, removed, measure_all, touched)


def _finish(con: duckdb.DuckDBPyConnection, summary: ClaudeSummary, rollup_stale: bool,
            jobs: list[FileJob], removed: list[str], measure_all: bool,
            touched: list[str]) -> ClaudeSummary:
    """Bring the derived tables up to date with the rows; the summary's unpriced models.

    Also for a run with nothing new (no jobs): a new price file, or a roll-up or measures a
    rebuilt catalogue dropped, still get their tables rewritten.
    """
    seal_writer(con)  # the rest runs the store's views: with external access off (issue 46)
    if rollup_stale:
        usage_rollup.refresh(con)
    elif jobs or removed:  # only the groups the new and deleted lines can change
        usage_rollup.refresh_touched(con, [(j.path, 0 if j.reset else j.lines_done)
                                           for j in jobs])
    if measure_all:
        refresh_measures(con)  # measured metabolism per session (issue 13), all of it
    elif touched:
        refresh_measures(con, touched)
    if jobs or removed or _measures_pending(con):  # a run with nothing new writes nothing
        con.execute("DELETE FROM brainlab_meta WHERE key = ?", [MEASURES_PENDING])
    summary.unpriced_models = _unpriced(con)
    return summary


def _unpriced(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The models no price row covers: names only (no dedup needed); a line without a model too."""
    return [r[0] if r[0] is not None else "(no model)" for r in con.execute(
        "SELECT model FROM cc_model_prices WHERE priced_as IS NULL"
        " ORDER BY model NULLS LAST").fetchall()]


def _roots(root: Roots) -> list[Path]:
    """``root`` (one or several) resolved, without repeats; a SourceError for a missing one."""
    found: dict[str, Path] = {}
    for item in [root] if isinstance(root, (str, os.PathLike)) else root:
        path = Path(item).expanduser()
        if not path.exists():
            raise SourceError(f"no transcripts at {path}")
        found.setdefault(str(path.resolve()), path.resolve())
    return list(found.values())


def _discover(roots: list[Path]) -> tuple[list[Path], list[tuple[str, str]]]:
    """:func:`discovery.discover` over every root: files sorted, each once."""
    if len(roots) == 1:
        return discovery.discover(roots[0])
    files: dict[str, Path] = {}
    refused: list[tuple[str, str]] = []
    for root in roots:
        found, problems = discovery.discover(root)
        files.update((str(f), f) for f in found)
        refused += problems
    return sorted(files.values()), refused


def _note_gone(con: duckdb.DuckDBPyConnection, known: dict[str, tuple], missing: set[str],
               seen: set[str], summary: ClaudeSummary) -> None:
    """Mark files newly missing as gone and files found again as present (one transaction).

    Their rows stay: usage views are unchanged. A run where nothing went or came back writes
    nothing (the usual run from a hook).
    """
    went = sorted(k for k in missing if known[k][10] is None)
    back = sorted(k for k in seen if k in known and known[k][10] is not None)
    summary.gone, summary.returned = len(went), len(back)
    summary.gone_kept = len(missing)
    if not (went or back):
        return
    now = datetime.now(UTC).replace(tzinfo=None)
    con.execute("BEGIN TRANSACTION")
    con.execute("UPDATE cc_files SET gone_at = ? WHERE source_file IN"
                " (SELECT unnest(?::VARCHAR[]))", [now, went])
    con.execute("UPDATE cc_files SET gone_at = NULL WHERE source_file IN"
                " (SELECT unnest(?::VARCHAR[]))", [back])
    con.execute("COMMIT")


class Survey:
    """What planning reads from the file system, read in a thread while the store opens.

    The transcripts under ``roots`` (:func:`discovery.discover`), and per file its size,
    the hash of its first HEAD_BYTES and its modification time (what :func:`plan_file`
    compares with cc_files), or the OSError met (``hashes=False``, for a new store: sizes
    only). DuckDB releases the GIL while it opens a store, so this costs the run nothing
    (812 files: 20-30 ms of open, read and hash hidden behind a 30 ms open).
    """

    def __init__(self, roots: list[Path], hashes: bool = True):
        self.roots, self.hashes = roots, hashes
        self.heads: dict[str, tuple[int, str | None, int] | OSError] = {}
        self._found: tuple[list[Path], list[tuple[str, str]]] | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="brainlab-survey", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            files, refused = _discover(self.roots)
            for path in files:
                try:
                    st = os.stat(path)
                    size = st.st_size
                    self.heads[str(path)] = (size, head_hash(path, HEAD_BYTES)
                                             if self.hashes and size >= HEAD_BYTES else None,
                                             st.st_mtime_ns)
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
    from brainlab.store.columns import insert_columns
    from brainlab.transcripts.values import SOURCE

    con.execute("BEGIN TRANSACTION")
    paths = sorted({path for path, _ in refused})
    con.execute("DELETE FROM ingest_errors WHERE source = ? AND line IS NULL"
                " AND file IN (SELECT unnest(?::VARCHAR[])) AND starts_with(reason, 'skipped:')",
                [SOURCE, paths])
    insert_columns(con, "ingest_errors", ("file", "line", "reason", "source", "severity"),
                   [[p for p, _ in refused], [None] * len(refused), [r for _, r in refused],
                    [SOURCE] * len(refused), ["error"] * len(refused)])
    con.execute("COMMIT")
    summary.errors += len(refused)


MEASURES_PENDING = "measures_pending"  # brainlab_meta: files whose sessions' measures are
# to refresh, written before a run writes their rows and cleared once it has refreshed them


def _measures_pending(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The files a run killed between their rows and their measures left.

    The hooks' drain worker may be killed at any point (issue 46): the next run, even one
    with nothing new, measures their sessions again.
    """
    import json

    row = con.execute("SELECT value FROM brainlab_meta WHERE key = ?",
                      [MEASURES_PENDING]).fetchone()
    try:
        files = json.loads(row[0]) if row else []
    except ValueError:
        return []
    return [f for f in files if isinstance(f, str)] if isinstance(files, list) else []


def _mark_measures_pending(con: duckdb.DuckDBPyConnection, files: list[str]) -> None:
    """Add ``files`` to the pending ones before their rows are written (committed at once)."""
    import json

    pending = sorted(set(_measures_pending(con)) | set(files))
    con.execute("INSERT OR REPLACE INTO brainlab_meta VALUES (?, ?)",
                [MEASURES_PENDING, json.dumps(pending)])


def _sessions_of(con: duckdb.DuckDBPyConnection, files: list[str]) -> list[str]:
    """The sessions whose lines came from ``files`` (their measures change with them)."""
    if not files:
        return []
    return [row[0] for row in con.execute(
        "SELECT DISTINCT session_id FROM cc_spans WHERE source_file IN"
        " (SELECT unnest(?::VARCHAR[])) AND session_id IS NOT NULL", [files]).fetchall()]


def _measures_stored(con: duckdb.DuckDBPyConnection) -> bool:
    """False when transcripts are stored but their measures are not (e.g. a rebuilt catalog)."""
    return con.execute("SELECT (SELECT count(*) FROM cc_session_measures) > 0"
                       " OR NOT EXISTS (SELECT 1 FROM cc_spans)").fetchone()[0]


def _known(con: duckdb.DuckDBPyConnection, roots: list[Path],
           form: Callable[[Path], str]) -> dict[str, tuple]:
    """The cc_files rows under ``roots`` (written in ``form``: as they are, or redacted)."""
    return {row[0]: row for row in con.execute(
        "SELECT source_file, bytes_done, lines_done, pending_bytes, head_sha256, runs,"
        " rows_loaded, errors, tail_sha256, mtime_ns, gone_at FROM cc_files"
        " WHERE source_file IN (SELECT unnest(?::VARCHAR[])) OR EXISTS (SELECT 1 FROM"
        " unnest(?::VARCHAR[]) t(p) WHERE starts_with(source_file, p))",
        [[form(r) for r in roots], [form(r) + os.sep for r in roots if not r.is_file()]]
    ).fetchall()}


def stored_path(path: Path | str) -> str:
    """``path`` as cc_files and every row keep it (:func:`brainlab.sources.redact.stored_path`)."""
    from brainlab.sources.redact import stored_path as redacted

    return redacted(path)


def plan_file(path: Path, state: tuple | None,
              seen: tuple[int, str | None, int] | OSError | None = None,
              key: str | None = None) -> FileJob | None:
    """Decide what to read of ``path`` given its cc_files row; None when nothing is new.

    ``state``: the cc_files columns source_file to errors, then (optionally) tail_sha256 and
    mtime_ns. ``seen``: its (size, hash of its first HEAD_BYTES or None, mtime) or the
    error, from a :class:`Survey`; else read here. Rewritten, read again from the start: a
    file that shrank or whose first bytes changed; a grown file whose last block read changed
    (truncated and written again past its old size); a file of the same size written since
    it was read (issue 29, integrity 3). Unchanged files cost no read beyond the Survey's.
    ``key``: the path as stored (:func:`stored_path`, computed when not given).
    """
    key = stored_path(path) if key is None else key
    if isinstance(seen, OSError):
        raise seen
    if seen is None:
        st = path.stat()
        seen = (st.st_size, None, st.st_mtime_ns)
    size, first, mtime = seen
    if state is None:
        return FileJob(key, 0, 0, size, False, True, 0, 0, 0, mtime, str(path))
    bytes_done, lines_done, pending, head, runs, rows_before, errors_before = state[1:8]
    tail, mtime_read = state[8:10] if len(state) > 9 else (None, None)
    same_head = (first if first is not None and bytes_done >= HEAD_BYTES
                 else head_hash(path, bytes_done)) == head
    reread = FileJob(key, 0, 0, size, True, False, runs, 0, 0, mtime, str(path))
    if size == bytes_done + pending and same_head:
        return None if mtime_read is None or mtime == mtime_read else reread
    if size < bytes_done or not same_head:
        return reread
    if tail is not None and bytes_done > HEAD_BYTES and edge_hashes(path, bytes_done)[1] != tail:
        return reread
    return FileJob(key, bytes_done, lines_done, size, False, False, runs,
                   rows_before or 0, errors_before or 0, mtime, str(path))


__all__ = ["ClaudeSummary", "Survey", "default_root", "default_roots", "ingest_claude", "ingest_claude_db",
           "load_prices", "plan_file", "write_prices"]
