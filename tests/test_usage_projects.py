"""One definition of a call's project and of a session's project (issue 28 item 5).

A session's project is the last folder of its latest working directory; each of its calls
belongs to it (store/models/staging/cc_session_projects.sql, docs/transcripts.md
"Projects"). Before, a call took the
folder of its own cwd, `usage sessions` the session's latest, `simulate broker` the most
frequent: on the corpus `usage daily --project 3rdparty_net_snmp` gave 63 calls and $6.12
while `usage sessions --project 3rdparty_net_snmp` found none.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claude_factory import assistant, usage, write
from click.testing import CliRunner

from brainlab.cli import main
from brainlab.sim.broker import _projects
from brainlab.store import open_writer, reader
from brainlab.transcripts.ingest import ingest_claude

S1 = "11111111-1111-4111-8111-111111111111"
S2 = "22222222-2222-4222-8222-222222222222"


def usage_json(db: Path, *args: str) -> list[dict]:
    """``brainlab usage ARGS --json`` run in this process (click's runner): the views' project,
    not the command's start, is what this file checks (~0.2 CPU-s an interpreter, ~30 here)."""
    done = CliRunner().invoke(main, ["usage", *args, "--db", str(db), "--json", "--timezone",
                                     "UTC"])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout) if done.stdout.strip().startswith("[") else []


def _totals(rows: list[dict]) -> tuple[int, float]:
    return sum(r["requests"] for r in rows), round(sum(r["cost_usd"] or 0 for r in rows), 9)


@pytest.fixture(scope="module")
def corpus_db(corpus_store) -> Path:
    """The corpus ingested: the run's store (the same ingest, built once a run; read only)."""
    return corpus_store


def test_every_view_gives_a_project_the_same_calls_on_the_corpus(corpus_db):
    sessions = usage_json(corpus_db, "sessions")
    projects = sorted({s["project"] for s in sessions if s["project"]})
    assert "lib_moxa_snmp_agentx" in projects and "3rdparty_net_snmp" not in projects
    for project in projects:
        days = usage_json(corpus_db, "daily", "--project", project)
        mine = [s for s in sessions if s["project"] == project]
        assert _totals(days) == pytest.approx(_totals(mine)), project
        assert _totals(usage_json(corpus_db, "sessions", "--project", project)) == (
            pytest.approx(_totals(mine)))
        models = usage_json(corpus_db, "models", "--project", project)
        assert sum(m["requests"] for m in models) == _totals(mine)[0]
    # session 719f12f0 ran in lib_moxa_snmp_agentx and 3rdparty_net_snmp: one project, whole
    moxa = usage_json(corpus_db, "daily", "--project", "lib_moxa_snmp_agentx")
    session = next(s for s in sessions if s["session_id"].startswith("719f12f0"))
    assert _totals(moxa)[1] == pytest.approx(session["cost_usd"])
    assert usage_json(corpus_db, "daily", "--project", "3rdparty_net_snmp") == []
    # simulate broker --project names the same projects (those with sprints)
    assert set(_projects(corpus_db)) <= set(projects)
    with reader(corpus_db) as con:
        for view in ("cc_sessions", "cc_measured"):
            key = "session_id" if view == "cc_sessions" else "transcript_session"
            named = dict(con.execute(f"SELECT {key}, project FROM {view}").fetchall())
            assert {s["session_id"]: s["project"] for s in sessions} == {
                k: v for k, v in named.items() if k in {s["session_id"] for s in sessions}}


def test_a_session_that_changes_folder_keeps_one_project(tmp_path):
    root = tmp_path / "projects"
    write(root / "p" / f"{S1}.jsonl", [
        assistant(S1, "2026-04-01T10:00:00.000Z", "m1", "r1", usage(inp=5, out=10),
                  cwd="/home/u/alpha"),
        assistant(S1, "2026-04-02T10:00:00.000Z", "m2", "r2", usage(inp=5, out=20),
                  cwd="/home/u/alpha/sub/beta")])
    write(root / "q" / f"{S2}.jsonl", [
        assistant(S2, "2026-04-01T11:00:00.000Z", "m3", "r3", usage(inp=5, out=40),
                  cwd="/home/u/alpha")])
    db = tmp_path / "b.duckdb"
    con = open_writer(db)
    ingest_claude(con, root, workers=1)
    con.close()
    assert [(d["day"], d["output_tokens"]) for d in usage_json(db, "daily", "--project",
                                                                "beta")] == [
        ("2026-04-01", 10), ("2026-04-02", 20)]
    assert [s["session_id"] for s in usage_json(db, "sessions", "--project", "beta")] == [S1]
    assert [(d["day"], d["output_tokens"]) for d in usage_json(db, "daily", "--project",
                                                                "alpha")] == [
        ("2026-04-01", 40)]

    # a later line moves the session back: every call follows, also on an incremental run
    with open(root / "p" / f"{S1}.jsonl", "a") as handle:
        handle.write(json.dumps(assistant(S1, "2026-04-03T10:00:00.000Z", "m4", "r4",
                                          usage(inp=5, out=80), cwd="/home/u/alpha")) + "\n")
    con = open_writer(db)
    ingest_claude(con, root, workers=1)
    con.close()
    assert usage_json(db, "daily", "--project", "beta") == []
    assert sum(d["output_tokens"] for d in usage_json(db, "daily", "--project", "alpha")) == (
        150)
