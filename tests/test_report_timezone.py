"""The report's days are the user's (issue 24 item 4): `brainlab report weekly --timezone`.

A call at 23:30 UTC is on the next day in Asia/Kathmandu (UTC+05:45): the report's daily
usage figures (metrics.report.transcript_usage) and the executed notebook's daily chart put it
there, and in UTC on the day before. The report runs as a user runs it: the CLI in a
subprocess, the notebook executed by papermill (one run).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from claude_factory import assistant, usage, write

from brainlab.metrics.report import Week, transcript_usage
from brainlab.metrics.usage_time import TZ_ENV, kernel_timezone
from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude

S1 = "44444444-4444-4444-8444-444444444444"
WEEK = "2026-W14"  # Monday 2026-03-30 to Sunday 2026-04-05


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tz") / "projects"
    write(root / "-home-u-repo" / f"{S1}.jsonl", [
        assistant(S1, "2026-04-01T10:00:00.000Z", "m1", "r1", usage(inp=10, out=100),
                  model="claude-sonnet-4-5"),
        assistant(S1, "2026-04-01T23:30:00.000Z", "m2", "r2", usage(inp=10, out=200),
                  model="claude-sonnet-4-5")])
    path = root.parent / "b.duckdb"
    con = open_writer(path)
    try:
        ingest_claude(con, root, workers=1)
    finally:
        con.close()
    return path


def _calls_per_day(frame) -> dict[date, int]:
    return {getattr(d, "date", lambda d=d: d)(): int(n)
            for d, n in frame.groupby("day")["requests"].sum().items()}


def test_the_report_days_are_days_of_the_zone(db):
    week = Week.parse(WEEK)
    utc = transcript_usage(db, week, "UTC")["by_day"]
    assert _calls_per_day(utc) == {date(2026, 4, 1): 2}
    local = transcript_usage(db, week, "Asia/Kathmandu")
    assert _calls_per_day(local["by_day"]) == {date(2026, 4, 1): 1, date(2026, 4, 2): 1}
    assert int(local["by_model"]["requests"].sum()) == 2


def test_a_call_late_on_sunday_moves_to_the_next_week(tmp_path):
    root = tmp_path / "projects"
    write(root / "p" / f"{S1}.jsonl", [
        assistant(S1, "2026-04-05T20:00:00.000Z", "m9", "r9", usage(inp=1, out=1),
                  model="claude-sonnet-4-5")])  # Sunday in UTC, Monday 01:45 in Kathmandu
    con = open_writer(tmp_path / "b.duckdb")
    ingest_claude(con, root, workers=1)
    con.close()
    week = Week.parse(WEEK)
    assert len(transcript_usage(tmp_path / "b.duckdb", week, "UTC")["by_day"]) == 1
    assert transcript_usage(tmp_path / "b.duckdb", week, "Asia/Kathmandu")["by_day"].empty
    assert len(transcript_usage(tmp_path / "b.duckdb", week.shifted(1),
                                "Asia/Kathmandu")["by_day"]) == 1


def test_kernel_zone_reads_the_variable(monkeypatch):
    monkeypatch.setenv(TZ_ENV, "Asia/Kathmandu")
    assert kernel_timezone("") == "Asia/Kathmandu"
    assert kernel_timezone("Europe/Paris") == "Europe/Paris"  # the notebook's parameter wins


def test_report_weekly_timezone_in_the_executed_notebook(db, tmp_path):
    out = tmp_path / "reports"
    done = subprocess.run(
        [sys.executable, "-m", "brainlab.cli", "report", "weekly", "--week", WEEK, "--db",
         str(db), "--out", str(out), "--timezone", "Asia/Kathmandu"],
        cwd=tmp_path, capture_output=True, text=True, env=dict(os.environ), timeout=900)
    assert done.returncode == 0, done.stderr
    executed = json.loads((out / WEEK / "weekly_health.ipynb").read_text(encoding="utf-8"))
    assert executed["metadata"]["papermill"]["parameters"]["timezone"] == "Asia/Kathmandu"
    text = json.dumps(executed)
    assert "days of Asia/Kathmandu" in text
    # the daily chart's bars (their labels in the SVG): one call on each local day
    assert "day (Asia/Kathmandu): 2026-04-01;" in text
    assert "day (Asia/Kathmandu): 2026-04-02;" in text


def test_report_weekly_refuses_an_unknown_zone(db, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "brainlab.cli", "report", "weekly", "--week", WEEK, "--db",
         str(db), "--out", str(tmp_path / "r"), "--timezone", "Mars/Olympus"],
        cwd=tmp_path, capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert done.returncode != 0
    assert done.stderr.strip().startswith("Error:") and "Traceback" not in done.stderr
    assert "Mars/Olympus" in done.stderr


def test_lab_sets_the_zone_for_its_notebooks(db, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "brainlab.cli", "lab", "--print-command", "--db", str(db),
         "--timezone", "Asia/Kathmandu"],
        cwd=tmp_path, capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{TZ_ENV}=Asia/Kathmandu" in done.stdout.splitlines()
