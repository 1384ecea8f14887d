"""Compliance rules (brainlab.rules, models/rules/) on crafted brains: each fires, a near miss does not.

Every test writes a few real brain files, runs the real check (brain sources into an in-memory
DuckDB, the SQL views) for one rule, and compares the subjects it names with the crafted case.
"""

from __future__ import annotations

import json

import pytest
from conftest import write

from brainlab.common.errors import ConfigError
from brainlab.rules.catalogue import RULES
from brainlab.rules.check import check, selected_rules


def subjects(brain, rule: str) -> list[str]:
    """The subjects ``rule`` names on the crafted brain (sorted)."""
    return sorted(v.subject for v in check(brain, select=[rule]).violations)


def subjects_by_rule(brain, *rules: str) -> dict[str, list[str]]:
    """The subjects each of ``rules`` names on the crafted brain (sorted), from one check of
    them all (a check each cost ~0.17 CPU-s, issue 40); a rule naming none maps to []."""
    found = {rule: [] for rule in rules}
    for v in check(brain, select=list(rules)).violations:
        found[v.rule].append(v.subject)  # a rule not selected: a KeyError
    return {rule: sorted(names) for rule, names in found.items()}


def claim(brain, sess_id, status="closed", type_="work", opened="2026-03-01T08:00",
          closed="2026-03-01T09:00"):
    text = f"sess_id: {sess_id}\ntype: {type_}\nstatus: {status}\nopened_at: \"{opened}\"\n"
    if status == "closed":
        text += f"closed_at: \"{closed}\"\n"
    write(brain, f"claims/{sess_id}.yml", text)


def log(brain, sess_id, type_="work", commits=True):
    day = f"{sess_id[5:9]}-{sess_id[9:11]}-{sess_id[11:13]}"
    rows = ["| type | " + type_ + " |", "| tokens_used | 40k |", "| context_peak | 30% |",
            "| context_at_close | 20% |", "| duration_min | 60 |", "| todos_closed | 1 |"]
    if commits:
        rows.append("| commits | 2 |")
    write(brain, f"progression/metabolism/{day}-{sess_id}.md",
          f"# Metabolism — {day} — {sess_id}\n\n| Clé | Valeur |\n|-----|--------|\n"
          + "\n".join(rows) + "\n")


S1, S2, S3 = ("sess-20260301-0800-work-a", "sess-20260301-1000-work-b",
              "sess-20260301-1200-work-c")


def test_ses001_unknown_session_type(brain):
    claim(brain, S1, type_="hotfix")
    claim(brain, S2, type_="navigate")  # near miss: a SPEC §2.2 type
    log(brain, S3, type_="use-brain")  # near miss: a category is accepted too
    assert subjects(brain, "SES001") == [S1]


def test_clo001_closed_claim_without_metabolism_log(brain):
    claim(brain, S1)
    claim(brain, S2)
    log(brain, S2)  # near miss: its log exists
    claim(brain, S3, status="open")  # near miss: not closed yet
    assert subjects(brain, "CLO001") == [S1]


def test_clo001_silent_on_a_brain_without_any_log(brain):
    claim(brain, S1)  # the public template ships such a seed claim and no metabolism at all
    assert subjects(brain, "CLO001") == []


def test_clo002_log_written_claim_not_closed(brain):
    log(brain, S1)
    claim(brain, S1, status="open")
    log(brain, S2)
    claim(brain, S2)  # near miss: closed
    log(brain, S3)  # no claim file at all
    assert subjects(brain, "CLO002") == [S1, S3]


def test_clm001_claim_open_past_its_ttl_at_the_brain_clock(brain):
    claim(brain, S1, status="open", opened="2026-03-01T08:00")  # work: 4 h TTL
    claim(brain, S2, status="open", opened="2026-03-01T10:30")  # near miss: 2.5 h old
    claim(brain, S3, opened="2026-03-01T12:00", closed="2026-03-01T13:00")  # the clock
    assert subjects(brain, "CLM001") == [S1]


def test_met001_incomplete_log(brain):
    log(brain, S1, commits=False)
    log(brain, S2)  # near miss: complete
    assert subjects(brain, "MET001") == [S1]


def broker(brain, sprint, source_map, keep=(), release=()):
    lines = "\n".join(f"  {agent} → {json.dumps(files)}" for agent, files in source_map.items())
    write(brain, f"progression/broker/2026-03-01-{sprint}.md",
          f"# Context broker — {sprint}\n\nContext-broker — inhale sprint {sprint}\n\n"
          f"Projet détecté : p\nMode           : sprint\n\nSource map :\n{lines}\n\n"
          f"Context-broker — expire sprint {sprint}\n\nRelease map :\n"
          f"  LIBÉRER : {json.dumps(list(release))}\n  GARDER  : {json.dumps(list(keep))}\n")


def sprint_record(brain, rows):
    lines = [json.dumps({"sprint": r[0], "project": "p", "domain": "core", "agent": r[1],
                         "session": r[2], "started_at": "2026-03-01T08:30",
                         "ended_at": "2026-03-01T09:30",
                         "referenced": [{"path": p, "kind": "read"} for p in r[3]],
                         "open_todos": r[4]}) for r in rows]
    path = brain / "progression" / "sprints" / "sprints.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_brk001_more_than_two_sources(brain):
    broker(brain, "p-core-01", {"developer": ["a.ts", "b.ts", "c.ts"],
                                "testwriter": ["a.ts", "b.ts"]})  # near miss: exactly 2
    assert subjects(brain, "BRK001") == ["p-core-01/developer"]


def test_brk002_boot_file_loaded_again(brain):
    write(brain, "contexts/session-work.yml",
          "session_type: work\nL0:\n  - KERNEL.md\nL2:\n  template: \"projets/{project}.md\"\n")
    claim(brain, S1)
    broker(brain, "p-core-01", {"developer": ["projets/p.md"], "testwriter": ["src/KERNEL.ts"],
                                "reviewer": ["docs/KERNEL.md.bak"]})  # near misses
    sprint_record(brain, [("p-core-01", "developer", S1, ["src/a.ts"], []),
                          ("p-core-01", "testwriter", S1, ["src/a.ts"], [])])
    assert subjects(brain, "BRK002") == ["p-core-01/developer"]


def test_brk003_stable_domain_kept(brain):
    broker(brain, "p-core-01", {"developer": ["a.ts"]}, keep=["a.ts"])
    broker(brain, "p-core-02", {"developer": ["a.ts"]}, keep=["a.ts"])  # near miss: open to-do
    sprint_record(brain, [("p-core-01", "developer", S1, ["src/a.ts"], []),
                          ("p-core-02", "developer", S1, ["src/a.ts"], ["core"])])
    assert subjects(brain, "BRK003") == ["p-core-01"]


def test_brk004_load_never_referenced(brain):
    broker(brain, "p-core-01", {"developer": ["a.ts"], "testwriter": ["b.ts"]})
    broker(brain, "p-core-02", {"developer": ["c.ts"]})  # no references recorded: not judged
    sprint_record(brain, [("p-core-01", "developer", S1, ["src/core/a.ts"], []),  # near miss
                          ("p-core-01", "testwriter", S1, ["src/core/a.ts"], [])])
    assert subjects(brain, "BRK004") == ["p-core-01/testwriter"]


def workspace(brain, name, archive, last_day, extra="", month=3):
    lifecycle = f"ttl: 7d\narchive: {archive}\n" if archive else "ttl: 7d\n"
    write(brain, f"workspace/{name}/README.md",
          f"# Workspace {name}\n\n## Lifecycle\n{lifecycle}{extra}")
    write(brain, f"workspace/{name}/log.md",
          f"2026-{month:02d}-{last_day:02d} 10:00 | a or b | choisi : a | raison : simpler\n")


def test_wsp001_auto_expired_still_present(brain):
    claim(brain, S1, opened="2026-04-20T08:00", closed="2026-04-20T09:00")  # clock: 04-20 09:00
    workspace(brain, "p-old-auto", "auto", 12, month=4)  # ttl ended 04-19
    workspace(brain, "p-live-auto", "auto", 13, month=4)  # near miss: ttl ends 04-20
    workspace(brain, "p-permanent", "permanent", 1)  # near miss: never archived
    assert subjects(brain, "WSP001") == ["p-old-auto"]


def test_wsp001_auto_boundary(brain):
    claim(brain, S1, opened="2026-03-09T08:00", closed="2026-03-09T09:00")  # clock 03-09 09:00
    workspace(brain, "p-expired", "auto", 1)  # ttl ends 03-08: past at 03-09
    workspace(brain, "p-last-day", "auto", 2)  # near miss: ttl ends 03-09, the clock's day
    workspace(brain, "p-keep", "keep", 1)  # another rule (WSP002)
    assert subjects_by_rule(brain, "WSP001", "WSP002") == {"WSP001": ["p-expired"],
                                                           "WSP002": ["p-keep"]}


def test_wsp002_keep_waiting_and_wsp003_retention(brain):
    claim(brain, S1, opened="2026-04-20T08:00", closed="2026-04-20T09:00")  # clock 04-20
    workspace(brain, "p-keep-old", "keep", 1)
    workspace(brain, "p-keep-live", "keep", 15, month=4)  # near miss: ttl ends 04-22
    workspace(brain, "p-30d-old", "30d", 12)  # 03-12 + 7 + 30 = 04-18 < 04-20
    workspace(brain, "p-30d-recent", "30d", 14)  # near miss: 03-14 + 37 = 04-20, the clock
    workspace(brain, "p-90d", "90d", 1)  # near miss: 03-01 + 97 = 06-06
    assert subjects_by_rule(brain, "WSP002", "WSP003") == {"WSP002": ["p-keep-old"],
                                                           "WSP003": ["p-30d-old"]}


def test_workspace_structure_rules(brain):
    workspace(brain, "p-ok", "auto", 1)  # near miss for every structure rule
    workspace(brain, "p-custom", "auto", 1)
    write(brain, "workspace/p-custom/notes.md", "custom\n")
    workspace(brain, "p-long", "auto", 1, extra="".join(f"- line {i}\n" for i in range(8)))
    workspace(brain, "p-ram", "auto", 1)
    write(brain, "workspace/p-ram/ram.md", "".join(f"- state {i}\n" for i in range(51)))
    workspace(brain, "p-badlog", "auto", 1)
    write(brain, "workspace/p-badlog/log.md", "we went with a\n")
    workspace(brain, "p-noarchive", None, 1)
    assert subjects_by_rule(brain, "WSP004", "WSP005", "WSP006", "WSP007", "WSP008") == {
        "WSP004": ["p-custom"], "WSP005": ["p-long"], "WSP006": ["p-ram"],
        "WSP007": ["p-badlog"], "WSP008": ["p-noarchive"]}


def test_wsp009_feedback_read_during_the_sprint(brain, tmp_path):
    """Transcripts come from a database (--db): a Read of feedback.md up to the sprint's end."""
    from brainlab.store import open_writer
    from brainlab.transcripts.ingest import ingest_claude

    workspace(brain, "p-s1", "keep", 10)  # the sprint's last decision: 2026-03-10
    workspace(brain, "p-s2", "keep", 10)
    reads = [("2026-03-05T10:00:00Z", "p-s1"), ("2026-03-20T10:00:00Z", "p-s2")]  # near miss
    lines = [json.dumps({
        "type": "assistant", "sessionId": "s-1", "timestamp": ts, "cwd": "/home/u/brain",
        "uuid": f"u-{i}", "message": {"id": f"m-{i}", "role": "assistant", "content": [
            {"type": "tool_use", "id": f"t-{i}", "name": "Read",
             "input": {"file_path": f"/home/u/brain/workspace/{ws}/feedback.md"}}]}})
        for i, (ts, ws) in enumerate(reads)]
    write(tmp_path, "claude/projects/-home-u-brain/s-1.jsonl", "\n".join(lines) + "\n")
    db = tmp_path / "transcripts.duckdb"
    con = open_writer(db)
    try:
        ingest_claude(con, tmp_path / "claude", workers=1)
    finally:
        con.close()
    assert sorted(v.subject for v in check(brain, ["WSP009"], db=db).violations) == ["p-s1"]
    assert check(brain, ["WSP009"]).violations == []  # without transcripts: not judged


def test_cir001_stop_name_and_code_disagree(brain):
    events = [
        {"ticket": "T-1", "ts": "2026-03-01T10:00:00Z", "event": "stop", "name": "besoin",
         "code": 23, "step": "2.3", "component": "x"},
        {"ticket": "T-2", "ts": "2026-03-01T10:00:00Z", "event": "stop", "name": "besoin",
         "code": 20, "step": "2.3", "component": "x"},  # near miss
        {"ticket": "T-3", "ts": "2026-03-01T10:00:00Z", "event": "stop", "name": "controles",
         "step": "3", "component": "x"},  # near miss: controles has no code
    ]
    write(brain, "circuits/t.jsonl", "\n".join(json.dumps(e) for e in events) + "\n")
    assert subjects(brain, "CIR001") == ["T-1"]


def test_violation_carries_file_line_severity_and_evidence(brain):
    broker(brain, "p-core-01", {"developer": ["a.ts", "b.ts", "c.ts"]})
    (v,) = check(brain, select=["BRK001"]).violations
    assert v.file == "progression/broker/2026-03-01-p-core-01.md"
    lines = (brain / v.file).read_text(encoding="utf-8").splitlines()
    assert "developer" in lines[v.line - 1]
    assert (v.severity, v.spec, v.subject_kind) == ("error", "§4.2", "agent-sprint")
    assert v.evidence["count"] == 3


def test_select_and_ignore_take_ids_and_prefixes():
    assert [r.id for r in selected_rules(["BRK"], ["BRK004"])] == ["BRK001", "BRK002", "BRK003",
                                                                  "BRK005"]
    assert len(selected_rules()) == len(RULES)
    with pytest.raises(ConfigError, match="unknown rule id"):
        selected_rules(["NOPE1"])


def test_catalogue_rules_all_have_a_view_in_violations(empty_store):
    from brainlab.store import query

    views = set(query(empty_store, "SELECT view_name FROM duckdb_views()").view_name)
    catalogue = query(empty_store, "SELECT rule, severity FROM rule_catalogue")
    assert {r.view for r in RULES} <= views
    assert sorted(catalogue.rule) == sorted(r.id for r in RULES)
    sql = (views and query(empty_store, "SELECT sql FROM duckdb_views() "
                                        "WHERE view_name = 'violations'").sql[0])
    assert all(r.source in sql for r in RULES)  # its view, or the rows view it shares


def test_cir002_code_step_without_tests_first(brain):
    def step(ticket, minute, number, component):
        return {"ticket": ticket, "ts": f"2026-03-01T10:{minute:02d}:00Z", "event": "step",
                "step": number, "component": component}

    events = [step("T-1", 0, "2.1", "lexer"), step("T-1", 5, "2.3", "lexer"),  # near miss
              step("T-1", 9, "2.3", "parser"),  # no tests for parser
              step("T-2", 0, "2.3", "ui"), step("T-2", 5, "2.1", "ui")]  # tests after the code
    write(brain, "circuits/t.jsonl", "\n".join(json.dumps(e) for e in events) + "\n")
    found = check(brain, select=["CIR002"]).violations  # one check for both (issue 40)
    assert sorted(v.subject for v in found) == ["T-1", "T-2"]
    messages = sorted(v.message for v in found)
    assert [m.split(" with")[0] for m in messages] == ["step 2.3 (code) on parser",
                                                       "step 2.3 (code) on ui"]
