"""``brainlab hook ingest``: the Stop, SubagentStop, SessionEnd and PreCompact hooks.

The hook reads Claude Code's JSON on stdin (``transcript_path``, and
``agent_transcript_path`` for SubagentStop), appends the paths to the spool
(:mod:`brainlab.live.spool`) and starts a detached worker, then exits 0: the session never
waits for DuckDB. The worker (``--foreground`` runs it in the hook's own process, trying the
store once) opens the store without blocking on its lock; the detached one tries again for
10 s (the previous hook's worker finishing). When another process still holds it, the paths
stay in the spool for the next ingest of any kind; otherwise it ingests every spooled transcript
incrementally (only their new tails), loads the limit snapshots, and refreshes the digest
the status line reads. Every problem goes to the live log, never to Claude Code.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from brainlab.live import cache


def transcript_paths(data: dict | None) -> list[str]:
    """The transcript files a hook object names (absolute ``*.jsonl`` strings)."""
    if not isinstance(data, dict):
        return []
    paths = []
    for key in ("transcript_path", "agent_transcript_path"):
        value = data.get(key)
        if isinstance(value, str) and value.endswith(".jsonl") and os.path.isabs(value) \
                and value not in paths:
            paths.append(value)
    return paths


def store_path(explicit: str | None = None) -> Path:
    """``--db``, else the settings' (``$BRAINLAB_DB``, else ``[paths] db``), else the default.

    Claude Code runs the hook in the project's folder: its ``brainlab.toml`` is found there.
    """
    from brainlab.common.paths import DEFAULT_DB, config_requested

    configured = None
    if not explicit and config_requested():
        from brainlab.settings import current

        configured = current().db
    return Path(explicit or configured or DEFAULT_DB).expanduser().resolve()


def configured_prices() -> Path | None:
    """The settings' price file: ``$BRAINLAB_PRICES``, else ``[paths] prices`` (None: none)."""
    from brainlab.common.paths import config_requested

    if not config_requested():
        return None
    from brainlab.settings import current

    return current().prices


def main(stream, foreground: bool = False, db: str | None = None) -> int:
    """Spool the hook's paths and start (or run) the worker; 0 whatever happens."""
    from brainlab.live.statusline import parse, read_stdin

    try:
        raw = read_stdin(stream)
        data = parse(raw)
        paths = transcript_paths(data)
        if data is None:
            cache.log(f"hook ingest: input is not a JSON object ({len(raw)} bytes)")
        elif not paths:
            cache.log("hook ingest: no transcript_path in the hook input")
        if paths:
            from brainlab.live import spool

            spool.add(paths)
        if foreground:
            return work(store_path(db))
        if paths:
            spawn(store_path(db))
    except Exception as exc:  # noqa: BLE001 - a hook never fails the session
        cache.log(f"hook ingest: {type(exc).__name__}: {exc}")
    return 0


def spawn(db: Path) -> None:
    """Start the worker detached (its own session, no inherited pipes).

    It runs with ``site`` (it needs DuckDB) and this very ``brainlab`` package first on its
    path (the launcher may have started without ``site``).
    """
    from brainlab.common.paths import config_requested

    root = str(Path(__file__).resolve().parent.parent.parent)
    env = dict(os.environ)
    if config_requested():  # the worker reads the thresholds this hook resolved (the digest)
        from brainlab.settings import child_env

        env.update(child_env())
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    subprocess.Popen([sys.executable, "-m", "brainlab.live.hook_ingest", str(db)],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
                     env=env)


LOCK_RETRIES = 20  # the detached worker: 20 tries 0.5 s apart for a store another run holds
LOCK_WAIT_S = 0.5


def work(db: Path, retries: int = 0) -> int:
    """Drain the spool into ``db`` unless another process holds it; refresh the digest.

    ``retries``: how many more times to try a held store (the detached worker waits for the
    previous hook's worker this way; nobody waits for it). Paths spooled while it ingests are
    taken before it lets the store go.
    """
    from brainlab.common.errors import BrainlabError, StoreLockedError

    try:
        from brainlab.live import digest, spool
        from brainlab.store.schema import open_writer

        for attempt in range(retries + 1):
            try:
                con = open_writer(db, engine_only=True)
                break
            except StoreLockedError:
                if attempt == retries:
                    cache.log(f"hook ingest: {db} is in use by another process; paths left"
                              " in the spool for the next ingest")
                    return 0
                time.sleep(LOCK_WAIT_S)
        try:
            prices = configured_prices()  # the settings' price file ($BRAINLAB_PRICES, [paths])
            counts = spool.drain(con, prices)
            for _ in range(3):  # what the next hooks spooled meanwhile
                if not os.path.exists(cache.file(cache.SPOOL_NAME)):
                    break
                more = spool.drain(con, prices)
                counts = {k: counts[k] + more[k] for k in counts}
            value, running = digest.collect(con)  # on the open store: no second open
        finally:
            con.close()
        cache.log(f"hook ingest: {counts['spooled']} transcript(s) ingested,"
                  f" {counts['snapshots']} limit snapshot(s) loaded into {db}")
        digest.write(digest.with_breath(value, db, running))
    except (BrainlabError, OSError, ValueError) as exc:
        cache.log(f"hook ingest: {type(exc).__name__}: {exc}")
    except Exception as exc:  # noqa: BLE001 - logged, and the spool keeps the paths
        cache.log(f"hook ingest: unexpected {type(exc).__name__}: {exc}")
    return 0


if __name__ == "__main__":  # the detached worker: python -m brainlab.live.hook_ingest DB
    sys.exit(work(Path(sys.argv[1]), LOCK_RETRIES) if len(sys.argv) == 2 else 0)
