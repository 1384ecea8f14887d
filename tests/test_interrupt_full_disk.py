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
from conftest import cli_env
from tmpfs import NEEDS_ROOT, small_tmpfs

CORPUS = Path(__file__).resolve().parents[1].parent.parent / "shared" / "corpora" / "claude-code"
if not CORPUS.is_dir():
    CORPUS = Path("/work/shared/corpora/claude-code")


def env(tmp_path):
    return cli_env(tmp_path)


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


@NEEDS_ROOT
@pytest.mark.skipif(not CORPUS.is_dir(), reason="the public corpus is not here")
def test_a_full_disk_during_a_cold_ingest_is_one_error_line(tmp_path):
    with small_tmpfs(tmp_path / "small", "700k") as mnt:
        db = mnt / "b.duckdb"
        done = subprocess.run([sys.executable, "-m", "brainlab.cli", "ingest", "claude",
                               str(CORPUS), "--db", str(db)], cwd=tmp_path, env=env(tmp_path),
                              capture_output=True, text=True, timeout=600)
        assert done.returncode != 0
        assert "Traceback" not in done.stderr, done.stderr
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("Error: "), done.stderr


def _rollup(db):
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        key = con.execute("SELECT value FROM brainlab_meta WHERE key = 'cc_usage_rollup'"
                          ).fetchone()
        lines = con.execute("SELECT count(*) FROM cc_request_lines").fetchone()[0]
        totals = con.execute("SELECT sum(requests), sum(total_tokens), round(sum(cost_usd), 4)"
                             " FROM cc_usage_rollup").fetchone()
    return key, lines, totals


def _groups(db):
    """The totals the views give for the rows stored (what a current roll-up holds)."""
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT sum(requests), sum(total_tokens), round(sum(cost_usd), 4)"
                           " FROM cc_usage_groups").fetchone()


@NEEDS_ROOT
@pytest.mark.skipif(not CORPUS.is_dir(), reason="the public corpus is not here")
def test_a_full_disk_during_an_incremental_ingest_keeps_the_rollup_right(tmp_path):
    """Issue 29: an incremental ingest that meets a full disk ends in one `Error:` line; the
    roll-up's key in brainlab_meta is never left claiming a roll-up the rows do not match,
    and the next run (space freed) leaves the roll-up's totals and its key as a cold ingest
    does (totals: which group a line lands in can differ between two cold stores already).

    Issue 47: the disk holds 256 KiB more, room for the run's bookkeeping but not its rows:
    the key was removed in a commit of its own before the rows, which the disk then refused,
    and reads took the slower path until the next run. It now goes in the first transaction
    that writes rows, so it stays, true for the rows stored (fails before the change)."""
    src = tmp_path / "src" / "projects"
    folders = sorted(p for p in (CORPUS / "projects").iterdir() if p.is_dir())
    for folder in folders[: len(folders) // 2]:
        shutil.copytree(folder, src / folder.name)

    def ingest(db):
        return subprocess.run([sys.executable, "-m", "brainlab.cli", "ingest", "claude",
                               str(src), "--db", str(db)], cwd=tmp_path, env=env(tmp_path),
                              capture_output=True, text=True, timeout=600)

    with small_tmpfs(tmp_path / "small", "24m") as mnt:
        db = mnt / "b.duckdb"
        assert ingest(db).returncode == 0
        before = _rollup(db)
        for folder in folders[len(folders) // 2:]:  # new files for the incremental run
            shutil.copytree(folder, src / folder.name)
        filler = mnt / "filler"
        with open(filler, "wb") as out:  # the disk full to the last byte ...
            try:
                while True:
                    out.write(b"\0" * 65536)
                    out.flush()
            except OSError:
                pass
        os.truncate(filler, filler.stat().st_size - 256 * 1024)  # ... but 256 KiB (issue 47)
        done = ingest(db)
        assert done.returncode != 0, done.stdout
        assert "Traceback" not in done.stderr, done.stderr
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("Error: "), done.stderr
        filler.unlink()
        key, count, totals = after_failure = _rollup(db)
        assert key == (str(count),), after_failure[:2]  # kept, and never a stale claim
        assert totals == _groups(db)  # the roll-up the key vouches for is the rows'
        assert before[1] <= count
        assert ingest(db).returncode == 0  # space again: the next run completes
        cold = tmp_path / "cold.duckdb"
        assert ingest(cold).returncode == 0
        final, expected = _rollup(db), _rollup(cold)
        assert final[0] == (str(final[1]),) and final == expected
