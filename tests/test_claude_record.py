"""The record (issue 24, item 1-2; issue 29, integrity 3): nothing forgotten, every root, content.

Claude Code deletes transcripts after ``cleanupPeriodDays``; the store keeps their rows until
``ingest claude --prune`` (one transaction: a kill -9 leaves it before or after). Every
Claude root is read by default, a call under two roots counting once. A file rewritten
without a change to its size or first 4 KB is read again. The ingests run the CLI in a
subprocess.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import duckdb
import pytest
from claude_factory import assistant, usage, write
from click.testing import CliRunner
from conftest import CORPUS

from brainlab.cli import main
from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude, ingest_claude_db

GONE = "-Users-gtrrz-victor-wks-cli"  # the project folder the issue deletes
VIEWS = ("usage_daily", "usage_weekly", "usage_sessions", "usage_models", "cc_sessions",
         "transcript_agent_loads")
FILED = ("cc_sessions", "transcript_agent_loads")  # their source_file: any of the session's


def shell(*args, env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "brainlab.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=600, cwd=cwd,
                          env={**os.environ, "COLUMNS": "80", **(env or {})})


def _same(value):
    """Sums of floats in another order differ in the last bits: compared to 1e-9."""
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, (list, tuple)):
        return type(value)(_same(v) for v in value)
    if isinstance(value, dict):
        return {k: _same(v) for k, v in value.items()}
    return value


def snapshot(db):
    """Every usage view, as SQL and as the `usage` command gives it (the roll-up).

    The command runs in this process (click's runner): the store, not the CLI, is what this
    file checks, and 25 interpreters started for it cost ~5 CPU-s (issue 28 item 1)."""
    with duckdb.connect(str(db), read_only=True) as con:
        found = {v: sorted(_same(con.execute(  # any_value(source_file): any of them
            f"SELECT * {'EXCLUDE (source_file)' if v in FILED else ''} FROM {v}").fetchall()),
            key=repr) for v in VIEWS}
    for by in ("daily", "weekly", "monthly", "sessions", "models"):
        result = CliRunner().invoke(main, ["usage", by, "--db", str(db), "--json"])
        assert result.exit_code == 0, result.output
        found[by] = _same(json.loads(result.stdout))
    return found


def january_input(db):
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT sum(input_tokens) FROM usage_daily WHERE day >="
                           " '2026-01-01' AND day < '2026-02-01'").fetchone()[0]


@pytest.fixture(scope="module")
def corpus_copy(tmp_path_factory):
    root = tmp_path_factory.mktemp("record")
    shutil.copytree(CORPUS / "projects", root / "projects")
    return root


@pytest.fixture(scope="module")
def first_ingest(corpus_copy, tmp_path_factory):
    """``ingest claude`` of the whole corpus copy into a new store (the CLI), once a module:
    both tests start from it and ran it each (issue 40). Read only: a test copies the store."""
    folder = tmp_path_factory.mktemp("first")
    db = folder / "b.duckdb"
    done = shell("ingest", "claude", corpus_copy / "projects", "--db", db, cwd=folder)
    return done, db


def test_deleted_folder_keeps_every_view_until_pruned(corpus_copy, first_ingest, tmp_path):
    projects, db = corpus_copy / "projects", tmp_path / "b.duckdb"
    first, made = first_ingest
    assert first.returncode == 0, first.stderr
    shutil.copy(made, db)
    before = snapshot(db)
    assert january_input(db) == 138_528
    saved = tmp_path / "saved"
    shutil.move(projects / GONE, saved)  # Claude Code's clean-up deletes the folder
    try:
        gone = shell("ingest", "claude", projects, "--db", db, cwd=tmp_path)
        assert gone.returncode == 0, gone.stderr
        assert "1 file(s) gone from disk, their rows kept (1 new this run" in gone.stdout
        assert snapshot(db) == before  # before the fix: 1 removed, January 137,736
        with duckdb.connect(str(db), read_only=True) as con:
            assert con.execute("SELECT count(*) FROM cc_files WHERE gone_at IS NOT NULL"
                               ).fetchone() == (1,)

        shutil.copytree(saved, projects / GONE)  # restored from a backup: not counted twice
        back = shell("ingest", "claude", projects, "--db", db, cwd=tmp_path)
        assert "1 gone file(s) found again" in back.stdout and "gone from disk" not in back.stdout
        assert snapshot(db) == before
        shutil.rmtree(projects / GONE)

        shell("ingest", "claude", projects, "--db", db, cwd=tmp_path)
        pruned = shell("ingest", "claude", projects, "--db", db, "--prune", cwd=tmp_path)
        assert pruned.returncode == 0, pruned.stderr
        assert "pruned: the rows of 1 gone file(s) removed (" in pruned.stdout
        assert january_input(db) == 137_736
        fresh = tmp_path / "fresh.duckdb"  # the store compared with, its output not read:
        ingest_claude_db(fresh, projects)  # the command's library call, in this process
        assert snapshot(db) == snapshot(fresh)  # pruned: as if the folder had never been
    finally:
        if not (projects / GONE).exists():
            shutil.move(saved, projects / GONE)


GONE_ROWS = ("SELECT (SELECT count(*) FROM cc_request_lines WHERE source_file IN (SELECT"
             " source_file FROM cc_files WHERE gone_at IS NOT NULL)), (SELECT count(*)"
             " FROM cc_files WHERE gone_at IS NOT NULL), (SELECT count(*) FROM cc_spans)")


def test_kill_during_prune_leaves_the_store_before_or_after(corpus_copy, first_ingest,
                                                            tmp_path):
    """A prune is one transaction: killed (SIGKILL) at any moment, the store holds every
    gone file's rows or none of them."""
    projects, db = corpus_copy / "projects", tmp_path / "b.duckdb"
    shutil.copy(first_ingest[1], db)
    moved = []
    for name in (GONE, "-home-moxa-sdc1-home-moxa-mds4xgl3-buildroot-dl"):
        shutil.move(projects / name, tmp_path / name)
        moved.append(name)
    try:
        shell("ingest", "claude", projects, "--db", db, cwd=tmp_path)
        with duckdb.connect(str(db)) as con:
            before = con.execute(GONE_ROWS).fetchone()
        assert before[0] > 0 and before[1] >= 2
        after_db = tmp_path / "after.duckdb"
        shutil.copy(db, after_db)
        start = time.monotonic()
        shell("ingest", "claude", projects, "--db", after_db, "--prune", cwd=tmp_path)
        took = time.monotonic() - start
        with duckdb.connect(str(after_db)) as con:
            after = con.execute(GONE_ROWS).fetchone()
        assert after[:2] == (0, 0) and after[2] < before[2]
        outcomes = set()
        for step in range(1, 9):  # kills spread over the run, the last ones in the prune
            copy = tmp_path / f"k{step}.duckdb"
            shutil.copy(db, copy)
            proc = subprocess.Popen(
                [sys.executable, "-m", "brainlab.cli", "ingest", "claude", str(projects),
                 "--db", str(copy), "--prune"], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, cwd=tmp_path)
            time.sleep(took * (0.45 + step * 0.07))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            with duckdb.connect(str(copy)) as con:
                state = con.execute(GONE_ROWS).fetchone()
            assert state in (before, after), (step, state)
            outcomes.add(state == after)
    finally:
        for name in moved:
            shutil.move(tmp_path / name, projects / name)


def call(session, minute, msg, out):
    return assistant(session, f"2026-04-01T10:{minute:02d}:00.000Z", msg, "r" + msg,
                     usage(1, out, 0, 100))


def test_every_claude_root_by_default_a_call_under_two_counts_once(tmp_path):
    """As ccusage: ~/.config/claude/projects and ~/.claude/projects, or each folder of
    CLAUDE_CONFIG_DIR (comma-separated); the same file under two roots counts once."""
    home = tmp_path / "home"
    session = "a7e0c0de-1111-4222-8333-944445555666"
    lines = [call(session, 0, "m1", 10), call(session, 1, "m2", 20)]
    write(home / ".claude" / "projects" / "p" / f"{session}.jsonl", lines)
    write(home / ".config" / "claude" / "projects" / "p" / f"{session}.jsonl", lines)
    write(home / ".config" / "claude" / "projects" / "q" / "other.jsonl",
          [call("other", 2, "m3", 30)])
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR",
                                                            "XDG_CONFIG_HOME")}
    env["HOME"] = str(home)
    db = tmp_path / "b.duckdb"
    result = subprocess.run([sys.executable, "-m", "brainlab.cli", "ingest", "claude",
                             "--db", str(db)], capture_output=True, text=True, env=env,
                            cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("claude 3 read")  # before: 1 read (~/.claude only)
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT requests, output_tokens FROM usage_daily").fetchall() == [
            (3, 60)]

    config = tmp_path / "cfg"  # a config folder, and a projects folder named directly
    write(config / "one" / "projects" / "p" / f"{session}.jsonl", lines)
    write(config / "two" / "projects" / "p" / "late.jsonl", [call(session, 5, "m4", 40)])
    env["CLAUDE_CONFIG_DIR"] = f"{config / 'one'}, {config / 'two' / 'projects'}"
    db2 = tmp_path / "c.duckdb"
    result = subprocess.run([sys.executable, "-m", "brainlab.cli", "ingest", "claude",
                             "--db", str(db2)], capture_output=True, text=True, env=env,
                            cwd=tmp_path, timeout=300)
    assert result.stdout.startswith("claude 2 read"), result.stdout + result.stderr
    with duckdb.connect(str(db2), read_only=True) as con:
        assert con.execute("SELECT requests FROM usage_daily").fetchall() == [(3,)]

    env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "nowhere")
    result = subprocess.run([sys.executable, "-m", "brainlab.cli", "ingest", "claude",
                             "--db", str(db2)], capture_output=True, text=True, env=env,
                            cwd=tmp_path, timeout=300)
    assert result.returncode != 0 and result.stderr.startswith("Error: no transcripts at")
    assert "Traceback" not in result.stderr


def big_line(session, minute, msg, out, pad):
    line = call(session, minute, msg, out)
    line["message"]["content"] = [{"type": "text", "text": pad}]
    return line


def test_truncated_and_regrown_file_is_read_again(tmp_path):
    """Issue 29, integrity 3: cut back and written past its old size, its first 4 KB the
    same: read again from the start (before: read from the old offset, 3 rows of 4)."""
    session = "b1e0c0de-1111-4222-8333-944445555666"
    path = tmp_path / "projects" / "p" / f"{session}.jsonl"
    head = big_line(session, 0, "m1", 1, "x" * 5000)  # the first 4 KB: this line alone
    write(path, [head, call(session, 1, "m2", 2), call(session, 2, "m3", 3)])
    con = open_writer(tmp_path / "b.duckdb")
    ingest_claude(con, tmp_path / "projects", workers=1)
    size = path.stat().st_size
    write(path, [head, big_line(session, 3, "m4", 4, "y" * 400),
                 call(session, 4, "m5", 5), call(session, 5, "m6", 6)])
    assert path.stat().st_size > size
    summary = ingest_claude(con, tmp_path / "projects", workers=1)
    fresh = open_writer(tmp_path / "fresh.duckdb")
    ingest_claude(fresh, tmp_path / "projects", workers=1)
    query = "SELECT message_id, output_tokens FROM cc_requests ORDER BY 1"
    assert con.execute(query).fetchall() == fresh.execute(query).fetchall()
    assert len(fresh.execute(query).fetchall()) == 4 and summary.reset == 1


def test_same_size_rewrite_is_read_again(tmp_path):
    """Issue 29, integrity 3: rewritten in place with the same size, its first and last 4 KB
    the same (a token count changed in the middle): read again, not reported unchanged."""
    session = "c1e0c0de-1111-4222-8333-944445555666"
    path = tmp_path / "projects" / "p" / f"{session}.jsonl"
    lines = [big_line(session, 0, "m1", 1, "x" * 5000), call(session, 1, "m2", 11),
             big_line(session, 2, "m3", 3, "z" * 5000)]
    write(path, lines)
    con = open_writer(tmp_path / "b.duckdb")
    ingest_claude(con, tmp_path / "projects", workers=1)
    stat = path.stat()
    lines[1] = call(session, 1, "m2", 99)
    write(path, lines)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert path.stat().st_size == stat.st_size
    summary = ingest_claude(con, tmp_path / "projects", workers=1)
    assert (summary.reset, summary.unchanged) == (1, 0)  # before: 0 read, 1 unchanged
    assert con.execute("SELECT output_tokens FROM cc_requests WHERE message_id = 'm2'"
                       ).fetchall() == [(99,)]
    assert ingest_claude(con, tmp_path / "projects", workers=1).unchanged == 1
