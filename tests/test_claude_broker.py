"""Context-broker blocks in transcripts -> broker rows -> sprints (issue 4 §1a, SPEC §7, §4.2-4.3).

Every expected value is computed by hand from the lines written below.
"""

import json
import os

from claude_factory import assistant, tool_use, usage, user, write

from brainlab.sim.transcript_sprints import transcript_inputs
from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude

S = "33333333-cccc"
D = "2026-03-02T10:"
REPO = "/home/u/projets/alpha"
INHALE = """Je prépare le sprint.

Context-broker — inhale sprint alpha-auth-1

Projet détecté : alpha
Mode           : sprint

Source map :
  developer → ["auth.routes.ts", "auth.middleware.ts"]
  reviewer → []   ← contexte boot suffisant

Exclusions explicites :
  "Video.ts" — tentant mais hors domaine sprint

→ Passer à tech-lead gate.
"""
EXPIRE = """Context-broker — expire sprint alpha-auth-1

Release map :
  LIBÉRER : ["auth.middleware.ts"]
  GARDER  : ["auth.routes.ts"] — auth TODO encore ouverte

Breath metrics :
  context_load : 1.0
  stale_ratio  : 0%
  breath_depth : +1
  exhale_rate  : 50%

→ Signal metabolism-scribe si seuil atteint.
"""
# The format template as the broker's own definition prints it: read, never a block.
TEMPLATE = """Format de sortie — inhale

Context-broker — inhale sprint <nom>

Projet détecté : <id>
Source map :
  <agent-1> → ["<fichier-A>", "<fichier-B>"]

Context-broker — expire sprint <nom>

Release map :
  LIBÉRER : ["<fichier-A>"]
  GARDER  : ["<fichier-C>"] — <raison>

Breath metrics :
  context_load : X.X
"""


def text(content):
    return [{"type": "text", "text": content}]


def build(root, with_expire=True):
    proj = root / "projects" / "-home-u-projets-alpha"
    u = usage(3, 10, 0, 1000)
    main = [
        user(S, D + "00:00.000Z"),
        # before the inhale block: outside the sprint
        assistant(S, D + "00:30.000Z", "m0", "r0", u, content=[
            tool_use("t0", "Read", file_path=f"{REPO}/src/auth/early.ts")]),
        # a recorded block read back by a tool: not the broker speaking now, never scanned
        user(S, D + "00:31.000Z", results=[("t0", EXPIRE)]),
        assistant(S, D + "01:00.000Z", "m1", "r1", u, content=text(TEMPLATE + INHALE)),
        assistant(S, D + "02:00.000Z", "m2", "r2", u, content=[
            tool_use("t1", "Task", subagent_type="developer", prompt="p")]),
        user(S, D + "10:00.000Z", results=[("t1", "done")],
             tool_use_result={"agentId": "a1", "status": "completed"}),
        assistant(S, D + "11:00.000Z", "m3", "r3", u, content=[
            tool_use("t2", "Task", subagent_type="reviewer", prompt="p")]),
        user(S, D + "20:00.000Z", results=[("t2", "done")],
             tool_use_result={"agentId": "a2", "status": "completed"}),
        assistant(S, D + "25:00.000Z", "m4", "r4", u, content=[
            tool_use("t3", "Task", subagent_type="context-broker", prompt="expire")]),
    ]
    if with_expire:  # the broker subagent's answer comes back as the Task's tool_result
        main += [
            user(S, D + "30:00.000Z", results=[("t3", text(EXPIRE))],
                 tool_use_result={"status": "completed", "totalDurationMs": 9000}),
            # after the expire block: outside the sprint
            assistant(S, D + "40:00.000Z", "m5", "r5", u, content=[
                tool_use("t4", "Read", file_path=f"{REPO}/src/auth/late.ts")]),
        ]
    write(proj / f"{S}.jsonl", main)
    sub = proj / S / "subagents"
    write(sub / "agent-a1.jsonl", [
        assistant(S, D + "03:00.000Z", "s1", "q1", u, agent="a1", sidechain=True, content=[
            tool_use("u1", "Read", file_path=f"{REPO}/src/auth/auth.routes.ts")]),
        assistant(S, D + "04:00.000Z", "s2", "q2", u, agent="a1", sidechain=True, content=[
            tool_use("u2", "Edit", file_path=f"{REPO}/src/auth/auth.routes.ts",
                     old_string="a", new_string="b")]),
        assistant(S, D + "05:00.000Z", "s3", "q3", u, agent="a1", sidechain=True, content=[
            tool_use("u3", "Grep", pattern="token", path=f"{REPO}/src/auth/auth.middleware.ts")]),
        assistant(S, D + "06:00.000Z", "s4", "q4", u, agent="a1", sidechain=True, content=[
            tool_use("u4", "Write", file_path=f"{REPO}/tests/auth.test.ts", content="x")]),
    ])
    (sub / "agent-a1.meta.json").write_text(json.dumps({"agentType": "developer"}))
    write(sub / "agent-a2.jsonl", [
        assistant(S, D + "12:00.000Z", "s5", "q5", u, agent="a2", sidechain=True, content=[
            tool_use("u5", "Read", file_path=f"{REPO}/src/auth/auth.routes.ts")]),
        assistant(S, D + "13:00.000Z", "s6", "q6", u, agent="a2", sidechain=True, content=[
            tool_use("u6", "Glob", pattern="*.ts", path=f"{REPO}/src/auth")]),
    ])
    (sub / "agent-a2.meta.json").write_text(json.dumps({"agentType": "reviewer"}))
    return proj / f"{S}.jsonl"


def test_blocks_in_transcripts_cut_the_sprint(tmp_path):
    main_file = build(tmp_path)
    con = open_writer(tmp_path / "b.duckdb")
    summary = ingest_claude(con, tmp_path)
    assert summary.errors == 0  # the template's "X.X" metric is not an error: not a block
    blocks = con.execute("SELECT kind, sprint, project, mode, reason, stale_ratio, exhale_rate,"
                         " breath_depth, CAST(ts AS VARCHAR), session_id, agent_id, source_file,"
                         " line FROM broker_blocks ORDER BY line").fetchall()
    f = str(main_file.resolve())
    assert blocks == [
        ("inhale", "alpha-auth-1", "alpha", "sprint", None, None, None, None,
         "2026-03-02 10:01:00", S, None, f, 4),
        ("expire", "alpha-auth-1", None, None, "auth TODO encore ouverte", 0.0, 0.5, 1,
         "2026-03-02 10:30:00", S, None, f, 10),
    ]
    files = con.execute("SELECT agent, path, action FROM broker_block_files"
                        " ORDER BY line, action, agent, path").fetchall()
    assert sorted(files, key=str) == sorted([
        ("developer", None, "agent"), ("reviewer", None, "agent"),
        ("developer", "auth.routes.ts", "load"), ("developer", "auth.middleware.ts", "load"),
        (None, "Video.ts", "exclude"),
        (None, "auth.middleware.ts", "libérer"), (None, "auth.routes.ts", "garder"),
    ], key=str)
    agents, refs = transcript_inputs(con)
    con.close()
    rows = {r.agent: r for r in agents.itertuples()}
    assert set(rows) == {"developer", "reviewer"}  # the main chain made no call in the span
    for r in rows.values():
        assert (r.sprint_id, r.project, r.session_id) == ("alpha-auth-1", "alpha", S)
        assert (str(r.started_at), str(r.ended_at)) == ("2026-03-02 10:01:00",
                                                        "2026-03-02 10:30:00")
    assert sorted(rows["developer"].loaded) == ["auth.middleware.ts", "auth.routes.ts"]
    assert list(rows["reviewer"].loaded) == []
    assert list(rows["developer"].released) == ["auth.middleware.ts"]
    got = set(refs.itertuples(index=False, name=None))
    auth = f"{REPO}/src/auth"
    assert got == {  # early.ts (before the inhale) and late.ts (after the expire) are out
        ("alpha-auth-1", "developer", f"{auth}/auth.routes.ts", "read"),
        ("alpha-auth-1", "developer", f"{auth}/auth.routes.ts", "edit"),
        ("alpha-auth-1", "developer", f"{auth}/auth.middleware.ts", "search"),
        ("alpha-auth-1", "developer", f"{REPO}/tests/auth.test.ts", "write"),
        ("alpha-auth-1", "reviewer", f"{auth}/auth.routes.ts", "read"),
        ("alpha-auth-1", "reviewer", auth, "search"),
    }


def test_blocks_load_once_across_tails_and_reruns(tmp_path):
    build(tmp_path, with_expire=False)
    con = open_writer(tmp_path / "b.duckdb")
    ingest_claude(con, tmp_path)
    count = "SELECT kind, count(*) FROM broker_blocks GROUP BY kind ORDER BY kind"
    assert con.execute(count).fetchall() == [("inhale", 1)]
    files = {p: (p.read_bytes(), p.stat()) for p in tmp_path.rglob("*.jsonl")}
    build(tmp_path, with_expire=True)  # the session went on: same head, a longer file
    for path, (data, stat) in files.items():  # the others untouched (a file written again,
        if path.read_bytes() == data:  # even with the same bytes, is read again: issue 29)
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert ingest_claude(con, tmp_path).read == 1  # only the main file grew
    assert con.execute(count).fetchall() == [("expire", 1), ("inhale", 1)]
    assert ingest_claude(con, tmp_path).read == 0  # nothing new: nothing added twice
    assert con.execute(count).fetchall() == [("expire", 1), ("inhale", 1)]
    assert con.execute("SELECT count(*) FROM broker_block_files").fetchone()[0] == 7
    assert con.execute("SELECT count(DISTINCT block_id) FROM broker_blocks").fetchone()[0] == 2
    con.close()


def test_malformed_block_is_an_error_row_without_its_text(tmp_path):
    bad = ("Context-broker — inhale sprint alpha-bad-1\n\nProjet détecté : alpha\n\n"
           "Source map :\n  developer [\"sk-ant-api03-SECRETSECRETSECRET\"]\n")
    path = write(tmp_path / "projects" / "-p" / f"{S}.jsonl", [
        user(S, D + "00:00.000Z"),
        assistant(S, D + "01:00.000Z", "m1", "r1", usage(1, 1),
                  content=[{"type": "text", "text": "ok"}, {"type": "text", "text": bad}]),
    ])
    con = open_writer(tmp_path / "b.duckdb")
    ingest_claude(con, tmp_path)
    errors = con.execute("SELECT file, line, reason, source, severity FROM ingest_errors"
                         " ORDER BY reason").fetchall()
    assert con.execute("SELECT count(*) FROM broker_blocks").fetchone()[0] == 0
    con.close()
    assert [(e[0], e[1], e[3], e[4]) for e in errors] == [(str(path.resolve()), 2, "claude",
                                                           "error")] * 2
    reasons = [e[2] for e in errors]
    assert "has no source map: skipped" in reasons[0]
    assert "cannot read line (line 6 of the message text)" in reasons[1]
    assert not any("SECRET" in r or "sk-ant" in r for r in reasons)


def test_only_subagent_answers_are_scanned_among_tool_results():
    from brainlab.transcripts.broker import marked, subagent_answer

    assert subagent_answer({"toolUseResult": {"agentId": "a1", "status": "completed"}})
    assert subagent_answer({"toolUseResult": {"totalDurationMs": 10, "content": []}})  # older
    assert not subagent_answer({"toolUseResult": {"stdout": "Context-broker", "stderr": ""}})
    assert not subagent_answer({"toolUseResult": "Error: no such file"})
    assert not subagent_answer({})
    assert marked("Context-broker — inhale sprint x") and marked("Context-Broker")
    assert not marked("nothing here") and not marked(None)
