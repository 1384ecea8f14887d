"""`--cost-mode calculate|reported|auto` (issue 24), ccusage's ``--mode`` semantics.

calculate: from tokens at brainlab's prices (the default); reported: each call's own
``costUSD`` (older Claude Code versions write it), 0 for a call without one (ccusage's
``display``: ``data.costUSD ?? 0``); auto: ``costUSD`` when the line has it, else calculated.
Crafted transcripts, the CLI in a subprocess, a real DuckDB file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from claude_factory import assistant, usage, write

from brainlab.store import reader

S1 = "11111111-1111-4111-8111-111111111111"
DAY = "2026-05-04"


def _line(n: int, cost=None, absent: bool = False) -> dict:
    line = assistant(S1, f"{DAY}T10:0{n}:00.000Z", f"msg_{n}", f"req_{n}",
                     usage(1_000_000, 0))  # the same tokens: the same calculated cost
    if not absent:
        line["costUSD"] = cost
    return line


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brainlab.cli", *args], cwd=cwd,
                          capture_output=True, text=True, env=dict(os.environ), timeout=300)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("cost")
    write(home / "projects" / "alpha" / f"{S1}.jsonl", [
        _line(1, 1.5), _line(2, 0.25), _line(3, absent=True), _line(4, "x"), _line(5, None)])
    done = run(home, "ingest", "claude", str(home / "projects"), "--db", "b.duckdb")
    assert done.returncode == 0, done.stderr
    return home / "b.duckdb"


def cost(db: Path, mode: str | None, view: str = "daily") -> float:
    args = ["usage", view, "--db", str(db), "--json", "--timezone", "UTC"]
    done = run(db.parent, *args, *(["--cost-mode", mode] if mode else []))
    assert done.returncode == 0, done.stderr
    return sum(r["cost_usd"] or 0 for r in json.loads(done.stdout))


def test_the_line_costusd_is_kept_and_an_odd_one_is_a_warning_row(store):
    with reader(store) as con:
        kept = dict(con.execute("SELECT line, reported_cost_usd FROM cc_request_lines"
                                ).fetchall())
        errors = con.execute("SELECT file, line, reason FROM ingest_errors"
                             " WHERE reason LIKE '%costUSD%'").fetchall()
    assert kept == {1: 1.5, 2: 0.25, 3: None, 4: None, 5: None}
    assert len(errors) == 1 and errors[0][1] == 4 and errors[0][0].endswith(f"{S1}.jsonl")


@pytest.mark.parametrize("view", ["daily", "weekly", "monthly", "sessions", "models",
                                  "projects", "agents"])
def test_each_mode_sums_the_cost_ccusage_would(store, view):
    calculated = cost(store, None, view)
    assert calculated > 0 and cost(store, "calculate", view) == pytest.approx(calculated)
    per_call = calculated / 5  # five calls of the same tokens and model
    assert cost(store, "reported", view) == pytest.approx(1.75)  # 1.5 + 0.25, 0 for the rest
    assert cost(store, "auto", view) == pytest.approx(1.75 + 3 * per_call)


def test_ingest_daily_prints_the_mode_asked(store):
    done = run(store.parent, "ingest", "claude", str(store.parent / "projects"), "--db",
               store.name, "--daily", "--cost-mode", "reported")
    assert done.returncode == 0, done.stderr
    assert "1.75" in done.stdout


def test_an_unknown_mode_is_one_error_line(store):
    done = run(store.parent, "usage", "--db", store.name, "--cost-mode", "display")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "calculate" in done.stderr
    done = run(store.parent, "usage", "blocks", "--db", store.name, "--cost-mode", "auto")
    assert done.returncode == 1 and done.stderr.startswith("Error:")
