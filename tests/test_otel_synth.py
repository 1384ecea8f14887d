"""The synthetic brain's telemetry (issue 26 §6) and the weekly report's telemetry section."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

from brainlab.otel.ingest import discover, ingest_otel
from brainlab.report import sections
from brainlab.store import open_writer
from brainlab.synth import SynthOptions, synthesize
from brainlab.synth.telemetry import MATE, write_telemetry
from brainlab.transcripts.ingest import ingest_claude


def test_synthetic_telemetry_joins_its_transcripts_and_feeds_the_report(tmp_path,
                                                                       charts_here):
    brain = tmp_path / "brain"
    manifest = synthesize(brain, SynthOptions(weeks=2, seed=3))
    assert any(p["effect"] == "telemetry" for p in manifest.planted)
    db = tmp_path / "s.duckdb"
    con = open_writer(db)
    try:
        ingest_claude(con, brain / "claude", workers=1)
        # the sessions after helloWorld's focus (synth/focus.py) are written after the telemetry
        # and have none (docs/synth.md): every other transcript call has its event
        unsent = next(p["transcript_sessions"] for p in manifest.planted
                      if p["effect"].startswith("focus:"))
        transcript = con.execute("SELECT count(*) FILTER (WHERE NOT list_contains(?, session_id)),"
                                 " count(*) FROM cc_requests", [unsent]).fetchone()
        summary = ingest_otel(con, discover([brain / "telemetry"]))
        assert summary.read == 4 and summary.errors == 0 and summary.warnings == 0
        by_source = dict(con.execute("SELECT source, count(*) FROM cc_requests GROUP BY 1"
                                     ).fetchall())
        events = con.execute("SELECT count(*) FROM otel_api_requests WHERE user_email <> ?",
                             [MATE]).fetchone()[0]
        mates = con.execute("SELECT count(*) FROM otel_api_requests WHERE user_email = ?",
                            [MATE]).fetchone()[0]
        disagree = con.execute("SELECT count(*) FROM otel_usage_check WHERE only_in IS NOT NULL"
                               " OR metric_input_tokens <> call_input_tokens").fetchone()[0]
        week = con.execute("SELECT strftime(max(ts), '%G-W%V') FROM cc_requests").fetchone()[0]
    finally:
        con.close()
    # every transcript call has its event; the teammate's calls are the only telemetry-only ones
    assert events == transcript[0]
    assert by_source == {"transcript": transcript[1], "otel": mates} and mates > 0
    assert disagree == 0
    ctx = sections.open_report(str(db), week)
    try:
        html = sections.telemetry(ctx)
    finally:
        sections.finish(ctx)
    assert "What telemetry adds" in html and MATE in html and "retries" in html


def test_the_same_seed_writes_the_same_telemetry(tmp_path):
    brain = tmp_path / "brain"
    manifest = synthesize(brain, SynthOptions(weeks=1, seed=5))
    first = {p.name: p.read_bytes() for p in (brain / "telemetry").iterdir()}
    # the focus sessions are written after the telemetry (synth/focus.py): not in it
    for session in next(p["transcript_sessions"] for p in manifest.planted
                        if p["effect"].startswith("focus:")):
        for path in (brain / "claude").rglob(f"{session}.jsonl"):
            path.unlink()
            shutil.rmtree(path.with_suffix(""))  # its subagents' files
    for path in (brain / "telemetry").iterdir():
        path.unlink()
    write_telemetry(brain, random.Random(5 * 7919 + 26))
    assert {p.name: p.read_bytes() for p in Path(brain / "telemetry").iterdir()} == first


def test_the_lake_exports_and_attaches_the_telemetry(tmp_path):
    from brainlab.lake import attach_lake, export_store

    brain = tmp_path / "brain"
    synthesize(brain, SynthOptions(weeks=1, seed=9))
    db = tmp_path / "s.duckdb"
    con = open_writer(db)
    try:
        ingest_claude(con, brain / "claude", workers=1)
        ingest_otel(con, discover([brain / "telemetry"]))
        expected = con.execute("SELECT source, count(*), sum(input_tokens) FROM cc_requests"
                               " GROUP BY 1 ORDER BY 1").fetchall()
        events = con.execute("SELECT count(*) FROM otel_events").fetchone()[0]
    finally:
        con.close()
    export_store(db, tmp_path / "lake", user="alice", machine="laptop")
    assert any((tmp_path / "lake" / "otel_events").rglob("*.parquet"))
    attached = tmp_path / "team.duckdb"
    attach_lake(tmp_path / "lake", attached)
    con = open_writer(attached)
    try:
        assert con.execute("SELECT count(*) FROM otel_events").fetchone()[0] == events
        assert con.execute("SELECT source, count(*), sum(input_tokens) FROM cc_requests"
                           " GROUP BY 1 ORDER BY 1").fetchall() == expected
    finally:
        con.close()


def test_the_weekly_report_shows_the_telemetry_section(cli_demo):
    """The report as users render it: the CLI, papermill, one self-contained HTML file. The
    page of the run's one `brainlab demo` (conftest.cli_demo: its brain's telemetry ingested,
    its latest week rendered), where this test rendered a 1-week store of transcripts and
    telemetry by `report weekly` (issue 28 item 1); the section on a store without brain
    files is the test above's."""
    done, page_path = cli_demo["done"], cli_demo["page"]
    assert done.returncode == 0, done.stderr
    assert f"weekly report: {page_path.relative_to(cli_demo['folder'])}" in done.stdout
    page = page_path.read_text(encoding="utf-8")
    assert "What telemetry adds" in page and MATE in page


def test_the_demo_telemetry_carries_the_cost_of_its_calls(cli_demo):
    """Claude Code's api_request events report the cost they computed; the demo's synthetic
    ones carry the store's price of the same call (demo.price_telemetry), so `usage
    reconcile` on the demo compares like with like: no session-day flagged on cost (before:
    every one, at telemetry $0), and telemetry-only (teammate) calls have a cost."""
    db = cli_demo["folder"] / "demo" / "brainlab.duckdb"
    done = subprocess.run([str(Path(sys.executable).with_name("brainlab")), "usage",
                           "reconcile", "--db", str(db), "--json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    rows = rows["rows"] if isinstance(rows, dict) else rows
    both = [r for r in rows if r["transcripts"] and r["telemetry"]]
    alone = [r for r in rows if r["telemetry"] and not r["transcripts"]]
    assert both and alone
    assert not [r for r in both if r["flagged"]]
    assert all(r["telemetry"]["cost_usd"] > 0 for r in both + alone)
    assert all(abs(r["gap"]["cost_usd"]) < 0.01 for r in both)
