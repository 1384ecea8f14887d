"""Counting rules 1-7 of issue 45 (docs/transcripts.md, "Counting rules (issue 45)").

Claude Code's newer transcripts: advisor iterations, two request ids of one message, resumed
sessions, API-error lines, workflow subagents, attribution on the line, peers' names. Each
case is a crafted transcript (tests/claude_factory.py) of the shape another tool's tests or
the issue describe; each failed on main before the rule. The incremental roll-up must give
the views' figures under every rule (assert_rollup_matches_views).
"""

import json

import pytest
from claude_factory import advisor, assistant, usage, user, write
from test_usage_rollup import assert_rollup_matches_views

from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude

S = "3f1c9a2e-0b7d-4c55-9e21-6a8d2b4f7c10"  # a session id as Claude Code writes it
R = "9e8d7c6b-5a49-4382-a1b0-c9d8e7f6a5b4"  # the resumed one (sorts after S)
DAY = "2026-11-29T07:{:02d}:00.000Z"
PROJECT = "-home-u-alpha"


def ingest(tmp_path, con=None):
    con = con or open_writer(tmp_path / "b.duckdb")
    ingest_claude(con, tmp_path / "projects", workers=1)
    return con


def calls(con, columns="message_id, model, input_tokens, output_tokens, cache_read_tokens"):
    return con.execute(f"SELECT {columns} FROM cc_requests ORDER BY ALL").fetchall()


def with_iterations(u, *entries):
    """A usage block holding ``iterations`` (the first entry is the executor's own)."""
    return {**u, "iterations": [{"type": "message", "input_tokens": u["input_tokens"],
                                 "output_tokens": u["output_tokens"]}, *entries]}


# --- rule 1: advisor iterations ------------------------------------------------------------
def test_an_advisor_iteration_is_a_call_of_its_own_priced_at_its_model(tmp_path):
    """An ``advisor_message`` entry of usage.iterations is a separate call to its own model,
    id ``<message.id>:advisor:<i>`` (the issue's case: 1,200 input, 18,000 cache-read and 350
    output tokens went missing); two streaming copies of the line still give two calls."""
    u = with_iterations(usage(10, 20, 0, 300), advisor("claude-opus-4-8", 1200, 350, 0, 18000))
    line = assistant(S, DAY.format(0), "msg_exec", "req_1", u, model="claude-sonnet-4-6")
    write(tmp_path / "projects" / PROJECT / f"{S}.jsonl", [line, line])
    con = ingest(tmp_path)
    assert calls(con) == [("msg_exec", "claude-sonnet-4-6", 10, 20, 300),
                          ("msg_exec:advisor:1", "claude-opus-4-8", 1200, 350, 18000)]
    cost = con.execute("SELECT cost_usd FROM cc_requests WHERE model = 'claude-opus-4-8'"
                       ).fetchone()[0]
    assert cost == pytest.approx((1200 * 5 + 350 * 25 + 18000 * 0.5) / 1e6)  # Opus 4.8 rates
    assert_rollup_matches_views(con)


def test_an_advisor_iteration_without_a_model_keeps_the_line_and_its_tokens(tmp_path):
    """``"model": null`` in iterations[] (Claude Code 2.1.266+) drops nothing: the model is
    the line's ``advisorModel``, else none (unpriced and listed, never a guessed price)."""
    project = tmp_path / "projects" / PROJECT
    named = with_iterations(usage(1, 2), advisor(None, 100, 10))
    unnamed = with_iterations(usage(3, 4), advisor(None, 200, 20))
    write(project / f"{S}.jsonl", [
        assistant(S, DAY.format(0), "m1", "r1", named, advisorModel="claude-opus-4-8"),
        assistant(S, DAY.format(1), "m2", "r2", unnamed)])
    con = ingest(tmp_path)
    assert calls(con, "message_id, model, input_tokens") == [
        ("m1", "claude-opus-4-5-20251101", 1), ("m1:advisor:1", "claude-opus-4-8", 100),
        ("m2", "claude-opus-4-5-20251101", 3), ("m2:advisor:1", None, 200)]
    assert con.execute("SELECT count(*) FROM cc_unpriced_models").fetchone() == (1,)


def test_the_tolerant_decoder_reads_advisor_iterations_as_the_typed_one(tmp_path):
    """A line the typed decoder refuses (a count written as text) reads its advisor entry
    the same way through the tolerant decoder."""
    u = with_iterations(usage(10, 20), advisor("claude-opus-4-8", 1200, 350, 0, 18000))
    odd = json.loads(json.dumps(u))
    odd["input_tokens"] = "10"  # repaired to 10 with a warning
    project = tmp_path / "projects" / PROJECT
    write(project / f"{S}.jsonl", [assistant(S, DAY.format(0), "m1", "r1", odd)])
    con = ingest(tmp_path)
    assert calls(con) == [("m1", "claude-opus-4-5-20251101", 10, 20, 0),
                          ("m1:advisor:1", "claude-opus-4-8", 1200, 350, 18000)]


# --- rule 2: two request ids of one message ------------------------------------------------
def test_one_message_id_under_two_request_ids_in_the_main_chain_is_two_calls(tmp_path):
    """Two main-chain lines with one message.id and two requestIds are two API calls (two
    peers' suites); the /btw replay (a side file) still merges into its parent's call."""
    project = tmp_path / "projects" / PROJECT
    write(project / f"{S}.jsonl", [
        assistant(S, DAY.format(0), "msg_1", "req_a", usage(5, 10, 0, 100)),
        assistant(S, DAY.format(1), "msg_1", "req_b", usage(7, 20, 0, 200))])
    write(project / S / "subagents" / "agent-aside.jsonl", [
        assistant(S, DAY.format(2), "msg_1", "req_a", usage(5, 10, 0, 50_000), sidechain=True,
                  agent="aside")])
    con = ingest(tmp_path)
    assert calls(con, "request_id, agent_id, output_tokens, cache_read_tokens") == [
        ("req_a", None, 10, 100), ("req_b", None, 20, 200)]  # before: one call
    assert_rollup_matches_views(con)


def test_the_survivor_is_the_larger_copy_then_the_larger_cost(tmp_path):
    """Copies of one call that differ: the larger token total survives even when it is the
    earlier line (before: the latest line); equal totals: the larger reported cost."""
    project = tmp_path / "projects" / PROJECT
    write(project / f"{S}.jsonl", [
        assistant(S, DAY.format(0), "m1", "r1", usage(5, 90, 0, 100)),
        assistant(S, DAY.format(1), "m1", "r1", usage(5, 10, 0, 100)),
        {**assistant(S, DAY.format(2), "m2", "r2", usage(1, 1)), "costUSD": 0.5},
        {**assistant(S, DAY.format(3), "m2", "r2", usage(1, 1)), "costUSD": 0.2}])
    con = ingest(tmp_path)
    assert calls(con, "message_id, output_tokens, reported_cost_usd") == [
        ("m1", 90, None), ("m2", 1, 0.5)]
    assert_rollup_matches_views(con)


# --- rule 3: resumed sessions --------------------------------------------------------------
@pytest.mark.parametrize("later", [False, True], ids=["same-time", "later-copy"])
def test_a_resumed_session_leaves_the_repeated_call_in_the_original(tmp_path, later):
    """A resumed session repeats a call (same message.id and requestId) in a second main
    file under a new sessionId: the call belongs to the original session (its earliest copy),
    the new calls to the resumed one."""
    project = tmp_path / "projects" / PROJECT
    first = assistant(S, DAY.format(0), "m1", "r1", usage(5, 10, 0, 100))
    write(project / f"{S}.jsonl", [first])
    copy = {**first, "sessionId": R, "timestamp": DAY.format(30) if later else first["timestamp"]}
    write(project / f"{R}.jsonl", [copy, assistant(R, DAY.format(40), "m2", "r2", usage(1, 2))])
    con = ingest(tmp_path)
    assert calls(con, "message_id, session_id") == [("m1", S), ("m2", R)]  # before: m1 in R
    assert con.execute("SELECT session_id, requests FROM usage_sessions ORDER BY 1"
                       ).fetchall() == [(S, 1), (R, 1)]
    assert_rollup_matches_views(con)


# --- rule 4: API-error lines ---------------------------------------------------------------
def test_api_error_lines_are_no_calls_and_make_no_model_row(tmp_path):
    """``model: "<synthetic>"`` lines (Claude Code's own API-error messages, no tokens) are no
    API call: no request row, no model row, not listed as unpriced."""
    project = tmp_path / "projects" / PROJECT
    write(project / f"{S}.jsonl", [
        assistant(S, DAY.format(0), "m1", "r1", usage(5, 10)),
        assistant(S, DAY.format(1), "e1", None, usage(), model="<synthetic>",
                  isApiErrorMessage=True)])
    con = ingest(tmp_path)
    assert calls(con, "message_id") == [("m1",)]  # before: e1 too
    assert con.execute("SELECT model FROM usage_models").fetchall() == [
        ("claude-opus-4-5-20251101",)]
    assert con.execute("SELECT count(*) FROM cc_model_prices WHERE model = '<synthetic>'"
                       ).fetchone() == (0,)


# --- rule 5: workflow subagents ------------------------------------------------------------
def test_workflow_subagents_belong_to_their_session_and_type(tmp_path):
    """``<session>/subagents/workflows/<wf>/agent-*.jsonl`` with ``.meta.json``: the calls
    are the workflow subagent's, in its session, typed by its meta file (before: a line
    without sessionId had no session, and the type was unknown)."""
    project = tmp_path / "projects" / PROJECT
    write(project / f"{S}.jsonl", [assistant(S, DAY.format(0), "m1", "r1", usage(1, 1))])
    folder = project / S / "subagents" / "workflows" / "wf-review"
    no_session = assistant(S, DAY.format(1), "m2", "r2", usage(2, 2), agent="w1", sidechain=True)
    del no_session["sessionId"]
    write(folder / "agent-w1.jsonl", [
        no_session,
        assistant(S, DAY.format(2), "m3", "r3", usage(3, 3), agent="w1", sidechain=True)])
    (folder / "agent-w1.meta.json").write_text('{"agentType": "reviewer"}')
    con = ingest(tmp_path)
    assert calls(con, "message_id, session_id, agent_id, subagent_type") == [
        ("m1", S, None, None), ("m2", S, "w1", "reviewer"), ("m3", S, "w1", "reviewer")]
    assert_rollup_matches_views(con)


# --- rule 6: attribution and origin on the line --------------------------------------------
def test_plugin_and_skill_attribution_are_kept_per_call(tmp_path):
    """``attributionPlugin`` / ``attributionSkill`` on assistant lines name what the call
    worked for; they follow the call's surviving copy and its advisor iterations."""
    project = tmp_path / "projects" / PROJECT
    u = with_iterations(usage(1, 1), advisor("claude-opus-4-8", 10, 1))
    write(project / f"{S}.jsonl", [
        assistant(S, DAY.format(0), "m1", "r1", u, attributionPlugin="gns-cowork",
                  attributionSkill="gns-cowork:gns-bootstrap"),
        assistant(S, DAY.format(1), "m2", "r2", usage(2, 2), attributionSkill="pdf"),
        assistant(S, DAY.format(2), "m3", "r3", usage(3, 3))])
    con = ingest(tmp_path)
    assert calls(con, "message_id, plugin, skill") == [
        ("m1", "gns-cowork", "gns-cowork:gns-bootstrap"),
        ("m1:advisor:1", "gns-cowork", "gns-cowork:gns-bootstrap"),
        ("m2", None, "pdf"), ("m3", None, None)]


@pytest.mark.parametrize(("kind", "prompts"), [("human", 1), ("task-notification", 0),
                                               (None, 1)])
def test_origin_kind_tells_typed_prompts_from_automatic_ones(tmp_path, kind, prompts):
    """A user line's ``origin.kind``: "human" is a typed prompt (its ``brain <type>``
    keywords count, SPEC §2.7); any other kind is automatic (before: read as typed); no
    origin (older versions) stays a prompt."""
    fields = {} if kind is None else {"origin": {"kind": kind}}
    project = tmp_path / "projects" / PROJECT
    write(project / f"{S}.jsonl", [user(S, DAY.format(0), "brain work", **fields),
                                   assistant(S, DAY.format(1), "m1", "r1", usage(1, 1))])
    con = ingest(tmp_path)
    assert con.execute("SELECT count(*) FROM cc_marks WHERE kind = 'prompt'"
                       " AND keyword_type = 'work'").fetchone() == (prompts,)


def test_sessions_are_named_by_their_own_id_with_the_project_apart(tmp_path):
    """Rule 7: `usage sessions` names a session by its own id (ccusage's sessionId), the
    project in its own column, never `<project folder>/<name>`; two folders' `shared.jsonl`
    without sessionId stay two sessions (rule 5), each with its own tokens."""
    from brainlab.metrics.usage import usage_table

    for folder, cwd, n in (("-home-u-a", "/home/u/a", 1), ("-home-u-b", "/home/u/b", 2)):
        line = assistant(S, DAY.format(n), f"m{n}", f"r{n}", usage(10 * n, 1), cwd=cwd)
        del line["sessionId"]
        write(tmp_path / "projects" / folder / "shared.jsonl", [line])
    write(tmp_path / "projects" / PROJECT / f"{S}.jsonl",
          [assistant(S, DAY.format(5), "m5", "r5", usage(5, 1))])
    ingest(tmp_path).close()
    table = usage_table(tmp_path / "b.duckdb", "sessions")
    rows = [dict(zip(table.columns, row, strict=True)) for row in table.rows]
    named = [(r["session_id"], r["project"], r["input_tokens"]) for r in rows]
    assert named == [("shared", "a", 10), ("shared", "b", 20), (S, "alpha", 5)]
