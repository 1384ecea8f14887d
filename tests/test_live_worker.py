"""The hooks' drain worker (issue 46 item 1): one per store, in short batches, never waited for.

Driven deterministically: the worker runs as the detached one does (``python -m
brainlab.live.hook_ingest DB``) with ``--batch 1 --hold DIR``, and stops at named hold points
(``DIR/<point>.ready`` written, ``DIR/<point>.go`` awaited) while the test acts: at
``batch-N`` it holds the store, at ``between-N`` it has let it go, at ``drained-N`` it has
emptied the spool but still holds the worker lock; it marks ``yielded`` when it lets a
process that waits for the store go first. Hooks run as Claude Code runs them: the
console script, JSON on stdin.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from claude_factory import assistant, usage
from conftest import seeded_cache

from brainlab.live import hook_ingest
from brainlab.store.connection import StoreConfig, announce_waiting, connect

SCRIPT = Path(sys.executable).with_name("brainlab")
WAIT_S = 120  # the longest any step may take on a loaded machine (a bound, not a timing)


@pytest.fixture
def env(tmp_path, monkeypatch) -> dict:
    cache = seeded_cache(tmp_path / "cache")
    monkeypatch.setenv("BRAINLAB_CACHE_DIR", str(cache))  # spool.add here writes its spool
    # a worker run in this process checks its spooled paths against Claude's folders too
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    return dict(os.environ, BRAINLAB_CACHE_DIR=str(cache), HOME=str(tmp_path),
                CLAUDE_CONFIG_DIR=str(tmp_path / "claude"))


def transcript(tmp_path: Path, n: int, lines: int = 2) -> Path:
    sid = f"sess-worker-{n}"
    path = tmp_path / "claude" / "projects" / "-home-u-w" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(assistant(
        sid, f"2026-04-01T10:{i:02d}:00.000Z", f"m{n}-{i}", f"r{n}-{i}",
        usage(10, 5, 0, 100))) + "\n" for i in range(lines)))
    return path


def hook(env, db: Path, path: Path) -> subprocess.CompletedProcess:
    data = json.dumps({"session_id": path.stem, "transcript_path": str(path), "cwd": "/home/u",
                       "hook_event_name": "Stop", "stop_hook_active": False}).encode()
    return subprocess.run([str(SCRIPT), "hook", "ingest", "--db", str(db)], input=data,
                          env=env, capture_output=True, timeout=WAIT_S)


def worker(env, db: Path, *extra) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "brainlab.live.hook_ingest", str(db),
                             *map(str, extra)], env=env, stdin=subprocess.DEVNULL)


def reach(hold: Path, point: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not (hold / f"{point}.ready").exists():
        assert time.monotonic() < deadline, f"the worker never reached {point}"
        time.sleep(0.02)


def go(hold: Path, *points: str) -> None:
    for point in points:
        (hold / f"{point}.go").touch()


def workers(db: Path) -> list[int]:
    """Drain worker processes on ``db`` (as benchmarks/bench_live_load.py counts them)."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            args = Path("/proc", entry, "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"brainlab.live.hook_ingest" in args and str(db).encode() in args:
            found.append(int(entry))
    return found


def spool_files(env) -> list[Path]:
    return sorted((Path(env["BRAINLAB_CACHE_DIR"]) / "live").glob("spool.jsonl*"))


def sessions(db: Path) -> list[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [s for (s,) in con.execute(
            "SELECT DISTINCT session_id FROM cc_request_lines ORDER BY 1").fetchall()]
    finally:
        con.close()


def log_text(env) -> str:
    return (Path(env["BRAINLAB_CACHE_DIR"]) / "live" / "live.log").read_text()


def test_one_worker_batches_lets_readers_in_and_takes_what_hooks_spool_meanwhile(tmp_path,
                                                                                   env):
    from brainlab.live import spool

    db, hold = tmp_path / "store.duckdb", tmp_path / "hold"
    hold.mkdir()
    first, second, third, fourth = (transcript(tmp_path, n) for n in range(4))
    spool.add([str(first), str(second)])
    running = worker(env, db, "--batch", 1, "--hold", hold)
    try:
        reach(hold, "batch-0")  # the worker holds its lock and the store
        # a second worker (here, in this process) refuses at once: the old one tried the
        # store for 10 s; this one returns before it would open it
        assert hook_ingest.work(db, store_wait=WAIT_S) == 0
        assert "a worker is draining into" in log_text(env)
        assert [p.name.endswith(".taking") for p in spool_files(env)] == [True]
        # a hook returns while the store is held, and starts no second worker
        done = hook(env, db, third)
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
        assert workers(db) == [running.pid]
        go(hold, "batch-0")
        reach(hold, "between-0")  # one transcript in: the store is free until it goes on
        reader = connect(StoreConfig(path=db, read_only=True, lock_wait=0))
        try:
            assert reader.execute("SELECT count(DISTINCT session_id) FROM cc_request_lines"
                                  ).fetchone() == (1,)
        finally:
            reader.close()
        # a reader that waits for the store says so; the worker lets it in before its
        # next batch (held here: announced, then the store opened without waiting)
        waiting = announce_waiting(db)
        assert waiting is not None
        try:
            go(hold, "between-0")
            reach(hold, "yielded")
            connect(StoreConfig(path=db, read_only=True, lock_wait=0)).close()
        finally:
            os.close(waiting)
        go(hold, "batch-1", "between-1", "batch-2", "between-2", "batch-3")
        reach(hold, "drained-0")  # spool empty, lock still held: a hook now starts nobody
        assert not spool_files(env)
        done = hook(env, db, fourth)
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
        assert workers(db) == [running.pid]
        go(hold, "drained-0", "batch-0", "drained-1")  # the re-check after the lock went
        assert running.wait(timeout=WAIT_S) == 0
    finally:
        running.kill()
        running.wait()
    assert sessions(db) == [f"sess-worker-{n}" for n in range(4)]
    assert not spool_files(env)


def test_killed_worker_leaves_its_taken_files_to_the_next(tmp_path, env):
    from brainlab.live import spool

    db, hold = tmp_path / "store.duckdb", tmp_path / "hold"
    hold.mkdir()
    paths = [transcript(tmp_path, n) for n in range(2)]
    spool.add([str(p) for p in paths])
    running = worker(env, db, "--batch", 1, "--hold", hold)
    try:
        reach(hold, "batch-0")
        os.kill(running.pid, signal.SIGKILL)
        running.wait(timeout=WAIT_S)
    finally:
        running.kill()
        running.wait()
    assert [p.name.endswith(".taking") for p in spool_files(env)] == [True]
    assert hook_ingest.work(db) == 0  # the next worker (in this process)
    assert sessions(db) == ["sess-worker-0", "sess-worker-1"]
    assert not spool_files(env)


def test_a_burst_of_hooks_runs_one_worker_and_empties_the_spool(tmp_path, env):
    db = tmp_path / "store.duckdb"
    paths = [transcript(tmp_path, n) for n in range(6)]
    datas = [json.dumps({"session_id": p.stem, "transcript_path": str(p),
                         "hook_event_name": "SubagentStop" if n % 2 else "Stop"}).encode()
             for n, p in enumerate(paths)]
    burst = [subprocess.Popen([str(SCRIPT), "hook", "ingest", "--db", str(db)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env) for _ in paths]
    seen = 0
    for process, data in zip(burst, datas, strict=True):
        out, err = process.communicate(data, timeout=WAIT_S)
        assert (process.returncode, out, err) == (0, b"", b"")
        seen = max(seen, len(workers(db)))
    deadline = time.monotonic() + WAIT_S
    while True:  # until the worker let its lock go with nothing spooled
        fd = hook_ingest.try_lock(db)
        if fd is not None:
            os.close(fd)
            if not spool_files(env):
                break
        seen = max(seen, len(workers(db)))
        assert time.monotonic() < deadline, "the spool was never drained"
        time.sleep(0.05)
    assert seen <= 1
    assert sessions(db) == [f"sess-worker-{n}" for n in range(6)]
