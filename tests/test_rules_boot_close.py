"""Boot, close-sequence and read-rights rules (models/rules/rule_rows_boot_close.sql) on crafted cases.

Each test writes a small brain (session contexts, workspaces) and small Claude Code transcripts
in the real line shapes, ingests the transcripts with the real ``ingest_claude`` into a DuckDB
file and runs the real ``brainlab check --db``: one session breaks the rule, a near miss does
not, and the rule names exactly the first.
"""

from __future__ import annotations

import json

import pytest
from conftest import ingest_brain, ingest_transcripts, query, write

from brainlab.rules.catalogue import BY_ID
from brainlab.rules.check import check
from brainlab.rules.formats import text
from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude

BRAIN = "/home/u/brain"
CONTEXT = ("session_type: {type}\nL0:\n  - PATHS.md\n  - KERNEL.md\nL1:\n  - now.md\n"
           "  - agents/scribe.md\n{l2}context_target:\n  total_boot: \"~{target}%\"\n")


@pytest.fixture
def brain(tmp_path):
    """A brain with work (L2 project template), brain and explore contexts."""
    root = tmp_path / "brain"
    l2 = 'L2:\n  template: "projets/{project}.md"\n  extras:\n    - "todo/{project}.md"\n'
    write(root, "contexts/session-work.yml", CONTEXT.format(type="work", l2=l2, target=28))
    write(root, "contexts/session-brain.yml", CONTEXT.format(
        type="brain", l2="L2:\n  extras:\n    - todo/brain.md\n", target=22))
    write(root, "contexts/session-explore.yml", CONTEXT.format(type="explore", l2="",
                                                               target=18))
    return root


class Transcript:
    """One main chain written step by step: prompts and tool calls, one minute apart."""

    def __init__(self, session: str, prompt: str):
        self.session, self.lines, self.n = session, [], 0
        self.prompt(prompt)

    def _ts(self) -> str:
        self.n += 1
        return f"2026-03-05T{8 + self.n // 60:02d}:{self.n % 60:02d}:00.000Z"

    def prompt(self, text_: str) -> Transcript:
        self.lines.append({"type": "user", "sessionId": self.session, "timestamp": self._ts(),
                           "cwd": BRAIN, "uuid": f"{self.session}-p{self.n}",
                           "message": {"role": "user", "content": text_}})
        return self

    def call(self, name: str, context: int = 20_000, **args) -> Transcript:
        ts, i = self._ts(), self.n
        tool_id = f"t-{self.session}-{i}"
        self.lines.append({
            "type": "assistant", "sessionId": self.session, "timestamp": ts, "cwd": BRAIN,
            "uuid": f"{self.session}-a{i}", "requestId": f"r-{self.session}-{i}",
            "message": {"id": f"m-{self.session}-{i}", "role": "assistant",
                        "model": "claude-opus-4-5-20251101",
                        "content": [{"type": "tool_use", "id": tool_id, "name": name,
                                     "input": args}],
                        "usage": {"input_tokens": 3, "output_tokens": 50,
                                  "cache_creation_input_tokens": 1_000,
                                  "cache_read_input_tokens": context - 1_003}}})
        self.lines.append({"type": "user", "sessionId": self.session, "timestamp": ts,
                           "cwd": BRAIN, "uuid": f"{self.session}-r{i}",
                           "message": {"role": "user", "content": [
                               {"type": "tool_result", "tool_use_id": tool_id,
                                "content": "ok"}]}})
        return self

    def read(self, path: str, context: int = 20_000) -> Transcript:
        return self.call("Read", context, file_path=f"{BRAIN}/{path}")

    def edit(self, path: str, context: int = 20_000) -> Transcript:
        return self.call("Edit", context, file_path=f"{BRAIN}/{path}", old_string="a",
                         new_string="b")

    def launch(self, agent: str) -> Transcript:
        return self.call("Task", subagent_type=agent, description=agent, prompt="go")


def booted(session: str, type_: str = "work", context: int = 20_000) -> Transcript:
    """A session that reads its layer 0 and starts working (edits a project file)."""
    return (Transcript(session, f"brain {type_}").read("PATHS.md").read("KERNEL.md")
            .edit("src/app.py", context))


def closed(t: Transcript, agents=("metabolism-scribe", "todo-scribe", "scribe", "coach"),
           claim: bool = True) -> Transcript:
    """The SPEC §2.4 close after a 'fin' prompt: the agents in order, then the claim."""
    t.prompt("fin")
    for agent in agents:
        t.launch(agent)
    if claim:
        t.edit(f"claims/sess-{t.session}.yml")
    return t


def run(brain, tmp_path, rule: str, *transcripts: Transcript):
    """Ingest the transcripts (real ingest_claude) and check ``rule`` with --db."""
    db = ingest_transcripts(tmp_path, {t.session: t.lines for t in transcripts}, "t.duckdb")
    return check(brain, [rule], db=db)


def subjects(brain, tmp_path, rule, *transcripts) -> list[str]:
    return sorted(v.subject for v in run(brain, tmp_path, rule, *transcripts).violations)


def test_bot001_layer0_file_not_read_before_working(brain, tmp_path):
    late = (Transcript("late", "brain work").read("KERNEL.md").edit("src/app.py")
            .read("PATHS.md"))  # read, but after the first productive action
    assert subjects(brain, tmp_path, "BOT001", late, closed(booted("ok"))) == ["late"]


def test_bot001_judges_brain_sessions_only(brain, tmp_path):
    """Without `brain <type>`, a transcript is judged only when it names a claim of the brain."""
    sess = "sess-20260305-0800-work-x"
    write(brain, f"claims/{sess}.yml", f"sess_id: {sess}\ntype: work\nstatus: closed\n"
          'opened_at: "2026-03-05T08:00"\nclosed_at: "2026-03-05T09:00"\n')
    claimed = (Transcript("claimed", "fix the login bug").read("KERNEL.md").edit("src/app.py")
               .edit(f"claims/{sess}.yml"))
    plain = (Transcript("plain", "fix the login bug").read("KERNEL.md").edit("src/app.py")
             .edit("claims/sess-20260305-0900-work-nobody.yml"))  # no such claim: not judged
    result = run(brain, tmp_path, "BOT001", claimed, plain)
    assert [v.subject for v in result.violations] == [sess]
    assert result.violations[0].evidence["type"] == "work"  # the claim's type


def test_bot002_project_file_read_at_boot_outside_work(brain, tmp_path):
    explore = (Transcript("explore", "brain explore").read("PATHS.md").read("KERNEL.md")
               .read("projets/alpha.md").edit("notes/idea.py"))
    work = (Transcript("work", "brain work").read("PATHS.md").read("KERNEL.md")
            .read("projets/alpha.md").read("todo/alpha.md").edit("src/app.py"))
    listed = (Transcript("listed", "brain brain").read("PATHS.md").read("KERNEL.md")
              .read("todo/brain.md").edit("agents/x.md"))  # brain's own context lists it
    later = (Transcript("later", "brain explore").read("PATHS.md").read("KERNEL.md")
             .edit("notes/idea.py").read("projets/alpha.md"))  # after boot: on demand
    assert subjects(brain, tmp_path, "BOT002", explore, work, listed, later) == ["explore"]


def test_bot003_boot_context_over_target(brain, tmp_path):
    """work targets ~28% of 200k; tolerance 5 points: 70k (35%) fires, 60k (30%) does not."""
    heavy, light = booted("heavy", context=70_000), booted("light", context=60_000)
    result = run(brain, tmp_path, "BOT003", heavy, light)
    assert [v.subject for v in result.violations] == ["heavy"]
    assert result.violations[0].evidence["boot_pct"] == 35.0


def test_bot003_tolerance_is_a_macro_parameter(brain, tmp_path):
    db = tmp_path / "both.duckdb"
    ingest_brain(brain, db)
    t = booted("light", context=60_000)
    write(tmp_path, "claude/projects/-home-u-brain/light.jsonl",
          "".join(json.dumps(line) + "\n" for line in t.lines))
    con = open_writer(db)
    try:
        ingest_claude(con, tmp_path / "claude", workers=1)
    finally:
        con.close()
    assert len(query(db, "SELECT * FROM rule_bot003")) == 0
    assert list(query(db, "SELECT subject FROM rule_bot003_for(tolerance_pct := 1)").subject) \
        == ["light"]


def test_clo003_metabolism_scribe_not_first(brain, tmp_path):
    late = closed(booted("late"), ("todo-scribe", "metabolism-scribe", "scribe", "coach"))
    # near miss: the coach consulted after the last edit but before the 'fin' that starts
    # the close (without the trigger it would count as the first close agent)
    consulted = closed(booted("consulted").launch("coach"))
    assert subjects(brain, tmp_path, "CLO003", late, consulted) == ["late"]


def test_clo003_without_a_trigger_the_close_follows_the_last_productive_action(brain, tmp_path):
    t = booted("notrigger").launch("coach").edit("src/b.py")
    for agent in ("metabolism-scribe", "todo-scribe", "scribe", "coach"):
        t.launch(agent)
    t.edit("claims/sess-x.yml")
    never = booted("never").prompt("fin").launch("todo-scribe").edit("claims/sess-y.yml")
    assert subjects(brain, tmp_path, "CLO003", t, never) == ["never"]


def test_clo004_todo_scribe_missing_in_a_work_session(brain, tmp_path):
    work = closed(booted("work"), ("metabolism-scribe", "scribe", "coach"))
    explore = closed(booted("explore", "explore"), ("metabolism-scribe", "scribe"))
    assert subjects(brain, tmp_path, "CLO004", work, explore) == ["work"]


def test_clo005_scribe_missing_after_a_commit(brain, tmp_path):
    committed = closed(booted("committed").call("Bash", command="git commit -m 'x'"),
                       ("metabolism-scribe", "todo-scribe", "coach"))
    # near miss: only the BSI claim commit, which does not make a session significant
    quiet = closed(Transcript("quiet", "brain work").read("PATHS.md").read("KERNEL.md")
                   .call("Bash", command="git commit -m 'bsi: open claim'"),
                   ("metabolism-scribe", "todo-scribe", "coach"))
    spec = closed(Transcript("spec", "brain brain").read("PATHS.md").read("KERNEL.md")
                  .edit("profil/workspace-spec.md"), ("metabolism-scribe", "coach"))
    agent = closed(Transcript("agent", "brain brain").read("PATHS.md").read("KERNEL.md")
                   .edit("agents/spec-scribe.md"), ("metabolism-scribe", "coach"))  # near miss
    assert subjects(brain, tmp_path, "CLO005", committed, quiet, spec, agent) == [
        "committed", "spec"]


def test_clo006_coach_missing(brain, tmp_path):
    work = closed(booted("work"), ("metabolism-scribe", "todo-scribe", "scribe"))
    explore = closed(booted("explore", "explore"), ("metabolism-scribe", "scribe"))
    assert subjects(brain, tmp_path, "CLO006", work, explore) == ["work"]


def test_clo007_claim_closed_before_the_last_close_agent(brain, tmp_path):
    early = booted("early").prompt("fin").launch("metabolism-scribe").launch("todo-scribe")
    early.launch("scribe").edit("claims/sess-early.yml").launch("coach")
    never = closed(booted("never"), claim=False)
    bsi = closed(booted("bsi"), claim=False).call(
        "Bash", command='git commit -m "bsi: close claim sess-bsi"')  # near miss
    assert subjects(brain, tmp_path, "CLO007", early, never, bsi, closed(booted("ok"))) == [
        "early", "never"]


def workspace(brain, name: str, last_day: int) -> None:
    """A workspace whose sprint's last decision is 2026-03-<last_day> (ttl 7d)."""
    write(brain, f"workspace/{name}/README.md", "# ws\n\n## Lifecycle\nttl: 7d\narchive: keep\n")
    write(brain, f"workspace/{name}/log.md",
          f"2026-03-{last_day:02d} 10:00 | q? | choisi : a | raison : b\n")
    write(brain, f"workspace/{name}/ram.md", "# RAM\n")
    write(brain, f"workspace/{name}/feedback.md", "# Feedback\n")


def with_reader(session: str, reader: str, path: str, day: int = 5) -> list[Transcript]:
    """A brain session launching ``reader`` as a subagent that reads ``path`` (a 2nd file)."""
    main = closed(booted(session))
    launch = next(line for line in main.lines if line["type"] == "assistant"
                  and line["message"]["content"][0]["input"].get("subagent_type") == "scribe")
    tool_id = launch["message"]["content"][0]["id"]
    launch["message"]["content"][0]["input"]["subagent_type"] = reader
    for line in main.lines:
        line["timestamp"] = f"2026-03-{day:02d}" + line["timestamp"][10:]
        if line["type"] == "user" and isinstance(line["message"]["content"], list) and \
                line["message"]["content"][0].get("tool_use_id") == tool_id:
            line["toolUseResult"] = {"agentId": f"a{session}", "status": "completed"}
    sub = Transcript(f"{session}-sub", "x")  # its own ids
    sub.lines = []
    sub.call("Read", file_path=f"{BRAIN}/{path}")
    for line in sub.lines:
        line.update(agentId=f"a{session}", isSidechain=True, sessionId=session,
                    timestamp=f"2026-03-{day:02d}" + line["timestamp"][10:])
    sub.session = f"{session}/subagents/agent-a{session}"
    return [main, sub]


def test_wsp010_coach_scribe_reads_ram(brain, tmp_path):
    workspace(brain, "p-s1", 1)
    workspace(brain, "p-s2", 1)
    found = subjects(brain, tmp_path, "WSP010",
                     *with_reader("cs", "coach-scribe", "workspace/p-s1/ram.md"),
                     *with_reader("worker", "developer", "workspace/p-s2/ram.md"))  # near miss
    assert found == ["p-s1"]


def test_wsp011_coach_scribe_reads_feedback_before_the_ttl(brain, tmp_path):
    workspace(brain, "p-s1", 1)  # TTL expires on 2026-03-08
    workspace(brain, "p-s2", 1)
    found = subjects(brain, tmp_path, "WSP011",
                     *with_reader("early", "coach-scribe", "workspace/p-s1/feedback.md", 5),
                     *with_reader("after", "coach-scribe", "workspace/p-s2/feedback.md", 9))
    assert found == ["p-s1"]


def test_transcript_rules_are_named_when_no_db_is_given(brain):
    result = check(brain)
    assert "BOT001" in {r.id for r in result.not_evaluated}
    assert all(r.needs_transcripts for r in result.not_evaluated)
    assert not {r.id for r in result.rules} & {r.id for r in result.not_evaluated}
    assert text(result).startswith(f"{len(result.not_evaluated)} of "
                                   f"{len(result.not_evaluated) + len(result.rules)} rules not"
                                   " evaluated: they read transcripts (give --db DB): ")
    assert BY_ID["BOT001"].needs_transcripts and not BY_ID["CLO001"].needs_transcripts


def test_real_corpus_holds_no_brain_session_and_no_transcript_violation(corpus_store):
    """The public corpus (real Claude Code transcripts, no brain): nothing is judged."""
    assert len(query(corpus_store, "SELECT * FROM brain_transcript_sessions")) == 0
    rules = [r.id for r in BY_ID.values() if r.needs_transcripts]
    found = query(corpus_store, "SELECT rule FROM violations WHERE list_contains(?, rule)",
                  [rules])
    assert len(found) == 0


def test_cli_check_reports_the_transcript_rules_with_db(brain, tmp_path):
    """`brainlab check PATH --db DB`: the new rules' lines, exit 0 (warnings only)."""
    from click.testing import CliRunner

    from brainlab.cli import main

    late = Transcript("late", "brain work").read("KERNEL.md").edit("src/app.py")
    run(brain, tmp_path, "BOT001", late)  # writes and ingests the transcript into t.duckdb
    with_db = CliRunner().invoke(main, ["check", str(brain), "--db", str(tmp_path / "t.duckdb"),
                                        "--select", "BOT,CLO"])
    assert with_db.exit_code == 0, with_db.output
    assert "BOT001 [warning] late: work session did not read PATHS.md" in with_db.output
    without = CliRunner().invoke(main, ["check", str(brain), "--select", "BOT"])
    assert without.exit_code == 0
    assert without.output.startswith(
        "3 of 3 rules not evaluated: they read transcripts (give --db DB): BOT001, BOT002,"
        " BOT003.")
