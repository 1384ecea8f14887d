"""Mode, budget and transcript-type rules (models/rules/): each fires, a near miss does not.

Transcript rules: small JSONL transcripts written in tmp_path, ingested by the real
``ingest_claude`` into a real DuckDB file, checked by the real ``brainlab check --db`` path.
Budget rules: crafted metabolism logs. SPEC §2.7 (ADR-019 modes), §3.3 (mode budgets), §2.2.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ingest_transcripts, write

from brainlab.cli import main
from brainlab.rules.check import check
from brainlab.spec.vocabulary import parse_session_keywords
from brainlab.store import reader

T0 = datetime(2026, 3, 1, 3, 0)
MODE_FILE = "/home/u/brain/modes/brain-navigate.md"


class Transcript:
    """Lines of one crafted session, on a clock that advances one minute per line."""

    def __init__(self, session_id: str):
        self.session_id, self.lines = session_id, []

    def _line(self, kind: str, **fields) -> Transcript:
        at = T0 + timedelta(minutes=len(self.lines))
        self.lines.append({"type": kind, "sessionId": self.session_id, "cwd": "/home/u/brain",
                           "timestamp": at.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                           "uuid": f"{self.session_id}-{len(self.lines)}", **fields})
        return self

    def prompt(self, text: str) -> Transcript:
        return self._line("user", message={"role": "user", "content": text})

    def say(self, text: str, agent: str | None = None) -> Transcript:
        extra = {"agentId": agent, "isSidechain": True} if agent else {}
        return self._line("assistant", **extra, message={
            "id": f"m-{self.session_id}-{len(self.lines)}", "role": "assistant",
            "content": [{"type": "text", "text": text}]})

    def tool(self, name: str, **args) -> Transcript:
        n = len(self.lines)
        return self._line("assistant", message={
            "id": f"m-{self.session_id}-{n}", "role": "assistant", "content": [
                {"type": "tool_use", "id": f"t-{self.session_id}-{n}", "name": name,
                 "input": args}]})

    def read(self, path: str) -> Transcript:
        return self.tool("Read", file_path=path)

    def edit(self, path: str) -> Transcript:
        return self.tool("Edit", file_path=path, old_string="a", new_string="b")

    def commit(self) -> Transcript:
        return self.tool("Bash", command="git commit -am 'step'")


def store(tmp_path: Path, *transcripts: Transcript) -> Path:
    """Write the transcripts under tmp_path/claude and ingest them into a real database."""
    return ingest_transcripts(tmp_path, {t.session_id: t.lines for t in transcripts})


def fired(brain: Path, db: Path | None, rule: str) -> list[str]:
    """The subjects ``rule`` names, as ``brainlab check BRAIN --db DB --select RULE`` finds them."""
    return sorted(v.subject for v in check(brain, select=[rule], db=db).violations)


@pytest.mark.parametrize(("text", "type_", "mode", "rule"), [
    ("brain boot mode work/superoauth", "work", None, "boot-type"),  # helloWorld.md:92
    ("brain boot sudo", "edit-brain", None, "boot-type"),  # session-edit-brain.yml:2
    ("brain boot mode navigate", "navigate", "navigate", "boot-type"),  # modes/README.md:3
    ("brain boot navigate +coach", "navigate", "coach", "boot-type"),
    ("brain boot mode hotfix", "hotfix", None, "boot-unknown-type"),
    ("brain hotfix the build please", None, None, "brain-bare"),  # prose, not a type
    ("brain boot", None, None, "brain-bare"),
    ("brain work/shop", "work", None, "brain-type"),
])
def test_brain_boot_trigger_is_read(text, type_, mode, rule):
    got = parse_session_keywords(text)
    assert (got.type, got.mode, got.rule) == (type_, mode, rule)


def test_mod001_mode_declared_after_the_first_message(brain, tmp_path):
    late = Transcript("late").prompt("brain explore +brainstorm").prompt("ok").prompt(
        "brain +coach")
    hello = Transcript("hello").prompt("hi there").prompt("brain +navigate")
    same = Transcript("same").prompt("brain +coach").prompt("brain +coach again")  # near miss
    first = Transcript("first").prompt("brain work +coach").prompt("thanks")  # near miss
    db = store(tmp_path, late, hello, same, first)
    assert fired(brain, db, "MOD001") == ["hello", "late"]


def test_mod002_unknown_mode(brain, tmp_path):
    db = store(tmp_path, Transcript("turbo").prompt("brain work +turbo"),
               Transcript("prod").prompt("brain work +prod"),  # near miss: a working mode
               Transcript("kernel").prompt("brain +kernel"),  # near miss: a soft lock
               Transcript("plain").prompt("make +turbo faster"))  # near miss: no brain keyword
    assert fired(brain, db, "MOD002") == ["turbo"]


def test_mod003_mode_file_not_read_before_the_first_productive_action(brain, tmp_path):
    never = Transcript("never").prompt("brain +navigate").edit("/home/u/brain/agents/a.md")
    late = Transcript("late").prompt("brain +navigate").edit("/home/u/brain/agents/a.md").read(
        MODE_FILE)
    ok = Transcript("ok").prompt("brain +navigate").read(MODE_FILE).edit(
        "/home/u/brain/agents/a.md")  # near miss
    coach = Transcript("coach").prompt("brain +coach").edit("/p/src/a.py")  # near miss: no file
    sub = Transcript("sub").prompt("brain boot mode kernel").tool("Task", subagent_type="x")
    db = store(tmp_path, never, late, ok, coach, sub)
    assert fired(brain, db, "MOD003") == ["late", "never", "sub"]


def test_mod004_work_outside_the_mode_perimeter(brain, tmp_path):
    project = Transcript("project").prompt("brain +navigate").read(MODE_FILE).edit(
        "/home/u/projets/shop/src/app.ts")
    commit = Transcript("commit").prompt("brain +navigate").read(MODE_FILE).commit()
    kernel = Transcript("kernel").prompt("brain +kernel").edit("/home/u/brain/KERNEL.md")
    brainfile = Transcript("brainfile").prompt("brain +navigate").read(MODE_FILE).edit(
        "/home/u/brain/agents/coach.md")  # near miss: navigate may write brain files
    kernel_ok = Transcript("kernel_ok").prompt("brain +kernel").edit(
        "/home/u/brain/agents/scribe.md")  # near miss: not a protected kernel file
    work = Transcript("work").prompt("brain work").edit("/p/src/a.py").commit()  # no mode
    db = store(tmp_path, project, commit, kernel, brainfile, kernel_ok, work)
    found = check(brain, select=["MOD004"], db=db).violations
    assert sorted((v.subject, v.evidence["action"]) for v in found) == [
        ("commit", "commit"), ("kernel", "write"), ("project", "write")]
    assert {v.severity for v in found} == {"error"}


def metabolism_log(brain: Path, sess_id: str, mode: str, peak: int, commits: int) -> None:
    day = f"{sess_id[5:9]}-{sess_id[9:11]}-{sess_id[11:13]}"
    write(brain, f"progression/metabolism/{day}-{sess_id}.md",
          f"# Metabolism — {day} — {sess_id}\n\n| Clé | Valeur |\n|-----|--------|\n"
          f"| type | work |\n| mode | {mode} |\n| tokens_used | 40k |\n"
          f"| context_peak | {peak}% |\n| context_at_close | 20% |\n| duration_min | 60 |\n"
          f"| commits | {commits} |\n| todos_closed | 1 |\n")


def test_bud001_bud002_mode_budgets_on_logs(brain):
    """SPEC §3.3 on logged peaks: no transcript needed (the best basis falls back to logs)."""
    cases = {"conserve45": ("conserve", 45, 0), "conserve35": ("conserve", 35, 0),
             "sprint85": ("sprint", 85, 3), "sprint85many": ("sprint", 85, 6),
             "sprint70": ("sprint", 70, 0), "prod62": ("prod", 62, 2), "prod55": ("prod", 55, 2),
             "brainstorm95": ("brainstorm", 95, 0)}
    for i, (slug, (mode, peak, commits)) in enumerate(cases.items()):
        metabolism_log(brain, f"sess-20260301-{10 + i:02d}00-{slug}", mode, peak, commits)
    assert [s.rsplit("-", 1)[1] for s in fired(brain, None, "BUD001")] == [
        "conserve45", "sprint85"]
    assert [s.rsplit("-", 1)[1] for s in fired(brain, None, "BUD002")] == ["prod62"]


def test_ses002_unknown_type_declared_in_a_transcript(brain, tmp_path):
    db = store(tmp_path, Transcript("hotfix").prompt("brain boot mode hotfix"),
               Transcript("prose").prompt("brain hotfix the build please"),  # near miss
               Transcript("sudo").prompt("brain boot sudo"))  # near miss: edit-brain
    assert fired(brain, db, "SES002") == ["hotfix"]


def test_redirections_counted_per_mode(tmp_path):
    """ADR-019:84 redirections, French (the mode files' wording) and English, main chain only."""
    fr = Transcript("fr").prompt("brain +navigate").read(MODE_FILE).prompt("fix the bug").say(
        "Ce truc appartient à une session projet — ouvre une fenêtre dédiée, je reste ici en "
        "navigation.").say("Sinon, ouvre une autre session pour ça.")
    en = Transcript("en").prompt("brain +navigate").say(
        "That is project work: please open another session for that.")
    sub = Transcript("sub").prompt("brain +kernel").say("open a new session", agent="a1")
    quiet = Transcript("quiet").prompt("brain work").say("Done: the session is saved.")
    other = Transcript("other").prompt("hello").say("You could open a new session for it.")
    db = store(tmp_path, fr, en, sub, quiet, other)
    with reader(db) as con:
        rows = con.execute("SELECT mode, sessions, redirections, sessions_redirecting, phrases "
                           "FROM mode_redirections ORDER BY mode").fetchall()
        share = con.execute("SELECT 1 - sum(session_share) FILTER (WHERE mode = '(none)') "
                            "FROM mode_redirections").fetchone()[0]
    assert rows == [
        ("(none)", 1, 0, 0, []),
        ("kernel", 1, 0, 0, []),  # a subagent's text is not the session refusing
        ("navigate", 2, 3, 2, ["adr019-autre-session", "en-open-another-session",
                               "navigate-fenetre-dediee"]),
    ]
    assert share == pytest.approx(0.75)  # 3 of the 4 brain sessions declare a mode


def test_both_parser_paths_give_the_redirect_mark():
    """The msgspec fast path and the general orjson path give the same cc_marks row."""
    from brainlab.transcripts import build
    from brainlab.transcripts import fast as claude_fast
    from brainlab.transcripts import tolerant as cc

    line = Transcript("s").say("Cette action dépasse le scope navigate — brain boot mode work "
                               "pour continuer.").lines[0]
    raw = json.dumps(line, ensure_ascii=False).encode()
    ctx = build.FileContext.of(Path("/t/projects/p/s.jsonl"))
    fast, slow = build.Chunk(), build.Chunk()
    assert claude_fast.parse_line(memoryview(raw), raw, 0, len(raw), ctx, 1, fast)
    for obj in cc.load_line(raw, ctx, 1, slow):
        cc.parse_object(obj, ctx, 1, slow)
    assert fast.marks == slow.marks and [m[3] for m in fast.marks] == ["redirect"]
    assert fast.marks[0][7] == "scope-escalade"


def test_the_real_corpus_gives_no_mode_violation(brain, corpus_store):
    """The public Claude Code corpus holds no brain session: the transcript rules stay silent."""
    with reader(corpus_store) as con:
        assert con.execute("SELECT count(*) FROM brain_transcripts").fetchone()[0] == 0
    assert check(brain, select=["MOD", "BUD", "SES002"], db=corpus_store).violations == []


def test_check_without_db_names_the_rules_it_cannot_evaluate(brain, tmp_path):
    result = CliRunner().invoke(main, ["check", str(brain), "--select", "MOD,SES"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(
        "5 of 6 rules not evaluated: they read transcripts (give --db DB): MOD001, MOD002, "
        "MOD003, MOD004, SES002.")
    db = store(tmp_path, Transcript("p").prompt("brain +navigate").commit())
    result = CliRunner().invoke(main, ["check", str(brain), "--select", "MOD", "--db", str(db)])
    assert result.exit_code == 1 and "not evaluated" not in result.output  # MOD004: an error
    assert ": MOD004 [error] p:" in result.output


def test_report_section_and_notebook_data_show_modes(demo, empty_store):
    """The report's compliance section and notebook 07 read the modes through the metrics."""
    from brainlab.metrics import compliance
    from brainlab.metrics.report import Week
    from brainlab.report import sections
    from brainlab.settings import Thresholds

    def html(db):
        return sections.compliance(sections.ReportContext(
            db=db, week=Week.parse("2026-W48"), thresholds=Thresholds()))

    assert "Session modes (SPEC §2.7)" in html(demo["db"])
    assert "No brain session in the transcripts up to this week." in html(empty_store)
    usage = compliance.mode_usage(demo["db"]).set_index("mode")
    assert usage.loc["navigate", "redirections"] == 1  # the planted compliant +navigate session
    assert usage["session_share"].sum() == pytest.approx(1.0, abs=0.01)
    totals = compliance.mode_totals(demo["db"])  # notebook 07's headline line
    assert totals["sessions"] == usage["sessions"].sum() and totals["redirections"] == 1
    none_share = usage.loc["(none)", "session_share"] if "(none)" in usage.index else 0
    assert totals["declared_share"] == pytest.approx(1 - none_share, abs=0.01)
    assert compliance.mode_totals(empty_store) == {"sessions": 0, "declared_share": 0.0,
                                                   "redirections": 0}
    found = compliance.annotated(demo["db"])
    assert set(found.loc[found["rule"].isin(["MOD003", "MOD004"]), "mode"]) == {"navigate"}


def test_redirect_phrases_run_in_linear_time_on_megabyte_texts():
    """Hostile assistant texts (1 MB runs after each phrase's literal) cost linear time."""
    import subprocess
    import sys
    code = ("from brainlab.transcripts.marks import redirect_mark as m\n"
            "n = 1_000_000\n"
            "for text in ('ouvr' * (n // 4) + ' session', 'outside the scope of ' + 'a' * n,\n"
            "             'pour l\\'éditer' + ' ' * n + 'sudo', 'open ' * (n // 5) + 'window',\n"
            "             'dépasse le ' * (n // 11), 'belongs to a ' * (n // 13) + 'session'):\n"
            "    assert m(text, 's', None, None, 'p', 1) is None, text[:40]\n"
            "assert m('x' * n + ' ouvre une autre session', 's', None, None, 'p', 1)\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_the_template_brain_gives_no_mode_violation():
    """The public template brain (no logs, no transcripts) breaks no mode or budget rule."""
    from conftest import TEMPLATE_BRAIN

    assert check(TEMPLATE_BRAIN, select=["MOD", "BUD", "SES002"]).violations == []
