"""Issue 29 (Integrity 4): Ctrl-C and a full disk end in one `Error:` line, never a traceback.

Through the real CLI in a subprocess: `ingest claude` of the public corpus interrupted with
SIGINT at several moments (a chained TransactionException used to print its traceback), and
a cold ingest into a store on a small tmpfs the test mounts when it runs as root (a
FatalException traceback before). After either, the store still opens for reading.
"""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[1].parent.parent / "shared" / "corpora" / "claude-code"
if not CORPUS.is_dir():
    CORPUS = Path("/work/shared/corpora/claude-code")


def env(tmp_path):
    return {"PYTHONPATH": ":".join(sys.path), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}


def readable(tmp_path, db):
    done = subprocess.run([sys.executable, "-m", "brainlab.cli", "sql",
                           "SELECT count(*) AS n FROM cc_files", "--db", str(db)],
                          cwd=tmp_path, env=env(tmp_path), capture_output=True, text=True,
                          timeout=300)
    return done.returncode == 0 or "no brainlab tables" in done.stderr, done.stderr


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the public corpus is not here")
@pytest.mark.parametrize("after", [0.0, 0.5, 1.5])
def test_ctrl_c_during_ingest_is_one_error_line(tmp_path, after):
    db = tmp_path / "b.duckdb"
    proc = subprocess.Popen([sys.executable, "-m", "brainlab.cli", "ingest", "claude",
                             str(CORPUS), "--db", str(db)], cwd=tmp_path, env=env(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not db.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)  # the ingest has opened its store: interrupt it from then on
    time.sleep(after)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert "Traceback" not in err, err
    if proc.returncode:  # it may have finished first on a fast machine
        lines = [line for line in err.splitlines() if line.strip()]  # the bar ends its line
        assert len(lines) == 1 and lines[0].startswith("Error: interrupted"), err
    assert readable(tmp_path, db)[0]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
@pytest.mark.skipif(not CORPUS.is_dir(), reason="the public corpus is not here")
def test_a_full_disk_during_a_cold_ingest_is_one_error_line(tmp_path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=700k", "tmpfs", str(mnt)],
                             capture_output=True, text=True)
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        db = mnt / "b.duckdb"
        done = subprocess.run([sys.executable, "-m", "brainlab.cli", "ingest", "claude",
                               str(CORPUS), "--db", str(db)], cwd=tmp_path, env=env(tmp_path),
                              capture_output=True, text=True, timeout=600)
        assert done.returncode != 0
        assert "Traceback" not in done.stderr, done.stderr
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("Error: "), done.stderr
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
        shutil.rmtree(mnt, ignore_errors=True)
