"""Killing ``ingest claude`` leaves no parse worker behind (issue 10 item 10), for real.

The ingest runs in a subprocess with its worker pool; the test waits until the workers exist,
kills the parent (SIGTERM, then SIGKILL in a second run) and checks that every worker is gone.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from claude_factory import assistant, usage, write

SCRIPT = """
import sys
from brainlab.store import open_writer
from brainlab.transcripts import ingest as claude_ingest, pool as claude_pool
claude_pool.PARALLEL_MIN_BYTES = 0  # a pool even for this small tree
con = open_writer(sys.argv[2])
claude_ingest.ingest_claude(con, sys.argv[1], workers=2)
"""


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def big_tree(root: Path) -> Path:
    filler = [{"type": "text", "text": "z" * 4000}]
    for f in range(400):
        write(root / "projects" / "p" / f"s{f}.jsonl", [
            assistant(f"s{f}", f"2026-05-01T08:{i % 60:02d}:00.000Z", f"m{f}-{i}", f"r{f}-{i}",
                      usage(1, 1), content=filler) for i in range(60)])
    return root


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (Linux)")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_killing_the_ingest_kills_its_workers(tmp_path, sig):
    root = big_tree(tmp_path / "cfg")
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(root), str(tmp_path / "b.duckdb")])
    workers: list[int] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        workers = children(proc.pid)
        if len(workers) >= 2:
            break
        time.sleep(0.02)
    assert proc.poll() is None and len(workers) >= 2, "the pool never started"
    os.kill(proc.pid, sig)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(w) for w in workers):
        time.sleep(0.05)
    left = [w for w in workers if alive(w)]
    for w in left:  # do not leave them running when the test fails
        os.kill(w, signal.SIGKILL)
    assert not left
