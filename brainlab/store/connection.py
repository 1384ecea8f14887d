"""The one DuckDB connection factory: every connection brainlab opens is made here.

Set-up runs in a fixed order (connect, settings, schema for writers). Writers are the ingest
commands only; readers open the file read-only and briefly, so an open notebook never keeps an
ingest waiting (DuckDB lets one process write, or several read, at a time). Either waits a
few seconds (``LOCK_WAIT``) for a store another process holds before it says so.

Opening a store costs ~20 ms of CPU (DuckDB loads its catalog of ~500 tables, views and
macros) and sealing and closing it ~10 ms more, while most queries take a few ms: a burst of
queries spent most of its CPU opening the file again and again. So in the ``brainlab``
command (a process that is brainlab's alone) a reader's database stays warm for ``LINGER_S``
after its last query (:class:`Warm`): the next reader of the same unchanged file gets a fresh
connection to it (its own temp schema and registrations, the instance's seal) for ~0.2 ms.
The store stays readable by others meanwhile; a writer of another process waits at most
``LINGER_S`` longer (it waits ``LOCK_WAIT``), and one of this process closes it first. It is
off in library use (a notebook, a script, a test): there the user's own code may open the
same file with ``duckdb.connect`` in the same process, which DuckDB would refuse ("different
configuration") or give the warm, sealed instance; ``$BRAINLAB_READER_LINGER`` (seconds)
turns it on there too.

A ``.duckdb`` file is code (issue 29): a view can read any local file. Readers therefore run
with DuckDB's external access off and the configuration locked, except the directories they
are meant to read (the lake folder an attached store names in ``brainlab_meta``, or what the
caller allows, e.g. an export's lake); a store whose raw table is a view, outside a store made
by ``brainlab attach``, is refused.
"""

from __future__ import annotations

import atexit
import functools
import os
import re
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from brainlab.common.errors import StoreError, StoreLockedError, StoreMissingError
from brainlab.common.paths import DEFAULT_DB

if TYPE_CHECKING:
    import duckdb


def engine(full: bool = False):
    """DuckDB's Python module: its compiled engine alone, or the whole package when ``full``.

    The engine (``_duckdb``, a module of its own since duckdb 1.4) connects, runs SQL and
    fetches rows; the package adds relations, Arrow sources and DataFrame glue, and costs
    45-60 ms more to import (``duckdb._relation``, ``importlib.metadata``), a third of a
    read command (issue 12). Both raise the same exception classes and open the same
    connection class; an older duckdb without the separate engine gets the package.
    """
    if not full:
        try:
            import _duckdb  # noqa: PLC2701  (duckdb's own engine module)

            return _duckdb
        except ImportError:
            pass
    import duckdb

    return duckdb


@dataclass(frozen=True)
class StoreConfig:
    """How to open the store."""

    path: Path = DEFAULT_DB  # the database file; created (with its folder) by writers
    read_only: bool = True  # readers never take the write lock
    threads: int | None = None  # DuckDB worker threads; None = DuckDB's default (all cores)
    memory_limit: str | None = None  # e.g. "2GB"; None = DuckDB's default (80% of RAM)
    engine_only: bool = False  # open with DuckDB's engine module alone (see engine()): for
    # callers that execute SQL and fetch tuples, never relations or DataFrames
    allowed: tuple[str, ...] = ()  # directories a reader may still read or write
    lock_wait: float | None = None  # seconds to wait for another process's lock (None:
    # LOCK_WAIT; 0: try once, as the hooks' drain worker does, which retries on its own)
    progress_bar: bool = True  # False: no DuckDB progress bar (a widget in a Jupyter kernel)


LOCK_WAIT = 5.0  # a read or an ingest waits this long for the process holding the store
LOCK_POLL = (0.02, 0.1)  # first and longest pause between tries: the hooks' drain worker
# leaves the store free between its batches (brainlab.live.hook_ingest.PAUSE_S, longer)


def connect(config: StoreConfig) -> duckdb.DuckDBPyConnection:
    """Open the database as ``config`` says, turning DuckDB's lock error into a clear one."""
    path = Path(config.path)
    if config.read_only and not path.exists():
        raise StoreMissingError(
            f"no database at {path}: run `brainlab ingest ...` or `brainlab demo` first,"
            " or pass --db PATH"
        )
    if not config.read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
        drop_orphan_wal(path)
    plain_reader = config.read_only and not (config.allowed or config.threads
                                             or config.memory_limit)
    if not plain_reader:  # DuckDB shares one instance per file and process, and its seal
        WARM.release(path)
    duckdb = engine(full=not config.engine_only)
    wait = LOCK_WAIT if config.lock_wait is None else config.lock_wait
    deadline, pause = time.monotonic() + wait, LOCK_POLL[0]
    waiting = None
    try:
        while True:
            try:
                con = duckdb.connect(str(path), read_only=config.read_only)
                break
            except duckdb.IOException as exc:
                if "lock" not in str(exc).lower() or time.monotonic() >= deadline:
                    raise
                # another process holds the store (an ingest, the hooks' worker in a batch):
                # readers and writers alike wait briefly, tries closer at first, and say so
                # (the worker lets them in before its next batch)
                waiting = waiting if waiting is not None else announce_waiting(path)
                time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
                pause = min(pause * 2, LOCK_POLL[1])
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            holder = _lock_holder(str(exc))
            raise StoreLockedError(
                f"database {path} is in use by another process{holder}"
                + (f" (waited {wait:g} s)" if wait > 0 else "") + "; DuckDB allows one"
                " writer at a time, or readers only. Close that process (or wait for its"
                " ingest to finish) and try again."
            ) from None
        raise StoreError(f"cannot open database {path}: {exc}") from exc
    except duckdb.Error as exc:
        raise StoreError(f"cannot open database {path}: {exc}") from exc
    finally:
        if waiting is not None:
            os.close(waiting)  # its shared lock goes with it
    # in a Jupyter kernel DuckDB's progress bar is an ipywidget: an exported notebook shows an
    # empty area where a slow query ran (issue 44 item 3); the terminal keeps its bar
    if not config.progress_bar or "ipykernel" in sys.modules:
        try:
            con.execute("SET enable_progress_bar = false")
        except duckdb.Error:  # an instance another connection sealed keeps its settings
            pass
    try:  # before a reader's seal locks the settings
        if config.threads:
            con.execute(f"SET threads = {int(config.threads)}")
        if config.memory_limit:
            con.execute("SET memory_limit = ?", [config.memory_limit])
    except duckdb.Error:
        if not config.read_only:
            con.close()
            raise
        # a reader of an instance another connection of this process sealed keeps its settings
    if config.read_only:
        try:
            seal(con, path, config.allowed)
        except BaseException:
            con.close()
            raise
    return con


def waiting_file(path: str | os.PathLike) -> Path:
    """The file whose shared ``flock`` says a process is waiting for the store at ``path``.

    In the cache folder (``locks/``), named after the store. The hooks' drain worker takes
    it exclusively, without blocking, before each batch: while it cannot, somebody waits,
    and the worker lets them in first (issue 46).
    """
    import binascii

    from brainlab.common.paths import cache_dir

    key = str(Path(path).resolve()).encode("utf-8", "surrogateescape")
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", Path(path).name)[:48]
    return cache_dir() / "locks" / f"{safe}-{binascii.crc32(key):08x}.waiting"


def announce_waiting(path: str | os.PathLike) -> int | None:
    """Hold a shared lock on :func:`waiting_file` (its descriptor; closing it ends it).

    None when it cannot be had (no cache folder, no ``flock``, the worker looking right now:
    the next try announces).
    """
    try:
        import fcntl

        file = waiting_file(path)
        file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except (ImportError, OSError):
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def memory(engine_only: bool = True) -> duckdb.DuckDBPyConnection:
    """An in-memory database: no file, no lock, nothing to seal.

    For parsing SQL and scratch tables; ``engine_only`` as in :class:`StoreConfig`.
    """
    return connect(StoreConfig(path=Path(":memory:"), read_only=False, engine_only=engine_only))


@functools.cache
def raw_table_names() -> frozenset[str]:
    """The store's raw tables (models/raw/, less the lookups) and brainlab_meta."""
    from brainlab.store.catalog import META, raw_tables

    return frozenset({*raw_tables(), META})


def seal(con, path: Path, allowed: tuple[str, ...] = ()) -> None:
    """Turn a reader's external access off (but ``allowed`` and its lake); lock the settings.

    A store whose raw table is a view is refused, unless it is an attached store (its
    ``brainlab_meta`` names a lake, the one folder its views may read).
    """
    # the views alone: duckdb_tables() writes every table's CREATE statement (its sql column,
    # read or not), ~4 ms of a usage command's CPU; a name that is no view is a table or absent
    views = {name for (name,) in con.execute(
        "SELECT view_name FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal"
    ).fetchall()}
    lake = None
    if "brainlab_meta" not in views:
        try:
            meta = dict(con.execute("SELECT key, value FROM brainlab_meta WHERE key IN"
                                    " ('lake', 'schema_version', 'release')").fetchall())
        except engine().CatalogException:  # no brainlab_meta: not a store, or one being made
            meta = {}
        lake = meta.get("lake") or None
        _warn_newer(meta, path)
    if lake is None:
        views = sorted(n for n in raw_table_names() if n in views)
        if views:
            raise StoreError(
                f"database {path} is refused: its raw table(s) {', '.join(views[:5])} are views,"
                " not tables (a store can hide code in a view). Ingest into a new store, or"
                " rebuild an attached one with `brainlab attach`")
    if con.execute("SELECT current_setting('lock_configuration') AND NOT "
                   "current_setting('enable_external_access')").fetchone()[0]:
        return  # another open connection of this process sealed this same database instance
    dirs = [str(d).rstrip("/") + "/" for d in allowed]
    if lake:
        dirs.append(lake.rstrip("/") + "/")
        if re.match(r"^[a-z][a-z0-9+.-]*://", lake) and not lake.startswith("file:"):
            con.execute("LOAD httpfs")  # an object-store lake: before access is closed
    if dirs:
        con.execute("SET allowed_directories = ?", [dirs])
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


_WARNED: set[str] = set()  # the newer stores this process has warned about


def _warn_newer(meta: dict, path: Path) -> None:
    """Warn once per process and store when a newer brainlab wrote the store being read.

    Reading a newer store is allowed (issue 47 item 5): a read never changes the record, and
    a team on two releases still sees its figures; the warning says a figure the newer
    release added may be missing, and to upgrade. Writing it is refused (schema.apply).
    """
    from brainlab.store.catalog import SCHEMA_VERSION, newer_store

    if meta.get("schema_version") in (None, str(SCHEMA_VERSION)) or str(path) in _WARNED:
        return
    text = newer_store(meta, str(path), writing=False)
    if text:
        _WARNED.add(str(path))
        from brainlab.common.plaintext import visible

        print(f"Warning: {visible(text)}", file=sys.stderr)


def seal_writer(con, allowed: tuple[str, ...] = ()) -> None:
    """Seal a writer before it runs queries over views: as a reader is (issue 46 item 4).

    A store's views are code a ``.duckdb`` file carries: the derived tables an ingest
    rewrites from them (the usage roll-up, measures), the unpriced-models summary and the
    live digest run them on the writer, where a view replaced by ``read_text('/some/file')``
    would read any local file. From here the connection runs with external access off and
    its configuration locked (:func:`seal`: a store whose raw table is a view is refused); its
    own database file it still writes, and the folders ``allowed`` names (``attach``: its
    lake). Called once its ingest has read its sources; a connection already sealed is left
    as it is.
    """
    row = con.execute("SELECT path FROM duckdb_databases()"
                      " WHERE database_name = current_database()").fetchone()
    seal(con, Path(row[0]) if row and row[0] else Path(":memory:"), allowed)


def sealed(con) -> bool:
    """Whether ``con``'s configuration is locked (a sealed reader or writer)."""
    return bool(con.execute("SELECT current_setting('lock_configuration')").fetchone()[0])


def sql_literal(text: str) -> str:
    """``text`` as a SQL string literal (quotes doubled; NUL refused).

    For statements DuckDB cannot prepare (``COPY ... TO``, ``CREATE VIEW ... read_parquet``).
    """
    if "\x00" in text:
        raise StoreError(f"a path or name holds a NUL character: {text!r}")
    return "'" + text.replace("'", "''") + "'"


def sql_ident(name: str) -> str:
    """``name`` as a quoted SQL identifier (double quotes doubled)."""
    if "\x00" in name:
        raise StoreError(f"a name holds a NUL character: {name!r}")
    return '"' + name.replace('"', '""') + '"'


def drop_orphan_wal(path: str | os.PathLike) -> None:
    """Remove the WAL of a store file that is gone, before a new store is made there.

    A writer killed before its checkpoint leaves its WAL; when the user then deletes the
    store, DuckDB would replay that WAL into the new store made at the same path (into a
    fresh copy of the template it was written against, seen: a stale brainlab_meta row).
    """
    if str(path) != ":memory:" and not os.path.exists(path):
        Path(str(path) + ".wal").unlink(missing_ok=True)


def has_schema(con: duckdb.DuckDBPyConnection) -> bool:
    """True when the file holds any table: an ingest killed before its schema leaves none."""
    return con.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'main'"
                       ).fetchone()[0] > 0


def _lock_holder(message: str) -> str:
    marker = "(PID "
    if marker in message:
        pid = message.split(marker, 1)[1].split(")", 1)[0]
        return f" (PID {pid})"
    return ""


def store_state(db: str | os.PathLike) -> tuple:
    """A store's identity and state: resolved path; inode, size and mtime of the file and WAL.

    Any write changes it, and so does another file put at the path; a figure memoized under
    it (the report's store-wide figures, the notebooks' holdings) is computed again after an
    ingest, and a warm reader (:class:`Warm`) is opened again. A part that is absent is None.
    """
    path = Path(os.fspath(db)).resolve()
    marks = []
    for part in (path, path.with_name(path.name + ".wal")):
        try:
            found = part.stat()
            marks.append((found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns))
        except OSError:
            marks.append(None)
    return (str(path), *marks)


LINGER_S = 0.5  # seconds a reader's database stays open after its last query, in the command
LINGER_ENV = "BRAINLAB_READER_LINGER"  # seconds, overriding it anywhere (0: closed at once)


class _Anchor:
    """One open, sealed read-only connection holding a database instance warm."""

    def __init__(self, con, state: tuple) -> None:
        self.con = con
        self.state = state  # store_state() when it opened: its first item is the key
        self.users = 0  # connections lent from it and not yet given back
        self.deadline = 0.0  # monotonic time it closes at when no connection is lent
        self.timer: threading.Timer | None = None


class Warm:
    """Database instances this process keeps open ``linger`` seconds after their last reader.

    :meth:`lend` lends a new connection to the warm instance of an unchanged file (DuckDB's
    ``cursor()``: a context of its own, so no temp table or registered frame passes from one
    reader to the next; the instance's settings and seal are shared), or opens one, sealed, as
    :func:`connect` does. Nothing else can change the file while the instance holds it: other
    processes cannot write a file a reader holds, a writer of this process first calls
    :meth:`release`, and a file replaced or removed meanwhile no longer matches its
    :func:`store_state`. A forked child forgets its parent's instances (never closes them).
    """

    def __init__(self) -> None:
        self.linger = 0.0  # seconds; the command tree sets LINGER_S (brainlab.cli.root.run)
        self._lock = threading.Lock()
        self._anchors: dict[str, _Anchor] = {}
        self._pid = os.getpid()
        self._orphans: list = []  # a forked child's inherited connections, kept unclosed
        # a timer's close and the exit's close_all, one at a time: a daemon thread still inside
        # DuckDB's close when the interpreter finalizes is ended by a forced unwind that
        # DuckDB's C++ swallows, and the process aborts ("FATAL: exception not rethrown")
        self._closing = threading.Lock()
        self._stopped = False  # the process is exiting (at_exit): a timer closes nothing

    @staticmethod
    def enabled() -> bool:
        """Whether readers linger (the command, or ``$BRAINLAB_READER_LINGER`` above 0)."""
        return _linger() > 0

    def _own(self) -> None:
        if self._pid != os.getpid():  # a forked child: its parent's connections are not its own
            self._orphans.extend(a.con for a in self._anchors.values())
            self._anchors.clear()
            self._lock = threading.Lock()
            self._closing = threading.Lock()
            self._pid = os.getpid()

    def lend(self, path: Path, engine_only: bool) -> tuple:
        """(a read-only connection to ``path``, its anchor or None): give both to :meth:`done`.

        From the file's warm instance when the file is unchanged, else opened (and sealed) by
        :func:`connect`, its instance then kept warm.
        """
        self._own()
        state = store_state(path)
        key = state[0]
        if not engine_only:
            engine(full=True)  # DataFrame glue for a connection the engine alone opened
        with self._lock:
            anchor = self._anchors.get(key)
            if anchor is not None and anchor.state != state:
                if anchor.users:  # in use by another thread: this reader opens its own
                    return connect(StoreConfig(path=path, read_only=True,
                                               engine_only=engine_only)), None
                del self._anchors[key]
                self._close(anchor)
                anchor = None
            if anchor is not None:
                anchor.users += 1
                return anchor.con.cursor(), anchor
        con = connect(StoreConfig(path=path, read_only=True, engine_only=engine_only))
        state = store_state(path)  # as the open connection holds it: no writer can change it
        with self._lock:
            if key in self._anchors or state[1] is None:  # another thread warmed it meanwhile
                return con, None
            anchor = self._anchors[key] = _Anchor(con, state)
            anchor.users = 1
            return con.cursor(), anchor

    def done(self, anchor: _Anchor) -> None:
        """A lent connection was closed: the instance closes ``linger`` s after the last one."""
        with self._lock:
            anchor.users -= 1
            if anchor.users:
                return
            if self._anchors.get(anchor.state[0]) is not anchor:  # released or replaced
                self._close(anchor)
                return
            anchor.deadline = time.monotonic() + _linger()
            if anchor.timer is None:
                self._arm(anchor, _linger())

    def _arm(self, anchor: _Anchor, seconds: float) -> None:
        anchor.timer = threading.Timer(seconds, self._expire, (anchor,))
        anchor.timer.daemon = True
        anchor.timer.start()

    def _expire(self, anchor: _Anchor) -> None:
        key = anchor.state[0]
        with self._lock:
            anchor.timer = None
            if self._anchors.get(key) is not anchor or anchor.users:
                return
            left = anchor.deadline - time.monotonic()
            if left > 0:  # used again since: wait for the rest
                self._arm(anchor, left)
                return
            del self._anchors[key]
        with self._closing:
            if not self._stopped:
                self._close(anchor)

    def release(self, path: str | os.PathLike) -> None:
        """Close ``path``'s warm instance now (before this process opens it otherwise)."""
        if not self._anchors or str(path) == ":memory:":
            return
        self._own()
        key = str(Path(os.fspath(path)).resolve())
        with self._lock:
            anchor = self._anchors.get(key)
            if anchor is None or anchor.users:  # in use: the other open fails as it always did
                return
            del self._anchors[key]
        self._close(anchor)

    def close_all(self) -> None:
        """Close every warm instance no reader uses, once a timer's close under way is done."""
        with self._closing:
            for key in list(self._anchors):
                self.release(key)

    def at_exit(self) -> None:
        """:meth:`close_all` at the interpreter's exit; a timer that fires later closes nothing."""
        with self._closing:
            self._stopped = True
        self.close_all()

    @staticmethod
    def _close(anchor: _Anchor) -> None:
        if anchor.timer is not None:
            anchor.timer.cancel()
        try:
            anchor.con.close()
        except Exception:  # noqa: BLE001 - a connection already gone is closed
            pass


def _linger() -> float:
    """``$BRAINLAB_READER_LINGER`` seconds when set to a number, else ``WARM.linger``."""
    try:
        return max(0.0, float(os.environ[LINGER_ENV]))
    except (KeyError, ValueError):
        return WARM.linger


WARM = Warm()
atexit.register(WARM.at_exit)


class HeldReader(os.PathLike):
    """A store path holding ONE read-only connection that every reader given it reuses.

    A weekly report runs ~60 queries; opening and sealing a connection for each costs more
    CPU than half of them (issue 28 item 8). Pass a ``HeldReader`` where a path goes
    (``query(held, ...)``, ``reader(held)``): the connection opens on first use and stays
    open until :meth:`close` (or the end of a ``with`` block), so hold it for one render
    only: while it is open an ingest cannot write the store.
    """

    def __init__(self, path: str | os.PathLike, setup=None, threads: int | None = None) -> None:
        self.path = Path(path)
        self._con = None
        self._memo: dict = {}
        self._setup = setup  # called with the connection once it is open (e.g. temp tables)
        self._threads = threads  # DuckDB worker threads (None: DuckDB's default, all cores)

    def memo(self, key, compute):
        """``compute()`` once while the connection is open: no writer can change the store."""
        if self._con is None or key not in self._memo:
            self.connection()
            self._memo[key] = compute()
        return self._memo[key]

    def __fspath__(self) -> str:
        return str(self.path)

    def __str__(self) -> str:
        return str(self.path)

    def __enter__(self) -> HeldReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def connection(self) -> duckdb.DuckDBPyConnection:
        """The held connection, opened (read-only, sealed) on first use."""
        if self._con is None:  # no progress-bar widget: a render's output is its sections
            con = connect(StoreConfig(path=self.path, read_only=True, progress_bar=False,
                                      threads=self._threads))
            if self._setup is not None:
                try:
                    self._setup(con)
                except BaseException:
                    con.close()
                    raise
            self._con = con
        return self._con

    def close(self) -> None:
        """Close the connection (a later use opens a new one)."""
        if self._con is not None:
            self._con.close()
            self._con = None
        self._memo.clear()


@contextmanager
def held(path: str | os.PathLike) -> Iterator[HeldReader]:
    """One read-only connection for a run of queries (a sweep, a replay's loads).

    A :class:`HeldReader` given is lent and left open; a path gets one closed on exit. Each
    :func:`query` on a path opens, seals and closes the file (~50 ms): a sweep of 18 threshold
    sets spent half its CPU doing that.
    """
    if isinstance(path, HeldReader):
        yield path
        return
    with HeldReader(path) as lent:
        yield lent


@contextmanager
def reader(path: str | os.PathLike = DEFAULT_DB, engine_only: bool = False,
           allowed: tuple[str, ...] = ()) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection, closed on exit (in the command its database stays warm: :class:`Warm`).

    ``engine_only``: for callers that only execute SQL and fetch tuples (see :func:`engine`);
    ``allowed``: directories it may still read or write (external access is off otherwise).
    A :class:`HeldReader` path lends its open connection instead (left open).
    """
    held = isinstance(path, HeldReader) and not allowed
    warm = not held and not allowed and WARM.enabled()
    if held:
        con = path.connection()
    elif warm:
        con, anchor = WARM.lend(Path(path), engine_only)
    else:
        con = connect(StoreConfig(path=Path(path), read_only=True, engine_only=engine_only,
                                  allowed=tuple(allowed)))
    try:
        yield con
    except engine().Error as exc:  # a store of another schema: say how to upgrade it
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        stale = (_stale_error(con, path, exc) or _range_error(path, first)
                 or _refused_read(path, exc) or _not_a_store(con, path))
        if stale is None:
            raise
        raise stale from exc
    finally:
        if not held:
            con.close()
        if warm and anchor is not None:
            WARM.done(anchor)


def query(path: str | os.PathLike, sql: str, params: list | dict | None = None):
    """Run one read-only query and return a pandas DataFrame (opens and closes the file)."""
    with reader(path) as con:
        try:
            return con.execute(sql, params or []).df()
        except engine().Error as exc:  # one clear line for the CLI, never a DuckDB traceback
            raise query_error(con, path, exc) from exc


def rows(path: str | os.PathLike, sql: str,
         params: list | dict | None = None) -> tuple[list[str], list[tuple]]:
    """Run one read-only query; return (column names, row tuples) without pandas."""
    with reader(path, engine_only=True) as con:
        try:
            cursor = con.execute(sql, params or [])
            return [d[0] for d in cursor.description], cursor.fetchall()
        except engine().Error as exc:
            raise query_error(con, path, exc) from exc


def query_error(con, path, exc: Exception) -> StoreError:
    """The one-line error for a query DuckDB refused (a store without schema said so)."""
    if not has_schema(con):
        return StoreError(
            f"database {path} has no brainlab tables (an ingest stopped before writing"
            " its schema?): run `brainlab ingest ...` on it again, or pass another --db")
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return (_stale_error(con, path, exc) or _range_error(path, first)
            or _refused_read(path, exc) or StoreError(f"query failed on {path}: {first}"))


def _range_error(path, first: str) -> StoreError | None:
    """The error for a stored value out of range (a store an older brainlab filled), or None."""
    if "Overflow" not in first and "out of range" not in first.lower():
        return None
    return StoreError(f"query failed on {path} ({first}): the store holds a value out of range"
                      " that an older brainlab stored; run an ingest on it (e.g. `brainlab"
                      f" ingest otel --db {path}`): it moves such values to ingest_errors"
                      " (brainlab errors lists them)")


def _not_a_store(con, path) -> StoreError | None:
    """The error for a failed query on a DuckDB file that is no brainlab store, else None."""
    try:
        con.execute("SELECT 1 FROM brainlab_meta LIMIT 0")
        return None
    except engine().Error:
        return StoreError(f"database {path} is not a brainlab store (no brainlab_meta table):"
                          " pass the --db of a store, or make one with `brainlab ingest ...`"
                          " or `brainlab demo`")


def _refused_read(path, exc: Exception) -> StoreError | None:
    """The refusal of a store whose view reads a file its seal does not allow (issue 47).

    A reader may read its attached lake alone; a store edited to read another file (a view
    over ``/etc/passwd``) is stopped by DuckDB's seal and named here, not a brainlab bug.
    """
    if not isinstance(exc, engine().PermissionException):
        return None
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return StoreError(f"database {path} is refused: one of its views reads a file outside the"
                      f" folders it may read ({first}); a store reads no local file: rebuild"
                      " an attached store with `brainlab attach`, or ingest into a new store")


def _stale_error(con, path, exc: Exception) -> StoreError | None:
    """The error for a failed query on a store of another schema (issue 24), else None."""
    from brainlab.store.catalog import newer_store, stale_schema

    if not stale_schema(con):
        return None
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    try:
        meta = dict(con.execute("SELECT key, value FROM brainlab_meta WHERE key IN"
                                " ('schema_version', 'release')").fetchall())
    except engine().Error:
        meta = {}
    newer = newer_store(meta, str(path), writing=False)
    if newer:  # upgrading brainlab, not the store, is the way out
        return StoreError(f"query failed on {path} ({first}): {newer}")
    return StoreError(f"query failed on {path} ({first}): the store was written by another"
                      " brainlab version; run an ingest on it (e.g. `brainlab ingest claude"
                      f" --db {path}`) to upgrade it in place, keeping its rows")
