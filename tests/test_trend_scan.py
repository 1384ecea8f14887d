"""Issue 43: the stored change points never go silently stale (brainlab/store/trend_scan.py).

`ingest claude` and `ingest otel` rescan nothing (their incremental runs, the hooks' too, may
not import pandas: issue 12, docs/live.md), yet every trend series reads transcripts or
telemetry on basis best. Every writer of the scan's inputs counts its write; the scan stores
the count it read; the view trend_changes shows the stored rows only while that count is the
store's, and trend_changes_status says stale and what to run. On a copy of the demo store.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from claude_factory import assistant, usage, user
from click.testing import CliRunner
from conftest import cli_env

from brainlab.cli import main
from brainlab.otel import export
from brainlab.otel.ingest import ingest_otel_db
from brainlab.spec.thresholds import Thresholds
from brainlab.store import open_writer, trend_scan
from brainlab.store.connection import rows


@pytest.fixture
def store(demo, tmp_path) -> Path:
    """A copy of the demo store, whose scan `brainlab demo` stored last (current)."""
    db = tmp_path / "store.duckdb"
    shutil.copy(demo["db"], db)
    return db


def value(db: Path, sql: str):
    return rows(db, sql)[1][0][0]


def shown(db: Path) -> int:
    return value(db, "SELECT count(*) FROM trend_changes")


def a_week_later(db: Path, folder: Path) -> Path:
    """A transcript of three calls a week after the store's last call, in a project folder."""
    last = value(db, "SELECT max(ts) FROM cc_requests")
    lines = []
    for day in range(3):
        ts = (last + timedelta(days=7 + day)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        lines += [user("week-later", ts, "go"),
                  assistant("week-later", ts, f"msg_later_{day}", f"req_later_{day}",
                            usage(inp=900, out=4000, cw=2000, cr=50_000))]
    path = folder / "projects" / "-home-u-projets-alpha" / "week-later.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return folder


def test_an_ingest_claude_adding_a_week_marks_the_change_points_stale_never_old(store, tmp_path):
    before = trend_scan.status(store)
    assert before.current and before.changes > 0 and shown(store) == before.changes
    calls = value(store, "SELECT count(*) FROM cc_requests")

    done = subprocess.run(  # as a user runs it (the console script's module)
        [sys.executable, "-m", "brainlab.cli", "ingest", "claude",
         str(a_week_later(store, tmp_path / "claude")), "--db", str(store)],
        cwd=tmp_path, env=cli_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert value(store, "SELECT count(*) FROM cc_requests") == calls + 3  # the new week is in

    stale = trend_scan.status(store)
    assert stale.state == "stale" and stale.changes == before.changes  # the old rows are kept
    assert shown(store) == 0  # ... and never shown as the store's change points
    assert "brainlab trends --refresh" in stale.message

    text = CliRunner().invoke(main, ["trends", "--db", str(store)])
    assert text.exit_code == 0, text.output
    tail = text.output[text.output.rindex("store view trend_changes:"):]  # the last lines
    assert tail.startswith("store view trend_changes: stale:")
    assert "brainlab trends --refresh" in " ".join(tail.split())
    as_json = CliRunner().invoke(main, ["trends", "--db", str(store), "--json"])
    assert json.loads(as_json.output)["stored"]["state"] == "stale"

    refreshed = CliRunner().invoke(main, ["trends", "--db", str(store), "--refresh", "--json"])
    assert refreshed.exit_code == 0, refreshed.output
    result = json.loads(refreshed.output)
    assert result["stored"]["state"] == "current"
    assert trend_scan.status(store).current and shown(store) == result["stored"]["changes"]
    week_changes = {(c["series"], c["period"]) for c in result["changes"]}
    assert week_changes == {tuple(r) for r in rows(
        store, "SELECT series, period FROM trend_changes WHERE scale = 'week'")[1]}


def test_every_writer_of_the_inputs_leaves_the_scan_stale_and_a_brain_ingest_rescans(
        store, tmp_path, demo):
    # telemetry: one call seen only there
    last = value(store, "SELECT max(ts) FROM cc_requests")
    call = export.Call("otel-only", "req_otel_only", "claude-opus-4-5-20251101",
                       last + timedelta(days=8), 10, 20, 0, 0, 0.01)
    export.write_json_lines(tmp_path / "otel" / "logs.json", export.logs_requests([call]))
    ingest_otel_db(store, [tmp_path / "otel"])
    assert trend_scan.status(store).state == "stale" and shown(store) == 0

    # a scan during which a writer writes is stale at once (it read the count before)
    seen = trend_scan.inputs_seen(store)
    con = open_writer(store)
    try:
        trend_scan.inputs_changed(con)  # what ingest claude/otel, prices, the brain ingest do
    finally:
        con.close()
    import pandas as pd

    empty = pd.DataFrame(columns=["scale", "series", "metric", "period", "week", "direction",
                                  "before", "after", "difference", "low", "high", "verdict"])
    con = open_writer(store)
    try:
        trend_scan.write(con, empty, seen, Thresholds())
    finally:
        con.close()
    assert trend_scan.status(store).state == "stale"

    # the next brain ingest rescans a stale store even when no brain file changed
    from brainlab.cli.support import refresh_trend_changes

    refresh_trend_changes(store, changed=False)
    now = trend_scan.status(store)
    assert now.current and now.changes > 0 and shown(store) == now.changes
    refresh_trend_changes(store, changed=False)  # current: nothing to do, nothing rewritten
    assert trend_scan.status(store).scanned_at == now.scanned_at


def test_a_store_never_scanned_says_so_and_an_empty_store_shows_no_change(empty_store,
                                                                           corpus_store):
    for db in (empty_store, corpus_store):
        status = trend_scan.status(db)
        assert status.state == "not scanned" and shown(db) == 0
        assert "brainlab trends --refresh" in status.message


def test_a_scan_made_with_other_thresholds_is_stale_for_the_settings_and_a_brain_ingest_rescans(
        store, tmp_path, demo):
    """A tuned threshold changes every answer (issue 40 item 1), the stored change points too:
    the coach-trigger series reads ``coach_ratio``. The demo's scan used the defaults; from a
    project folder whose brainlab.toml sets ``coach_ratio = 0.3`` the scan is stale, and the
    next brain ingest, though no brain file changed, rescans with the settings' set."""
    tuned = Thresholds().replace(coach_ratio=0.3)
    assert trend_scan.status(store, Thresholds()).current
    assert trend_scan.status(store).current  # no settings given: the view's own state
    stale = trend_scan.status(store, tuned)
    assert stale.state == "stale" and "coach_ratio 0.4 then, 0.3 now" in stale.message
    assert "brainlab trends --refresh" in stale.message

    project = tmp_path / "project"
    project.mkdir()
    (project / "brainlab.toml").write_text("[thresholds]\ncoach_ratio = 0.3\n", encoding="utf-8")

    def brainlab(*args: str) -> str:  # as a user runs it, from the project folder
        done = subprocess.run([sys.executable, "-m", "brainlab.cli", *args, "--db", str(store)],
                              cwd=project, env=cli_env(tmp_path), capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout

    stored = json.loads(brainlab("trends", "--json"))["stored"]
    assert stored["state"] == "stale" and "coach_ratio 0.4 then, 0.3 now" in stored["message"]
    assert "store view trend_changes: stale: scanned with other thresholds" in " ".join(
        brainlab("trends").split())

    brainlab("ingest", "brain", str(demo["root"]))  # no brain file changed
    assert trend_scan.status(store, tuned).current
    assert trend_scan.status(store, Thresholds()).state == "stale"
    result = json.loads(brainlab("trends", "--json"))
    assert result["stored"]["state"] == "current"
    assert {(c["series"], c["period"]) for c in result["changes"]} == {tuple(r) for r in rows(
        store, "SELECT series, period FROM trend_changes WHERE scale = 'week'")[1]}
