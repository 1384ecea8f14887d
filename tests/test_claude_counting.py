"""Counting rules 1-5 of docs/transcripts.md (issue 24), each on a crafted transcript.

Each case is the shape another tool's tests (ccusage's rust/crates/ccusage/src/adapter/claude)
or the issue describe; each failed before the rule. The incremental roll-up must give the
views' figures under every rule (assert_rollup_matches_views).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from claude_factory import assistant, usage, write
from test_usage_rollup import assert_rollup_matches_views

from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude

S = "3f1c9a2e-0b7d-4c55-9e21-6a8d2b4f7c10"  # a session id as Claude Code writes it
DAY = "2026-03-29T07:{:02d}:00.000Z"


def sums(con):
    return con.execute("SELECT count(*), sum(output_tokens), sum(cache_read_tokens)"
                       " FROM cc_requests").fetchone()


def ingest(tmp_path, con=None):
    con = con or open_writer(tmp_path / "b.duckdb")
    ingest_claude(con, tmp_path / "projects", workers=1)
    return con


def btw_tree(root):
    """A /btw side question: its sidechain file replays the parent's message (new requestId)."""
    project = root / "projects" / "-home-u-alpha"
    write(project / f"{S}.jsonl", [assistant(S, DAY.format(0), "msg-parent", "req-parent",
                                             usage(0, 10, 0, 20))])
    write(project / S / "subagents" / "agent-aside.jsonl", [
        assistant(S, DAY.format(1), "msg-parent", "req-sidechain-replay",
                  usage(0, 10, 0, 50_000), sidechain=True, agent="aside"),
        assistant(S, DAY.format(2), "msg-sidechain-answer", "req-sidechain-answer",
                  usage(0, 30, 0, 700), sidechain=True, agent="aside")])


def tied_tree(root):
    """Two streaming copies of one call with the same timestamp, the complete one first."""
    write(root / "projects" / "-home-u-beta" / f"{S}.jsonl", [
        assistant(S, DAY.format(0), "m1", "r1", usage(1, 50, 0, 100)),
        assistant(S, DAY.format(0), "m1", "r1", usage(1, 5, 0, 100))])


TREES = {"btw": btw_tree, "tied": tied_tree}


def test_btw_sidechain_replay_counts_once_and_main_copy_wins(tmp_path):
    """Rule 1 (+2): a /btw side question's sidechain file replays its parent's message under
    the same message.id and a new requestId (ccusage issue #913, PR #1155): one call, the
    parent's copy (20 cache reads, not the replay's 50,000); the side answer counts apart."""
    btw_tree(tmp_path)
    con = ingest(tmp_path)
    assert sums(con) == (2, 40, 720)  # before: (3, 50, 50_720)
    assert con.execute("SELECT message_id, agent_id FROM cc_requests ORDER BY message_id"
                       ).fetchall() == [("msg-parent", None), ("msg-sidechain-answer", "aside")]
    assert_rollup_matches_views(con)


def test_main_chain_copy_wins_over_a_later_sidechain_copy(tmp_path):
    """Rule 2: the same call (same message.id and requestId) in the main chain and, later, in
    a sidechain copy belongs to the main chain; a subagent's own call stays the subagent's."""
    project = tmp_path / "projects" / "-home-u-alpha"
    write(project / f"{S}.jsonl", [assistant(S, DAY.format(0), "m1", "r1", usage(5, 10, 0, 100))])
    write(project / S / "subagents" / "agent-a1.jsonl", [
        assistant(S, DAY.format(3), "m1", "r1", usage(5, 10, 0, 100), sidechain=True,
                  agent="a1"),
        assistant(S, DAY.format(4), "m2", "r2", usage(1, 2, 0, 3), sidechain=True,
                  agent="a1")])
    con = ingest(tmp_path)
    assert con.execute("SELECT requests, subagent_requests FROM usage_sessions"
                       ).fetchall() == [(2, 1)]  # before: (2, 2)
    assert con.execute("SELECT main_requests FROM cc_sessions").fetchall() == [(1,)]
    assert_rollup_matches_views(con)


@pytest.mark.parametrize("split", [False, True], ids=["one-file", "two-files"])
def test_streaming_copies_with_equal_timestamps_keep_the_most_complete(tmp_path, split):
    """Rule 3: copies of one call with the same timestamp: the largest output_tokens wins,
    wherever the lines lie (within one read, or across files)."""
    project = tmp_path / "projects" / "-home-u-alpha"
    full = assistant(S, DAY.format(0), "m1", "r1", usage(1, 50, 0, 100))
    partial = assistant(S, DAY.format(0), "m1", "r1", usage(1, 5, 0, 100))
    if split:  # the partial copy in the later file (path order decides ties today)
        write(project / f"{S}.jsonl", [full])
        write(project / "zz-copy.jsonl", [partial])
    else:
        write(project / f"{S}.jsonl", [full, partial])
    con = ingest(tmp_path)
    assert sums(con) == (1, 50, 100)  # before: (1, 5, 100)
    assert_rollup_matches_views(con)


def shell(*args, env=None):
    return subprocess.run([sys.executable, "-m", "brainlab.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "80", **(env or {})})


def test_usage_line_without_timestamp_is_a_warning_left_out_of_dated_views(tmp_path):
    """Rule 4: a usage line without timestamp is a warning row; dated views leave it out and
    say how many calls they left out; sessions and models still count it."""
    project = tmp_path / "projects" / "-home-u-alpha"
    undated = assistant(S, DAY.format(0), "m2", "r2", usage(7, 7))
    del undated["timestamp"]
    path = write(project / f"{S}.jsonl",
                 [assistant(S, DAY.format(0), "m1", "r1", usage(1, 1)), undated])
    db = tmp_path / "b.duckdb"
    assert shell("ingest", "claude", tmp_path / "projects", "--db", db).returncode == 0
    daily = shell("usage", "daily", "--db", db, "--json")
    assert daily.returncode == 0, daily.stderr
    rows = json.loads(daily.stdout)
    assert [r["day"] for r in rows] == ["2026-03-29"]  # before: a "day": null row too
    assert "1 call(s) without a timestamp left out" in daily.stderr
    text = shell("usage", "weekly", "--db", db)
    assert "1 call(s) without a timestamp left out" in text.stdout
    models = json.loads(shell("usage", "models", "--db", db, "--json").stdout)
    assert sum(r["requests"] for r in models) == 2
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT file, line, severity FROM ingest_errors WHERE reason LIKE"
                           " 'usage line without%'").fetchall() == [(str(path), 2, "warning")]
        assert con.execute("SELECT count(*) FROM usage_daily WHERE day IS NULL"
                           ).fetchone() == (0,)


@pytest.mark.parametrize("case", sorted(TREES))
def test_crafted_cases_equal_ccusage(tmp_path, case):
    """Rules 1-3 on the crafted trees: per-day tokens equal ccusage 20.0.24's own output on
    the same trees (tests/fixtures/ccusage_20.0.24_counting_rules.json, provenance inside)."""
    oracle = json.loads((Path(__file__).parent / "fixtures"
                         / "ccusage_20.0.24_counting_rules.json").read_text())[case]
    TREES[case](tmp_path)
    con = ingest(tmp_path)
    ours = con.execute("SELECT CAST(day AS VARCHAR), input_tokens, output_tokens,"
                       " cache_creation_tokens, cache_read_tokens, cost_usd FROM usage_daily"
                       ).fetchall()
    assert [r[:5] for r in ours] == [
        (d["date"], d["inputTokens"], d["outputTokens"], d["cacheCreationTokens"],
         d["cacheReadTokens"]) for d in oracle["daily"]]
    assert [r[5] for r in ours] == pytest.approx([d["totalCost"] for d in oracle["daily"]])


def test_lines_without_session_id_keep_their_project_apart(tmp_path):
    """Rule 5: without sessionId, a line's session is its file's, within its project folder:
    a/shared.jsonl and b/shared.jsonl are two sessions (a UUID-named file keeps its name)."""
    for project in ("a", "b"):
        line = assistant(None, DAY.format(0), f"m-{project}", f"r-{project}", usage(1, 1))
        del line["sessionId"]
        write(tmp_path / "projects" / project / "shared.jsonl", [line])
    line = assistant(None, DAY.format(1), "m-c", "r-c", usage(1, 1))
    del line["sessionId"]
    write(tmp_path / "projects" / "c" / f"{S}.jsonl", [line])
    con = ingest(tmp_path)
    assert con.execute("SELECT session_id FROM usage_sessions ORDER BY 1").fetchall() == [
        (S,), ("a/shared",), ("b/shared",)]  # before: shared, once, with 2 calls
    assert_rollup_matches_views(con)
