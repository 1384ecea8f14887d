"""Issue 10: one bad brain file never stops an ingest (items 1, 3, 4, 5, 6 on the brain side).

Each test plants one hostile file beside good ones, ingests through the real runner into a
real DuckDB file, and checks that the good rows are all there and the bad file is an error
row saying why.
"""

import os

from click.testing import CliRunner
from conftest import ingest_brain, write

from brainlab.cli import main
from brainlab.store import query

LOG = "progression/metabolism/2026-01-0{d}-sess-2026010{d}-0900-work.md"


def good_log(brain, day: int, commits: str = "2", tokens: str = "45k"):
    return write(brain, LOG.format(d=day),
                 f"# Metabolism — 2026-01-0{day} — sess-2026010{day}-0900-work\n\n"
                 "| Clé | Valeur |\n|---|---|\n| type | work |\n"
                 f"| commits | {commits} |\n| tokens_used | {tokens} |\n")


def good_claim(brain, n: int):
    return write(brain, f"claims/sess-2026010{n}-0900-work.yml",
                 f'sess_id: sess-2026010{n}-0900-work\nstatus: open\nopened_at: "2026-01-0{n}T09:00"\n')


def errors(db):
    return query(db, "SELECT file, line, severity, reason FROM ingest_errors ORDER BY file")


def test_oversized_integers_are_warnings_and_the_rest_loads(brain, db):
    """Item 1: 99999999999999999999999 for commits or tokens_used (SPEC §3.1 fields)."""
    for day in (1, 2):
        good_log(brain, day)
    good_log(brain, 3, commits="99999999999999999999999")
    good_log(brain, 4, tokens="99999999999999999999999")
    good_log(brain, 5, commits="9" * 400)  # beyond a float: infinity
    ingest_brain(brain, db)
    rows = query(db, "SELECT sess_id, commits, tokens_used FROM raw_metabolism_logs ORDER BY 1")
    assert len(rows) == 5  # every log loads; the oversized values are NULL
    assert rows.commits.isna().tolist() == [False, False, True, False, True]
    assert rows.tokens_used.isna().tolist() == [False, False, False, True, False]
    problems = errors(db)
    too_large = problems[problems.reason.str.contains("too large|spec/ranges.py")]
    assert len(too_large) == 3 and set(too_large.line) == {6, 7}  # commits, tokens_used lines
    out = CliRunner().invoke(main, ["errors", "--db", str(db)])
    assert out.exit_code == 0 and "no ingest errors" not in out.output
    assert "too large" in out.output or "spec/ranges.py" in out.output


def test_an_unstorable_value_costs_only_its_file(brain, db):
    """The runner's nets: an integer too large for BIGINT is left empty with a warning; values
    the database refuses otherwise (mixed types in one column) fail their file alone, rowed."""
    write(brain, "circuits/good.jsonl",
          '{"ticket": "T1", "ts": "2026-01-01T10:00:00Z", "event": "step", "step": "a", "component": "c"}\n')
    write(brain, "circuits/huge.jsonl",
          '{"ticket": "T2", "ts": "2026-01-01T10:00:00Z", "event": "session", "agent": "x",'
          f' "tokens": {10**30}}}\n')
    write(brain, "circuits/mixed.jsonl",
          '{"ticket": "T3", "ts": "2026-01-01T10:00:00Z", "event": "step", "step": "a", "component": "c"}\n'
          '{"ticket": "T3", "ts": "2026-01-01T10:01:00Z", "event": "step", "step": {"x": [1]},'
          ' "component": "c"}\n')
    ingest_brain(brain, db)
    events = query(db, "SELECT ticket, tokens FROM circuit_events ORDER BY ticket")
    # T3's second step is not text: since SPEC §6.7 (issue 16) that costs that event alone
    assert events.ticket.tolist() == ["T1", "T2", "T3"] and events.tokens.isna().all()
    problems = errors(db)
    assert problems[problems.file.str.endswith("huge.jsonl")].reason.str.contains(
        "too large").tolist() == [True]
    mixed = problems[problems.file.str.endswith("mixed.jsonl")]
    assert mixed.line.tolist() == [2]


def test_odd_paths_become_error_rows(brain, db, tmp_path):
    """Items 4 and 6: a directory named x.yml, a dangling symlink, a symlink loop, a FIFO."""
    good_claim(brain, 1)
    good_log(brain, 1)
    (brain / "claims" / "dir.yml").mkdir()
    os.symlink(brain / "claims" / "nowhere.yml", brain / "claims" / "dangling.yml")
    os.symlink(brain / "claims" / "loop.yml", brain / "claims" / "loop.yml")
    os.mkfifo(brain / "claims" / "fifo.yml")  # reading it would block forever
    os.mkfifo(brain / "progression" / "metabolism" / "pipe.md")
    os.symlink(brain / "progression" / "metabolism" / "gone.md",
               brain / "progression" / "metabolism" / "dangling.md")
    summary = ingest_brain(brain, db)
    assert query(db, "SELECT count(*) AS n FROM claims").n[0] == 1
    assert query(db, "SELECT count(*) AS n FROM raw_metabolism_logs").n[0] == 1
    reasons = {os.path.basename(f): r for f, r in errors(db)[["file", "reason"]].values}
    assert "directory" in reasons["dir.yml"]
    assert "dangling symlink" in reasons["dangling.yml"]
    assert "symlink loop" in reasons["loop.yml"]
    assert "FIFO" in reasons["fifo.yml"] and "FIFO" in reasons["pipe.md"]
    assert "dangling symlink" in reasons["dangling.md"]
    assert summary.errors["claims"] == 4  # the good claim has none
    again = ingest_brain(brain, db)  # re-running the same tree changes nothing
    assert sum(again.loaded.values()) == 0


def test_symlinks_inside_read_once_outside_refused(brain, db, tmp_path):
    """Item 5: a link to another brain file is read once; a link out of the root is refused."""
    log = good_log(brain, 1)
    os.symlink(log, brain / "progression" / "metabolism" / "latest.md")
    secret = tmp_path / "outside.md"
    secret.write_text("# Metabolism — 2026-01-09 — sess-20260109-0900-leak\n\n| Clé | Valeur |\n"
                      "|---|---|\n| type | LEAKED-CONTENT |\n")
    os.symlink(secret, brain / "progression" / "metabolism" / "passwd.md")
    (brain / "claims").mkdir()
    os.symlink("/etc/passwd", brain / "claims" / "passwd.yml")
    ingest_brain(brain, db)
    logs = query(db, "SELECT sess_id, source_file FROM raw_metabolism_logs")
    assert logs.sess_id.tolist() == ["sess-20260101-0900-work"]
    assert logs.source_file.tolist() == [str(log.resolve())]
    problems = errors(db)
    outside = problems[problems.reason.str.contains("outside the ingested root")]
    assert sorted(os.path.basename(f) for f in outside.file) == ["passwd.md", "passwd.yml"]
    with open(db, "rb") as handle:
        content = handle.read()
    assert b"LEAKED-CONTENT" not in content and b"root:x:0:0" not in content


BOMB = "\n".join(['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
                  *[f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]"
                    for i in range(8)]])  # ~400 bytes, 9^9 values when walked as a tree

INGEST_IN_CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # a bomb fails fast, not the machine
sys.path.insert(0, sys.argv[3])
from conftest import ingest_brain
from pathlib import Path
ingest_brain(Path(sys.argv[1]), Path(sys.argv[2]))
"""


def ingest_in_child(brain, db, timeout=120):
    """Ingest in a child process with a memory cap and a generous timeout (no timing asserted)."""
    import subprocess
    import sys
    from pathlib import Path
    done = subprocess.run([sys.executable, "-c", INGEST_IN_CHILD, str(brain), str(db),
                           str(Path(__file__).parent)], capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stderr[-2000:]


def test_yaml_alias_bombs_fail_their_file_only(brain, db):
    """Item 3: a billion-laughs document in a claim, context, handoff and agent frontmatter."""
    assert len(BOMB) < 500
    good_claim(brain, 1)
    write(brain, "claims/bomb.yml", "sess_id: sess-20260102-0900-x\n" + BOMB + "\n")
    write(brain, "contexts/session-bomb.yml", BOMB + "\n")
    write(brain, "contexts/session-self.yml", "a: &a [*a]\n")  # a document containing itself
    write(brain, "handoffs/bomb.md", "---\n" + BOMB + "\n---\n# Bomb\n")
    write(brain, "agents/bomb.md", "---\n" + BOMB + "\n---\n# Agent\n")
    write(brain, "agents/good.md", "---\nname: good\ncontext_tier: hot\n---\n# Good\n")
    write(brain, "claims/bad-date.yml", "sess_id: sess-x\nopened_at: 2026-02-30\n")
    ingest_in_child(brain, db)
    assert query(db, "SELECT sess_id FROM claims").sess_id.tolist() == ["sess-20260101-0900-work"]
    agents = query(db, "SELECT agent, coalesce(context_tier, '-') AS t FROM agents ORDER BY 1")
    assert agents.values.tolist() == [["bomb", "-"], ["good", "hot"]]  # the size still counts
    assert query(db, "SELECT fields FROM handoffs").fields.isna().all()
    problems = errors(db)
    by_file = problems.groupby(problems.file.map(os.path.basename)).reason.apply(" ".join)
    for name in ("bomb.yml", "session-bomb.yml", "bomb.md"):
        assert "alias bomb" in by_file[name], by_file[name]
    assert "refers to itself" in by_file["session-self.yml"]
    assert "invalid YAML value" in by_file["bad-date.yml"]


SPACES = " " * 1_000_000  # a 1 MB run of blanks: quadratic parsing would take hours


def test_megabyte_lines_parse_in_linear_time(brain, db):
    """Item 7: every brain parser's line patterns on 1 MB lines (a child process with a
    generous timeout catches a quadratic regex; the assertions are on what was parsed)."""
    write(brain, LOG.format(d=1),
          "# Metabolism — 2026-01-01 — sess-20260101-0900-work\n\n"
          f"mode: a{SPACES}x\ntype: work\nagents_loaded:\n- a{SPACES}x\n- dev : 2k\n"
          f"commits: 1{SPACES}x\nsess{SPACES}x\n")
    write(brain, "workspace/shop-s1/README.md", f"- ttl: a{SPACES}x\n- mode: sprint\n")
    write(brain, "workspace/shop-s1/log.md",
          f"2026-01-01 | q{SPACES}x | choisi: a{SPACES} | raison: b{SPACES}x\n"
          f"2026-01-01 |{SPACES}\n2026-01-02 | q | choisi: a | raison: b\n")
    write(brain, "contexts/session-work.yml",
          f"context_target:\n  L0: \"1{SPACES}x\"\n  L1: \"{'1' * 1_000_000}\"\n  L2: 5 %\n")
    write(brain, "projets/shop.md", f"projet:\n  id: shop\n  domaines :\n    a{SPACES}x\n"
                                    f"    b{SPACES}: [\"x\"]\n    auth : [\"a.ts\"]\n")
    write(brain, "progression/broker/2026-01-01.md",
          f"Context-broker — inhale sprint s1{SPACES}x\nProjet détecté : shop\nSource map :\n"
          f"  dev{SPACES}x\n  dev → [\"a.ts\"]\n  q{SPACES}:{SPACES}\n")
    write(brain, "claims/c.yml", f"sess_id: a{SPACES}x\nstatus: open\n")
    ingest_in_child(brain, db, timeout=600)
    log = query(db, "SELECT mode, commits FROM raw_metabolism_logs")
    assert log["mode"][0].startswith("a ") and log["mode"][0].endswith("x")
    ws = query(db, "SELECT ttl, mode FROM workspaces")
    assert ws.ttl[0].startswith("a ") and ws["mode"][0] == "sprint"
    decisions = query(db, "SELECT is_well_formed FROM decisions ORDER BY line")
    assert decisions.is_well_formed.tolist() == [True, False, True]
    assert query(db, "SELECT target_l2_pct FROM session_contexts").target_l2_pct[0] == 5
    assert query(db, "SELECT domain FROM project_contracts ORDER BY 1").domain.tolist() == ["auth", "b"]
    assert query(db, "SELECT count(*) AS n FROM broker_blocks").n[0] == 1
    assert query(db, "SELECT count(*) AS n FROM claims").n[0] == 1


def test_git_commit_detection_is_linear():
    """Item 7 (transcripts' Bash commands): `git -c -c -c ...` was exponential."""
    import subprocess
    import sys
    code = ("from brainlab.spec.commits import GIT_COMMIT as g\n"
            "assert not g.search('git ' + '-c ' * 200_000 + 'x')\n"
            "assert g.search('git -c user.name=x -C dir --no-verify commit -m y')\n"
            "assert g.search('cd a && git -c commit')\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)
