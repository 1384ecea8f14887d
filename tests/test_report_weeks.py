"""The report's weeks: ISO weeks unless --start-of-week sunday, in the user's zone (issue 24).

Two Claude Code sessions, one on Sunday 2026-11-29 and one on Monday 2026-11-30 (10:00 UTC):
ISO weeks put them in 2026-W48 and 2026-W49, Sunday weeks both in the week of 2026-11-29. A
session started Monday 01:00 UTC is still Sunday in Los Angeles. The report runs as a user
runs it: the CLI in a subprocess, papermill executing the notebook.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from claude_factory import assistant, usage, write

from brainlab.common.errors import ReportError
from brainlab.metrics.usage_time import WEEK_ENV
from brainlab.report import plan_weeks
from brainlab.report.index import read_summaries
from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude

SUN, MON, LATE = (f"55555555-5555-4555-8555-55555555555{i}" for i in range(3))


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("weeks") / "projects"
    for session, ts in ((SUN, "2026-11-29T10:00:00.000Z"), (MON, "2026-11-30T10:00:00.000Z")):
        write(root / "-home-u-repo" / f"{session}.jsonl", [
            assistant(session, ts, f"m-{session}", f"r-{session}", usage(inp=10, out=100),
                      model="claude-sonnet-4-5")])
    path = root.parent / "w.duckdb"
    con = open_writer(path)
    try:
        ingest_claude(con, root, workers=1)
    finally:
        con.close()
    return path


def test_plan_weeks_iso_or_sunday(db):
    assert plan_weeks(db, all_weeks=True, tz="UTC").weeks == ["2026-W48", "2026-W49"]
    sunday = plan_weeks(db, all_weeks=True, first_day="sunday", tz="UTC")
    assert sunday.weeks == ["2026-11-29"] and sunday.skipped == []
    # --week takes an ISO label or any day, in the convention asked for
    assert plan_weeks(db, week="2026-W49", first_day="sunday", tz="UTC").weeks == ["2026-11-29"]
    assert plan_weeks(db, week="2026-12-01", tz="UTC").weeks == ["2026-W49"]
    with pytest.raises(ReportError, match="after the data"):
        plan_weeks(db, week="2026-12-06", first_day="sunday", tz="UTC")


def test_a_session_belongs_to_the_week_of_its_local_day(tmp_path):
    root = tmp_path / "projects"
    write(root / "p" / f"{LATE}.jsonl", [
        assistant(LATE, "2026-11-30T01:00:00.000Z", "m-late", "r-late", usage(inp=1, out=1),
                  model="claude-sonnet-4-5")])  # Monday in UTC, Sunday 17:00 in Los Angeles
    con = open_writer(tmp_path / "l.duckdb")
    ingest_claude(con, root, workers=1)
    con.close()
    assert plan_weeks(tmp_path / "l.duckdb", tz="UTC").weeks == ["2026-W49"]
    assert plan_weeks(tmp_path / "l.duckdb", tz="America/Los_Angeles").weeks == ["2026-W48"]


def test_report_weekly_start_of_week_sunday(db, tmp_path):
    out = tmp_path / "reports"
    done = subprocess.run(
        [sys.executable, "-m", "brainlab.cli", "report", "weekly", "--all", "--db", str(db),
         "--out", str(out), "--timezone", "UTC", "--start-of-week", "sunday"],
        cwd=tmp_path, capture_output=True, text=True, env=dict(os.environ), timeout=900)
    assert done.returncode == 0, done.stderr
    page = (out / "2026-11-29" / "weekly_health.html").read_text(encoding="utf-8")
    assert "2026-11-29 to 2026-12-05" in page  # the week's dates, Sunday to Saturday
    summary = json.loads((out / "2026-11-29" / "summary.json").read_text(encoding="utf-8"))
    assert summary["cc_sessions"] == 2  # both sessions in the one Sunday week
    assert [s["week"] for s in read_summaries(out)] == ["2026-11-29"]


def test_report_weekly_refuses_another_first_day(db, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "brainlab.cli", "report", "weekly", "--db", str(db),
         "--out", str(tmp_path / "r"), "--start-of-week", "friday"],
        cwd=tmp_path, capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "friday" in done.stderr


def test_lab_passes_the_first_day_from_brainlab_toml_or_the_option(db, tmp_path):
    (tmp_path / "brainlab.toml").write_text('start_of_week = "sunday"\n', encoding="utf-8")

    def lab(*extra: str) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-m", "brainlab.cli", "lab", "--print-command", "--db", str(db),
             *extra], cwd=tmp_path, capture_output=True, text=True, env=dict(os.environ),
            timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()

    assert f"{WEEK_ENV}=sunday" in lab()  # brainlab.toml's
    assert f"{WEEK_ENV}=monday" in lab("--start-of-week", "monday")  # the option wins
