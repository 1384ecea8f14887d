"""`brainlab usage --user/--machine/--by user` on a store attached to a team lake (issue 40 item 4).

Two people's stores (alice on two machines, bob on one) are exported into one lake with
``brainlab export`` and attached with ``brainlab attach`` (real DuckDB files, the CLI in a
subprocess). Planted: alice's and bob's calls on known days, one call alice's laptop and
desk both hold (a transcript copied between machines: SPEC §7 counts it once). Checked:
``usage daily --user alice`` gives alice's days and only hers; the per-person totals add up
to the team's, per day too; ``--machine`` keeps one machine; a local store says where a user
comes from. The null: a store where nobody is named has no per-person rows to split.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from claude_factory import assistant, usage, write
from conftest import built_once

from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude

# (user, machine) -> calls: (session, day, hour, message id, output tokens)
CALLS = {
    ("alice", "laptop"): [("a-s1", "2026-03-02", 9, "ma1", 100), ("a-s1", "2026-03-02", 10,
                                                                  "ma2", 200),
                          ("a-s2", "2026-03-04", 9, "ma3", 300)],
    ("alice", "desk"): [("a-s3", "2026-03-05", 14, "ma4", 400),
                        ("a-s1", "2026-03-02", 9, "ma1", 100)],  # ma1 copied: counts once
    ("bob", "laptop"): [("b-s1", "2026-03-02", 11, "mb1", 1000),
                        ("b-s1", "2026-03-06", 16, "mb2", 2000)],
}
ALICE_DAYS = {"2026-03-02": 300, "2026-03-04": 300, "2026-03-05": 400}  # day -> output tokens
BOB_DAYS = {"2026-03-02": 1000, "2026-03-06": 2000}


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "brainlab.cli", *args], cwd=cwd,
                          capture_output=True, text=True, env=dict(os.environ), timeout=300)
    return done


def records(*args: str, cwd: Path) -> list[dict]:
    done = run(*args, "--json", "--timezone", "UTC", cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def team(tmp_path_factory) -> dict:
    """Two users' stores exported to one lake and attached, built once a run for both xdist
    workers (conftest.built_once: each worker running a test here built it, ~3 CPU-s of
    ingests and CLI runs); tests only read it."""
    base = built_once(tmp_path_factory, "usage-team", _build_team)
    return {"base": base, "db": base / "team.duckdb", "local": base / "alice-laptop.duckdb"}


def _build_team(base: Path) -> None:
    lake = base / "lake"
    for (user, machine), calls in CALLS.items():
        root = base / f"{user}-{machine}" / "projects"
        for session in {c[0] for c in calls}:
            write(root / "-home-p" / f"{session}.jsonl", [
                assistant(s, f"{day}T{hour:02d}:00:00.000Z", msg, "r" + msg, usage(10, out),
                          model="claude-sonnet-4-5-20250929")
                for s, day, hour, msg, out in calls if s == session])
        store = base / f"{user}-{machine}.duckdb"
        con = open_writer(store)
        try:
            ingest_claude(con, root, workers=1)
        finally:
            con.close()
        done = run("export", "--db", str(store), "--lake", str(lake), "--user", user,
                   "--machine", machine, cwd=base)
        assert done.returncode == 0, done.stdout + done.stderr
    db = base / "team.duckdb"
    done = run("attach", "--lake", str(lake), "--db", str(db), cwd=base)
    assert done.returncode == 0, done.stdout + done.stderr


def test_usage_daily_user_gives_that_persons_days(team):
    base, db = team["base"], str(team["db"])
    alice = records("usage", "daily", "--user", "alice", "--db", db, cwd=base)
    assert {r["day"]: r["output_tokens"] for r in alice} == ALICE_DAYS
    assert sum(r["requests"] for r in alice) == 4  # ma1 on two machines: one call
    bob = records("usage", "daily", "--user", "bob", "--db", db, cwd=base)
    assert {r["day"]: r["output_tokens"] for r in bob} == BOB_DAYS
    desk = records("usage", "daily", "--user", "alice", "--machine", "desk", "--db", db,
                   cwd=base)
    laptop = records("usage", "daily", "--user", "alice", "--machine", "laptop", "--db", db,
                     cwd=base)
    assert sum(r["requests"] for r in desk) + sum(r["requests"] for r in laptop) == 4


def test_per_person_totals_add_up_to_the_team(team):
    base, db = team["base"], str(team["db"])
    people = records("usage", "--by", "user", "--db", db, cwd=base)  # view total
    assert {r["user_name"] for r in people} == {"alice", "bob"}
    whole = records("usage", "total", "--db", db, cwd=base)
    assert len(whole) == 1
    for column in ("requests", "input_tokens", "output_tokens", "total_tokens"):
        assert sum(r[column] for r in people) == whole[0][column]
    assert sum(r["cost_usd"] for r in people) == pytest.approx(whole[0]["cost_usd"])
    daily = records("usage", "daily", "--db", db, cwd=base)
    by_day = records("usage", "daily", "--by", "user", "--db", db, cwd=base)
    for day in daily:
        split = [r for r in by_day if r["day"] == day["day"]]
        assert sum(r["total_tokens"] for r in split) == day["total_tokens"]
        assert sum(r["cost_usd"] for r in split) == pytest.approx(day["cost_usd"])
    machines = records("usage", "--by", "user,machine", "--db", db, cwd=base)
    assert {(r["user_name"], r["machine"]): r["requests"] for r in machines} == {
        ("alice", "laptop"): 3, ("alice", "desk"): 1, ("bob", "laptop"): 2}


def test_a_local_store_names_no_user(team):
    """The null: a local store has no lake partition and no telemetry: nobody to split by."""
    base, db = team["base"], str(team["local"])
    people = records("usage", "--by", "user", "--db", db, cwd=base)
    assert [r["user_name"] for r in people] == [None]
    done = run("usage", "daily", "--user", "alice", "--db", db, cwd=base)
    assert done.returncode == 0
    assert "No Claude Code usage matches --user alice" in done.stdout
    assert "brainlab attach --lake DIR" in done.stdout
    bad = run("usage", "--by", "colour", "--db", db, cwd=base)
    assert bad.returncode == 1 and bad.stderr.startswith("Error: --by must be one of")
    assert "Traceback" not in bad.stderr


def test_the_lake_rollups_are_usage_by_sums():
    """The Spark ingest's driver sums its daily rows with the store's usage_by (no JVM here):
    per-user and per-model rows add up to the days, weeks are ISO weeks, costs sum exactly."""
    import datetime as dt

    import pyarrow as pa

    from brainlab.lake.rollups import finish

    days = [dt.date(2026, 3, 2), dt.date(2026, 3, 2), dt.date(2026, 3, 9), None]
    daily = pa.table({"day": days, "user": ["a", "b", "a", "a"], "model": ["m1", "m1", "m2", "m1"],
                      "input_tokens": [1, 2, 3, 4], "output_tokens": [10, 20, 30, 40],
                      "cache_creation_tokens": [0, 1, 0, 1], "cache_read_tokens": [5, 5, 5, 5],
                      "total_tokens": [16, 28, 38, 50], "cost_usd": [0.1, 0.2, None, 0.4],
                      "requests": [1, 2, 3, 4], "unpriced_requests": [0, 0, 3, 0]})
    per = pa.table({"user": ["a", "b", None, None], "model": [None, None, "m1", "m2"],
                    "grouping": [1, 1, 2, 2], "sessions": [2, 1, None, None],
                    "machines": [1, 1, None, None], "priced_as": [None, None, "m1", None]})
    out = {name: table.to_pylist() for name, table in finish(daily, per).items()}
    users = {r["user"]: r for r in out["rollup_usage_users"]}
    assert (users["a"]["requests"], users["b"]["requests"]) == (8, 2)
    assert (users["a"]["first_day"], users["a"]["last_day"]) == (days[0], days[2])
    assert sum(r["total_tokens"] for r in out["rollup_usage_users"]) == 132
    models = {r["model"]: r for r in out["rollup_usage_models"]}
    assert models["m1"]["cost_usd"] == 0.7  # exact: 0.1 + 0.2 + 0.4 summed as decimals
    assert (models["m2"]["cost_usd"], models["m2"]["unpriced_requests"]) == (None, 3)
    weeks = [(r["week_start"], r["iso_week"], r["user"]) for r in out["rollup_usage_weekly"]]
    assert weeks == [(days[0], 10, "a"), (days[0], 10, "b"), (days[2], 11, "a"),
                     (None, None, "a")]
    assert sum(r["requests"] for r in out["rollup_usage_daily"]) == 10
