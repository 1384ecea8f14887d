"""Claude Code transcripts -> rows: SPEC §7 deduplication, subagent layouts, costs, sessions.

Every expected value below is computed by hand from the lines written in the fixture.
"""

import json

import pytest
from claude_factory import assistant, progress, tool_use, usage, user, write

from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude

S1, S2 = "11111111-aaaa", "22222222-bbbb"
D1 = "2026-03-02T09:"


def build_tree(root):
    proj = root / "projects" / "-home-u-projets-alpha"
    read = tool_use("t1", "Read", file_path="/home/u/brain/agents/helloWorld.md")
    task = tool_use("t2", "Task", subagent_type="scribe", prompt="write the log")
    bash = tool_use("t3", "Bash", command="git add -A && git commit -m 'close'")
    write(proj / f"{S1}.jsonl", [
        user(S1, D1 + "00:00.000Z"),
        assistant(S1, D1 + "00:05.000Z", "m1", "r1", usage(10, 1, 1000, 20000, cw1h=400)),
        assistant(S1, D1 + "00:06.000Z", "m1", "r1", usage(10, 50, 1000, 20000, cw1h=400),
                  content=[read]),
        user(S1, D1 + "00:07.000Z", results=[("t1", "x" * 800)]),
        assistant(S1, D1 + "10:00.000Z", "m2", "r2", usage(5, 20, 0, 30000), content=[task]),
        progress(S1, D1 + "11:00.000Z", "a1", "t2", "m3", "r3", usage(100, 10)),
        assistant(S1, D1 + "30:00.000Z", "m4", "r4", usage(1, 2, 100, 40000), content=[bash]),
        {"type": "system", "subtype": "compact_boundary", "sessionId": S1,
         "timestamp": D1 + "31:00.000Z", "compactMetadata": {"trigger": "auto",
                                                             "preTokens": 150000}},
        assistant(S1, D1 + "40:00.000Z", "m5", None, usage(7, 3)),
        assistant(S1, D1 + "41:00.000Z", "m5", None, usage(7, 9)),
        # valid JSON written with spaces (ccusage drops such lines; brainlab must not)
        json.dumps(assistant(S1, D1 + "50:00.000Z", "m6", "r6", usage(2, 4, 0, 10000))),
        user(S1, D1 + "55:00.000Z", results=[("t9", "done")],
             tool_use_result={"agentId": "b2", "agentType": "Explore", "status": "completed"}),
    ])
    sub = proj / S1 / "subagents"
    write(sub / "agent-a1.jsonl", [
        assistant(S1, D1 + "11:30.000Z", "m3", "r3", usage(100, 10), agent="a1",
                  sidechain=True, model="claude-haiku-4-5-20251001"),
        assistant(S1, D1 + "12:00.000Z", "m7", "r7", usage(50, 5, 200, 0), agent="a1",
                  sidechain=True, content=[tool_use("t4", "Grep", pattern="TODO", path="src")]),
    ])
    (sub / "agent-a1.meta.json").write_text(json.dumps({"agentType": "scribe"}))
    # older layout: project-level agent file naming its parent session; next UTC day
    write(proj / "agent-b2.jsonl", [
        assistant(S1, "2026-03-03T00:30:00.000Z", "m8", "r8", usage(3, 3), agent="b2",
                  sidechain=True, model="claude-sonnet-4-5-20250929"),
    ])
    write(root / "projects" / "-home-u-projets-beta" / f"{S2}.jsonl", [
        assistant(S2, "2026-03-03T10:00:00.000Z", "m9", "r9", usage(1000), model="mystery-model-1",
                  cwd="/home/u/projets/beta"),
    ])
    return root


@pytest.fixture
def db(tmp_path):
    root = build_tree(tmp_path / "cfg")
    con = open_writer(tmp_path / "b.duckdb")
    summary = ingest_claude(con, root)
    yield con, summary, root
    con.close()


def test_daily_totals_deduplicated_by_hand(db):
    con, _, _ = db
    rows = con.execute("SELECT CAST(day AS VARCHAR), input_tokens, output_tokens,"
                       " cache_creation_tokens, cache_read_tokens, requests, unpriced_requests"
                       " FROM usage_daily ORDER BY day").fetchall()
    assert rows == [("2026-03-02", 175, 100, 1300, 100000, 7, 0),
                    ("2026-03-03", 1003, 3, 0, 0, 2, 1)]


def test_costs_by_hand_and_unknown_model_reported(db):
    con, summary, _ = db
    costs = dict(con.execute("SELECT CAST(day AS VARCHAR), cost_usd FROM usage_daily").fetchall())
    # m1 19050 + m2 15525 + m3 150 + m4 20680 + m5 260 + m6 5110 + m7 1625 (USD x 1e6)
    assert costs["2026-03-02"] == pytest.approx(0.0624)
    assert costs["2026-03-03"] == pytest.approx(0.000054)  # m8 only; m9 has no price
    assert summary.unpriced_models == ["mystery-model-1"]
    assert con.execute("SELECT cost_usd FROM cc_requests WHERE message_id = 'm9'").fetchone() \
        == (None,)
    m1 = con.execute("SELECT output_tokens, cache_creation_5m_tokens, cache_creation_1h_tokens,"
                     " cost_usd FROM cc_requests WHERE message_id = 'm1'").fetchone()
    assert m1[:3] == (50, 600, 400) and m1[3] == pytest.approx(0.01905)


def test_user_price_file_overrides(db, tmp_path):
    con, _, root = db
    prices = tmp_path / "p.toml"
    prices.write_text('as_of = "2026-01-01"\n[models."mystery-model-1"]\ninput = 2.0\n'
                      'output = 1.0\ncache_write_5m = 1.0\ncache_read = 1.0\n')
    summary = ingest_claude(con, root, prices=prices)
    assert summary.unpriced_models == []
    assert con.execute("SELECT cost_usd FROM cc_requests WHERE message_id = 'm9'").fetchone()[0] \
        == pytest.approx(0.002)


def test_subagents_of_every_layout(db):
    con, _, _ = db
    rows = con.execute("SELECT message_id, agent_id, subagent_type FROM cc_requests"
                       " ORDER BY message_id").fetchall()
    assert rows == [("m1", None, None), ("m2", None, None), ("m3", "a1", "scribe"),
                    ("m4", None, None), ("m5", None, None), ("m6", None, None),
                    ("m7", "a1", "scribe"), ("m8", "b2", "Explore"), ("m9", None, None)]
    # m3 seen twice (progress line in the parent, and the subagent file): counted once
    assert con.execute("SELECT count(*) FROM cc_request_lines WHERE message_id = 'm3'"
                       ).fetchone()[0] == 2


def test_sessions_follow_spec_mapping(db):
    con, _, _ = db
    row = con.execute(
        "SELECT CAST(started_at AS VARCHAR), duration_min, project, context_peak_pct,"
        " context_at_close, tokens_used, commits, compactions, main_requests,"
        " subagent_requests FROM cc_sessions WHERE session_id = ?", [S1]).fetchone()
    # main chain 09:00 -> 09:55; peak m4 = 1 + 100 + 40000; close m6 = 2 + 10000
    assert row == ("2026-03-02 09:00:00", 55.0, "alpha", 20.1, 5.0, 10002, 1, 1, 5, 3)
    shaped = con.execute("SELECT sess_id, source, tokens_used, type FROM transcript_sessions"
                         " ORDER BY sess_id").fetchall()
    assert shaped == [(S1, "transcript", 10002.0, None), (S2, "transcript", 1000.0, None)]


def test_tool_calls_and_agent_loads(db):
    con, _, _ = db
    calls = con.execute("SELECT tool, agent_id, subagent_type, file_path, pattern,"
                        " launched_subagent_type, is_git_commit, result_bytes FROM cc_tool_calls"
                        " ORDER BY ts").fetchall()
    assert calls == [
        ("Read", None, None, "/home/u/brain/agents/helloWorld.md", None, None, False, 800),
        ("Task", None, None, None, None, "scribe", False, None),
        ("Grep", "a1", "scribe", "src", "TODO", None, False, None),
        ("Bash", None, None, None, None, None, True, None),
    ]
    loads = con.execute("SELECT agent, tokens_estimated, tokens_measured FROM"
                        " transcript_agent_loads ORDER BY agent").fetchall()
    assert loads == [("Explore", None, 6), ("helloWorld", 200.0, None), ("scribe", None, 365)]
    assert con.execute("SELECT kind, trigger, pre_tokens FROM cc_compactions").fetchall() == [
        ("compact_boundary", "auto", 150000)]


def test_weekly_and_models_views(db):
    con, _, _ = db
    assert con.execute("SELECT iso_year, iso_week, CAST(week_start AS VARCHAR), total_tokens"
                       " FROM usage_weekly").fetchall() == [
        (2026, 10, "2026-03-02", 175 + 100 + 1300 + 100000 + 1003 + 3)]
    models = dict(con.execute("SELECT model, requests FROM usage_models").fetchall())
    assert models == {"claude-opus-4-5-20251101": 6, "claude-haiku-4-5-20251001": 1,
                      "claude-sonnet-4-5-20250929": 1, "mystery-model-1": 1}


def test_the_callers_duckdb_threads_setting_is_restored(tmp_path):
    """The ingest writes with one DuckDB thread (its workers hold the cores), then restores."""
    root = build_tree(tmp_path / "cfg")
    con = open_writer(tmp_path / "t.duckdb")
    try:
        con.execute("SET threads = 3")
        ingest_claude(con, root)
        assert con.execute("SELECT current_setting('threads')").fetchone()[0] == 3
    finally:
        con.close()
