"""`brainlab usage projects|agents|tickets` (issue 24: cost where people ask for it).

A session whose working directory is a worktree `.claude/worktrees/<ticket>` belongs to that
ticket; calls are grouped by the session's project and by who made them (main chain or the
subagent's type). Crafted transcripts, the real ingest, the CLI in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from claude_factory import assistant, usage, write

from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude

S1 = "11111111-1111-4111-8111-111111111111"
S2 = "22222222-2222-4222-8222-222222222222"
TICKET_DIR = "/home/u/repo/.claude/worktrees/T-42"


@pytest.fixture
def db(tmp_path) -> Path:
    root = tmp_path / "projects"
    write(root / "-home-u-repo--claude-worktrees-T-42" / f"{S1}.jsonl", [
        assistant(S1, "2026-04-01T10:00:00.000Z", "m1", "r1", usage(inp=10, out=100),
                  model="claude-sonnet-4-5", cwd=TICKET_DIR),
        assistant(S1, "2026-04-01T10:05:00.000Z", "m2", "r2", usage(inp=10, out=200),
                  model="claude-sonnet-4-5", cwd=TICKET_DIR + "/src", agent="a1",
                  sidechain=True)])
    write(root / "-home-u-repo" / f"{S2}.jsonl", [
        assistant(S2, "2026-04-01T11:00:00.000Z", "m3", "r3", usage(inp=10, out=400),
                  model="claude-sonnet-4-5", cwd="/home/u/repo")])
    path = tmp_path / "b.duckdb"
    con = open_writer(path)
    ingest_claude(con, root, workers=1)
    con.close()
    return path


def usage_json(db: Path, view: str) -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "brainlab.cli", "usage", view, "--db", str(db),
                           "--json", "--timezone", "UTC"], cwd=db.parent, capture_output=True,
                          text=True, env=dict(os.environ), timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_tickets_projects_and_agents(db):
    tickets = usage_json(db, "tickets")
    assert [(t["ticket"], t["sessions"], t["requests"], t["output_tokens"]) for t in tickets] == [
        ("T-42", 1, 2, 300)]
    assert tickets[0]["cost_usd"] == pytest.approx((20 * 3.0 + 300 * 15.0) / 1e6)
    projects = {p["project"]: p["output_tokens"] for p in usage_json(db, "projects")}
    assert projects == {"src": 300, "repo": 400}  # the session's latest folder, whole
    agents = {a["agent"]: a["requests"] for a in usage_json(db, "agents")}
    assert agents == {"main": 2, "subagent (type unknown)": 1}


def test_no_ticket_session_says_so(tmp_path):
    root = tmp_path / "projects"
    write(root / "p" / f"{S2}.jsonl", [
        assistant(S2, "2026-04-01T11:00:00.000Z", "m3", "r3", usage(inp=10, out=400),
                  cwd="/home/u/repo")])
    path = tmp_path / "b.duckdb"
    con = open_writer(path)
    ingest_claude(con, root, workers=1)
    con.close()
    done = subprocess.run([sys.executable, "-m", "brainlab.cli", "usage", "tickets", "--db",
                           str(path)], cwd=tmp_path, capture_output=True, text=True,
                          env=dict(os.environ), timeout=300)
    assert done.returncode == 0
    assert "ran in a ticket's worktree" in done.stdout
