"""``brainlab hook ingest``: the Stop, SubagentStop, SessionEnd and PreCompact hooks.

The hook reads Claude Code's JSON on stdin (``transcript_path``, and
``agent_transcript_path`` for SubagentStop), appends the paths to the spool
(:mod:`brainlab.live.spool`) and returns: the session never waits for DuckDB, nor for
another hook (issue 46). One drain worker per store does the ingesting: the hook takes the
store's worker lock (a ``flock`` on a file of the live folder, without blocking) and, when
it gets it, starts the worker detached, handing it the lock; when another worker holds it,
that worker takes the new paths before it exits, and the hook just returns.

The worker drains in short batches: it opens the store, ingests a few spooled transcripts
(only their new tails), closes it, and leaves it free for a moment; before the next batch
it lets whoever says they wait for the store in first
(:func:`brainlab.store.connection.announce_waiting`: a reader, a manual ``ingest claude``),
so they wait at most for one batch. A store somebody else holds it waits for with backoff.
When the spool is empty it loads the limit snapshots, refreshes the digest the status line
reads, lets the worker lock go and looks at the spool once more (a hook that spooled a path
while it was finishing saw the lock held and started nobody). ``--foreground`` runs the
same drain in the hook's own process, trying the store once. A killed worker leaves its
taken spool files for the next drain. Every problem goes to the live log, never to Claude
Code.
"""

from __future__ import annotations

import binascii
import os
import sys
import time
from pathlib import Path

from brainlab.live import cache

BATCH = 4  # spooled transcripts ingested per opening of the store
PAUSE_S = 0.25  # the store left free between two batches: a waiting reader polls faster
# (brainlab.store.connection.LOCK_POLL) and gets in
STORE_WAIT_S = 60.0  # how long the detached worker waits for a store others hold (backoff)
STORE_POLL_S = (0.05, 1.0)  # its first and longest pause between two tries
HOLD_WAIT_S = 120.0  # --hold: the longest a hold point waits for its go file (tests)
WORKER_PREFIX = "worker-"


def transcript_paths(data: dict | None) -> list[str]:
    """The transcript files a hook object names (absolute ``*.jsonl`` strings).

    Only files ``ingest claude`` would read (:func:`brainlab.transcripts.roots.claude_transcript`:
    regular ``*.jsonl`` files inside Claude's transcript folders, a link followed only inside
    them): any other path is refused with a log line giving the reason and the path as the
    store would keep it (redacted: :func:`brainlab.sources.redact.stored_path`), never where
    a link leads.
    """
    if not isinstance(data, dict):
        return []
    from brainlab.transcripts.roots import claude_transcript

    paths = []
    for key in ("transcript_path", "agent_transcript_path"):
        value = data.get(key)
        if isinstance(value, str) and value.endswith(".jsonl") and os.path.isabs(value) \
                and value not in paths:
            resolved, reason = claude_transcript(value)
            if resolved is None:
                from brainlab.common.plaintext import visible
                from brainlab.sources.redact import stored_path

                cache.log(f"hook ingest: {key} refused ({reason}): {visible(stored_path(value))}")
                continue
            paths.append(value)
    return paths


def store_path(explicit: str | None = None) -> Path:
    """``--db``, else the settings' (``$BRAINLAB_DB``, else ``[paths] db``), else the default.

    Claude Code runs the hook in the project's folder: its ``brainlab.toml`` is found there.
    """
    if explicit:  # the installed hooks name it: no settings to look at
        return Path(explicit).expanduser().resolve()
    from brainlab.common.paths import DEFAULT_DB, config_requested

    configured = None
    if config_requested():
        from brainlab.settings import current

        configured = current().db
    return Path(configured or DEFAULT_DB).expanduser().resolve()


def configured_prices() -> Path | None:
    """The settings' price file: ``$BRAINLAB_PRICES``, else ``[paths] prices`` (None: none)."""
    from brainlab.common.paths import config_requested

    if not config_requested():
        return None
    from brainlab.settings import current

    return current().prices


def main(stream, foreground: bool = False, db: str | None = None) -> int:
    """Spool the hook's paths and start (or run) the store's worker; 0 whatever happens."""
    from brainlab.live.statusline import parse, read_stdin

    try:
        raw = read_stdin(stream)
        data = parse(raw)
        paths = transcript_paths(data)
        if data is None:
            cache.log(f"hook ingest: input is not a JSON object ({len(raw)} bytes)")
        elif not paths:
            cache.log("hook ingest: no usable transcript_path in the hook input")
        if paths:
            from brainlab.live import spool

            spool.add(paths)  # first: whatever happens next, the path waits there
        if foreground:
            return work(store_path(db), store_wait=0.0)
        if paths:
            start_worker(store_path(db))
    except Exception as exc:  # noqa: BLE001 - a hook never fails the session
        cache.log(f"hook ingest: {type(exc).__name__}: {exc}")
    return 0


def lock_file(db: Path) -> str:
    """The worker lock of the store ``db``: a file of the live folder named after the store."""
    raw = str(db).encode("utf-8", "surrogateescape")
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in db.name)[:48]
    return cache.file(f"{WORKER_PREFIX}{safe}-{binascii.crc32(raw):08x}.lock")


def try_lock(db: Path) -> int | None:
    """The store's worker lock taken without waiting (its file descriptor), or None: held."""
    import fcntl

    fd = os.open(lock_file(db), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def start_worker(db: Path) -> bool:
    """Start the store's worker unless one runs (its lock held); True when this hook did.

    The lock is taken here and handed to the worker (an inherited descriptor), so two hooks
    never start two workers, and no worker starts only to find another one.
    """
    fd = try_lock(db)
    if fd is None:  # a worker drains: it takes this hook's paths before it exits
        return False
    try:
        spawn(db, fd)
    finally:
        os.close(fd)  # the worker holds its own copy
    return True


def spawn(db: Path, lock_fd: int | None = None) -> None:
    """Start the worker detached: its own session, stdio on ``/dev/null``, ``lock_fd`` kept.

    It runs with ``site`` (it needs DuckDB) and this very ``brainlab`` package first on its
    path (the launcher may have started without ``site``). ``os.posix_spawn`` (a vfork) and
    not ``subprocess``: importing that module alone took a quarter of a hook on a loaded
    machine (issue 46). Every other descriptor of this process is close-on-exec.
    """
    from brainlab.common.paths import config_requested

    root = str(Path(__file__).resolve().parent.parent.parent)
    env = dict(os.environ)
    if config_requested():  # the worker reads the thresholds this hook resolved (the digest)
        from brainlab.settings import child_env

        env.update(child_env())
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    args = [sys.executable, "-m", "brainlab.live.hook_ingest", str(db)]
    if lock_fd is not None:
        args += ["--lock-fd", str(lock_fd)]
        os.set_inheritable(lock_fd, True)
    try:
        actions = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
        os.posix_spawn(sys.executable, args, env, file_actions=actions, setsid=True)
    except (AttributeError, NotImplementedError):  # a platform without it: the slow way
        import subprocess

        subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True, env=env,
                         pass_fds=() if lock_fd is None else (lock_fd,))
    finally:
        if lock_fd is not None:
            os.set_inheritable(lock_fd, False)


def work(db: Path, store_wait: float = STORE_WAIT_S, lock_fd: int | None = None,
         batch: int = BATCH, hold: str | None = None) -> int:
    """Be the store's worker: drain the spool into ``db`` while it holds the worker lock.

    ``lock_fd``: the lock the starting hook took (else taken here; held by another worker:
    return at once, that one drains). ``store_wait``: seconds to wait for a store another
    process holds (0: try once). ``batch``: transcripts per opening of the store. ``hold``:
    a folder of hold points for tests (:func:`hold_point`). Once the spool is empty the lock
    goes, and the spool is looked at once more: a hook that spooled a path meanwhile found
    the lock held and started nobody.
    """
    if lock_fd is None:
        lock_fd = try_lock(db)
        if lock_fd is None:
            cache.log(f"hook ingest: a worker is draining into {db}; it takes the spool")
            return 0
    rounds = 0
    while True:
        try:
            emptied = drain(db, store_wait, batch, hold)
            if emptied:  # a hook spooling now sees the lock held and starts nobody
                hold_point(hold, f"drained-{rounds}")
        finally:
            os.close(lock_fd)  # the lock goes with its last descriptor
        rounds += 1
        from brainlab.live import spool

        if not emptied or not spool.waiting():
            return 0
        lock_fd = try_lock(db)
        if lock_fd is None:  # a hook started the next worker: it takes them
            return 0


def drain(db: Path, store_wait: float, batch: int = BATCH, hold: str | None = None) -> bool:
    """Ingest the spool into ``db`` in batches, then the limits and the digest.

    True when it emptied the spool; False when the store stayed busy or the drain failed
    (logged; the spool keeps the paths for the next ingest of any kind).
    """
    from brainlab.common.errors import BrainlabError
    from brainlab.live import spool

    prices = configured_prices()  # the settings' price file ($BRAINLAB_PRICES, [paths])
    queue: list[str] = []
    taken: list[Path] = []
    counts = {"spooled": 0, "snapshots": 0, "batches": 0}
    value = running = None
    try:
        while True:
            con = open_store(db, store_wait, hold)
            if con is None:
                cache.log(f"hook ingest: {db} is in use by another process; paths left"
                          " in the spool for the next ingest")
                return False
            try:
                if taken and not any(p.exists() for p in taken):
                    queue = []  # an `ingest claude` drained them between two batches
                if not queue:
                    taken = spool.take(cache.SPOOL_NAME)
                    queue = spool.spooled_paths(spool.read_lines(taken))
                hold_point(hold, f"batch-{counts['batches']}")
                counts["spooled"] += spool.ingest_paths(con, queue[:batch], prices)
                queue = queue[batch:]
                counts["batches"] += 1
                last = False
                if not queue:  # the taken files are in the store: gone, then any new ones?
                    for path in taken:
                        path.unlink(missing_ok=True)
                    taken = []
                    last = not spool.waiting()
                if last:
                    counts["snapshots"] += spool.load_limits(con)
                    value, running = digest_values(con)
            finally:
                con.close()
            if last:
                break
            hold_point(hold, f"between-{counts['batches'] - 1}")
            time.sleep(PAUSE_S)  # the store free: a reader or an ingest waiting gets in
        cache.log(f"hook ingest: {counts['spooled']} transcript(s) ingested,"
                  f" {counts['snapshots']} limit snapshot(s) loaded into {db}"
                  f" ({counts['batches']} batch(es))")
        if value is not None:
            from brainlab.live import digest

            digest.write(digest.with_breath(value, db, running))
        return True
    except (BrainlabError, OSError, ValueError) as exc:
        cache.log(f"hook ingest: {type(exc).__name__}: {exc}")
    except Exception as exc:  # noqa: BLE001 - logged, and the spool keeps the paths
        cache.log(f"hook ingest: unexpected {type(exc).__name__}: {exc}")
    return False


def digest_values(con):
    """The digest's values on the open store (its last batch's connection), or (None, None)."""
    from brainlab.live import digest

    return digest.collect(con)


def open_store(db: Path, wait: float, hold: str | None = None):
    """The store opened for writing, waiting up to ``wait`` s with backoff; None: still held."""
    from brainlab.common.errors import StoreLockedError
    from brainlab.store.schema import open_writer

    deadline, pause = time.monotonic() + wait, STORE_POLL_S[0]
    while True:
        yield_to_waiting(db, max(0.0, deadline - time.monotonic()), hold)
        try:
            con = open_writer(db, engine_only=True, lock_wait=0.0)
        except StoreLockedError:
            if time.monotonic() >= deadline:
                return None
        else:
            try:  # one core at most: the session, its hooks and readers keep the other
                con.execute("SET threads = 1")
            except Exception:  # noqa: BLE001 - a setting, not the drain
                pass
            return con
        time.sleep(pause)
        pause = min(pause * 2, STORE_POLL_S[1])


def yield_to_waiting(db: Path, wait: float, hold: str | None = None) -> None:
    """Let whoever waits for the store go first (up to ``wait`` s, polling every 50 ms).

    Waits until nobody holds a shared lock on the store's
    :func:`~brainlab.store.connection.waiting_file`. A reader or an ingest holds that lock
    from its first refused try until it has the store (at most ``LOCK_WAIT`` s), so the
    worker never takes the store back from under it.
    """
    import fcntl

    from brainlab.store.connection import waiting_file

    try:
        file = waiting_file(db)
        file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return  # nobody waits (closing the descriptor lets it go)
            except OSError:
                if hold:  # tests: a mark, not a hold point (the waiter goes first)
                    Path(hold, "yielded.ready").touch()
                if time.monotonic() >= deadline:
                    return
                time.sleep(0.05)
    finally:
        os.close(fd)


def hold_point(folder: str | None, name: str) -> None:
    """Tests only (``--hold DIR``): write ``DIR/name.ready``, wait for ``DIR/name.go``.

    Lets a test act at a known point of the drain (the store held in a batch, or free
    between two) instead of sleeping and hoping; bounded by ``HOLD_WAIT_S``.
    """
    if not folder:
        return
    Path(folder, f"{name}.ready").touch()
    deadline = time.monotonic() + HOLD_WAIT_S
    while not Path(folder, f"{name}.go").exists() and time.monotonic() < deadline:
        time.sleep(0.01)


def worker_main(argv: list[str]) -> int:
    """``python -m brainlab.live.hook_ingest DB [--lock-fd N] [--batch N] [--hold DIR]``."""
    import argparse

    parser = argparse.ArgumentParser(prog="brainlab.live.hook_ingest", add_help=False)
    parser.add_argument("db")
    parser.add_argument("--lock-fd", type=int, default=None)
    parser.add_argument("--batch", type=int, default=BATCH)
    parser.add_argument("--hold", default=None)
    try:
        args = parser.parse_args(argv)
    except SystemExit:
        cache.log(f"hook ingest: worker arguments not understood: {argv!r}")
        return 0
    return work(Path(args.db), lock_fd=args.lock_fd, batch=max(1, args.batch), hold=args.hold)


if __name__ == "__main__":  # the detached worker
    sys.exit(worker_main(sys.argv[1:]))
