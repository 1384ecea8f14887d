"""The Spark ingest's incremental SPEC §7 deduplication and its nothing-new run (issue 27 item 2).

The lake's deduplication follows the store's counting rules 2 and 3 of issue 45 (one
message.id under two requestIds in the main chain is two calls, the /btw replay one; the
survivor; a resumed session's call in the original session): bob's crafted cases
(tests/claude_factory.py), in the same first run, must give the calls a local store keeps.

A run re-ranks only the calls whose key is among its new lines, in the days of those lines
widened by ``rollups.WINDOW_DAYS``; every other day keeps its roll-up rows. A copy of a call
on the window's edge still counts once; one beyond the window counts twice (the documented
limit, docs/lake.md). A run with nothing new is decided on the driver and writes nothing.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import duckdb
import pytest

from brainlab.store import open_writer, query
from brainlab.transcripts.ingest import ingest_claude
from tests.claude_factory import assistant, usage, write
from tests.conftest import CORPUS

pyspark = pytest.importorskip("pyspark")
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("spark")]

DAY0 = dt.date(2026, 3, 10)


@pytest.fixture(scope="module")
def spark():
    from brainlab.lake.spark_ingest import spark_session

    session = spark_session("local[2]")
    session.sparkContext.setLogLevel("ERROR")
    yield session  # the session of test_spark.py when it runs first (getOrCreate)


def call(template: dict, msg: str, day: dt.date, session: str, n: int) -> str:
    """One assistant line of the corpus with its call's ids and timestamp replaced."""
    line = json.loads(json.dumps(template))
    line["message"]["id"] = msg
    line["requestId"] = f"req_{msg}"
    line["timestamp"] = f"{day.isoformat()}T12:00:00.000Z"
    line["sessionId"] = session
    line["uuid"] = f"00000000-0000-4000-8000-{n:012d}"
    line.pop("parentUuid", None)
    return json.dumps(line)


def usage_template() -> dict:
    for path in sorted(CORPUS.rglob("*.jsonl")):
        for raw in path.read_text(encoding="utf-8").splitlines():
            if '"usage"' in raw and '"assistant"' in raw:
                line = json.loads(raw)
                if line.get("message", {}).get("usage") and not line.get("isSidechain"):
                    return line
    raise AssertionError("no usage line in the corpus")


def daily(lake: Path) -> dict:
    rows = duckdb.connect().execute(
        f"SELECT day, sum(requests) FROM read_parquet('{lake}/rollup_usage_daily/*.parquet')"
        " WHERE \"user\" = 'alice' GROUP BY day").fetchall()
    return {day: n for day, n in rows}


def snapshot(lake: Path) -> dict:
    return {p: p.stat().st_mtime_ns for p in lake.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def window(spark, tmp_path_factory):
    """Three runs on one lake: three calls; then a resumed session's two copies (one on the
    window's edge, one beyond); then nothing new. Each run's daily roll-up and the lake's
    files around the last run. The nothing-new test had a lake and a run of its own (a whole
    Spark run, ~4 s): it reads the third run here (issue 28 item 1)."""
    from brainlab.lake import rollups
    from brainlab.lake.spark_ingest import ingest_claude_spark

    w = rollups.WINDOW_DAYS
    base = tmp_path_factory.mktemp("window")
    template = usage_template()
    project = base / "root" / "alice" / "laptop" / "projects" / "-home-alice-p"
    project.mkdir(parents=True)
    early, old = DAY0 - dt.timedelta(days=30), DAY0 - dt.timedelta(days=10)
    (project / "first.jsonl").write_text("\n".join([
        call(template, "msg_edge", DAY0, "s1", 1), call(template, "msg_beyond", old, "s1", 2),
        call(template, "msg_early", early, "s1", 3)]) + "\n")
    bob_files = counting_cases(base / "root" / "bob" / "laptop" / "projects")
    lake = base / "lake"
    ingest_claude_spark(spark, base / "root", lake)
    first = daily(lake)
    # a resumed session replays two calls: one w days after its original (the window's
    # edge), one w + 1 days after its own (beyond); the two windows do not overlap
    edge, beyond = DAY0 + dt.timedelta(days=w), old + dt.timedelta(days=w + 1)
    (project / "resumed.jsonl").write_text("\n".join([
        call(template, "msg_edge", edge, "s2", 4),
        call(template, "msg_beyond", beyond, "s2", 5)]) + "\n")
    ingest_claude_spark(spark, base / "root", lake)
    second = daily(lake)
    files = snapshot(lake)
    again = ingest_claude_spark(spark, base / "root", lake)
    return {"root": base / "root", "lake": lake, "daily": (first, second),
            "days": {"early": early, "old": old, "DAY0": DAY0, "edge": edge, "beyond": beyond},
            "again": again, "snapshots": (files, snapshot(lake)), "bob_files": bob_files}


def test_a_copy_on_the_window_edge_counts_once_one_beyond_counts_twice(window, tmp_path):
    d = window["days"]
    first, after = window["daily"]
    assert first == {d["early"]: 1, d["old"]: 1, DAY0: 1}
    # the edge copy re-ranked with its original: counted once, on the later copy's day;
    # the untouched day keeps its row
    assert after[d["edge"]] == 1 and DAY0 not in after and after[d["early"]] == 1
    # the copy beyond the window is ranked alone: its original stays too (the limit)
    assert after[d["beyond"]] == 1 and after[d["old"]] == 1
    assert sum(after.values()) == 4
    db = tmp_path / "local.duckdb"  # the store's views rank globally: 3 calls
    con = open_writer(db)
    try:
        ingest_claude(con, window["root"] / "alice", workers=1)
    finally:
        con.close()
    assert query(db, "SELECT sum(requests) AS n FROM usage_daily").n[0] == 3
    kept = duckdb.connect().execute(
        f"SELECT message_id, day FROM read_parquet('{window['lake']}/rollup_calls/*/*.parquet',"
        " hive_partitioning = true) WHERE \"user\" = 'alice' ORDER BY message_id, day").fetchall()
    assert [m for m, _ in kept] == ["msg_beyond", "msg_beyond", "msg_early", "msg_edge"]


def test_nothing_new_is_decided_on_the_driver_and_writes_nothing(window):
    again = window["again"]
    assert (again.read, again.unchanged, again.rollups) == (0, 2 + window["bob_files"], [])
    before, after = window["snapshots"]
    assert before and after == before  # no table, price table or roll-up rewritten


B = "2025-05-0{}T10:00:{:02d}.000Z"


def counting_cases(projects: Path) -> int:
    """Issue 45 rules 2 and 3 as tests/test_claude_newer.py and test_claude_counting.py build
    them (one session each, on days of their own); returns the number of files (subagents'
    too: each is a file of the manifest)."""
    files = []
    p = projects / "-home-bob-p"
    # rule 2: one message.id under two requestIds in the main chain (two calls); its side copy
    files.append(write(p / "r2.jsonl", [
        assistant("r2", B.format(1, 0), "b_msg1", "req_a", usage(5, 10, 0, 100)),
        assistant("r2", B.format(1, 1), "b_msg1", "req_b", usage(7, 20, 0, 200))]))
    files.append(write(p / "r2" / "subagents" / "agent-aside.jsonl", [
        assistant("r2", B.format(1, 2), "b_msg1", "req_a", usage(5, 10, 0, 50_000),
                  sidechain=True, agent="aside")]))
    # the /btw replay: same message.id, a new requestId in the side file: one call
    files.append(write(p / "btw.jsonl", [
        assistant("btw", B.format(2, 0), "b_parent", "req_parent", usage(0, 10, 0, 20))]))
    files.append(write(p / "btw" / "subagents" / "agent-q.jsonl", [
        assistant("btw", B.format(2, 1), "b_parent", "req_replay", usage(0, 10, 0, 50_000),
                  sidechain=True, agent="q"),
        assistant("btw", B.format(2, 2), "b_answer", "req_answer", usage(0, 30, 0, 700),
                  sidechain=True, agent="q")]))
    # the survivor: the larger total even when earlier; equal totals: the larger cost
    files.append(write(p / "surv.jsonl", [
        assistant("surv", B.format(3, 0), "b_m1", "r1", usage(5, 90, 0, 100)),
        assistant("surv", B.format(3, 1), "b_m1", "r1", usage(5, 10, 0, 100)),
        {**assistant("surv", B.format(3, 2), "b_m2", "r2", usage(1, 1)), "costUSD": 0.5},
        {**assistant("surv", B.format(3, 3), "b_m2", "r2", usage(1, 1)), "costUSD": 0.2}]))
    # rule 3: a resumed session repeats a call (same time, and later): the original keeps it
    for n, later in ((4, False), (5, True)):
        first = assistant(f"orig{n}", B.format(n, 0), f"b_res{n}", f"rr{n}",
                          usage(5, 10, 0, 100))
        files.append(write(p / f"orig{n}.jsonl", [first]))
        copy = {**first, "sessionId": f"resumed{n}",
                "timestamp": B.format(n, 30) if later else first["timestamp"]}
        files.append(write(p / f"resumed{n}.jsonl", [
            copy, assistant(f"resumed{n}", B.format(n, 40), f"b_new{n}", f"rn{n}",
                            usage(1, 2))]))
    return len(files)


def test_the_lake_counts_calls_as_the_store_does(window, tmp_path):
    """Issue 45 leftovers: the lake deduplicated by message.id alone; bob's cases must keep
    the calls (which copy, which session) a local store keeps."""
    db = tmp_path / "bob.duckdb"
    con = open_writer(db)
    try:
        ingest_claude(con, window["root"] / "bob", workers=1)
    finally:
        con.close()
    local = sorted(query(db, "SELECT message_id, session_id, input_tokens, output_tokens,"
                             " cache_read_tokens FROM cc_request_dedup").itertuples(index=False,
                                                                                 name=None))
    lake = sorted(duckdb.connect().execute(
        "SELECT message_id, session_id, input_tokens, output_tokens, cache_read_tokens FROM"
        f" read_parquet('{window['lake']}/rollup_calls/*/*.parquet', hive_partitioning = true)"
        " WHERE \"user\" = 'bob'").fetchall())
    assert lake == local
    assert [m for m, *_ in local].count("b_msg1") == 2  # rule 2: two calls, not one
    assert ("b_parent", "btw", 0, 10, 20) in local  # the main copy, not the 50,000 replay
    assert ("b_m1", "surv", 5, 90, 100) in local  # the larger total, though earlier
    assert {(m, s) for m, s, *_ in local if m.startswith("b_res")} == {
        ("b_res4", "orig4"), ("b_res5", "orig5")}  # rule 3: the original session
    users = duckdb.connect().execute(
        f"SELECT requests, sessions FROM read_parquet('{window['lake']}/rollup_usage_users/"
        "*.parquet') WHERE \"user\" = 'bob'").fetchone()
    assert users == (len(local), len({s for _, s, *_ in local}))
