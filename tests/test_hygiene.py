"""SPEC §5 workspace rules, §2.6 claim staleness in both key styles, §2.5 agent cost."""

from datetime import datetime

import pytest
from conftest import ingest_brain, write

from brainlab import metrics
from brainlab.store import query

README_OK = "# ws\n\n## Lifecycle\nttl: 7d\narchive: auto\n"


def test_workspace_rules_each_fire(brain, db):
    write(brain, "workspace/good-sprint1/README.md", README_OK)
    write(brain, "workspace/good-sprint1/ram.md", "# RAM\n\n" + "- x\n" * 50)
    write(brain, "workspace/good-sprint1/log.md",
          "2026-03-14 15:xx | Option 1 vs 2 | choisi : Option 1 | raison : one call\n")
    write(brain, "workspace/good-sprint1/feedback.md", "fine\n")
    write(brain, "workspace/bad-sprint2/README.md",
          "# ws\n" + "line\n" * 10 + "## Lifecycle\nttl: 7d\narchive: forever\n")
    write(brain, "workspace/bad-sprint2/ram.md", "- x\n" * 51)
    write(brain, "workspace/bad-sprint2/log.md",
          "2026-03-14 10:00 | q | choisi : a | raison : b\njust a thought\n")
    write(brain, "workspace/bad-sprint2/notes.md", "custom section\n")
    write(brain, "workspace/orphan-sprint3/ram.md", "- x\n")
    ingest_brain(brain, db)
    found = metrics.workspace_violations(db)
    assert set(found[found.workspace == "good-sprint1"].rule) == set()
    bad = found[found.workspace == "bad-sprint2"]
    assert sorted(bad.rule) == ["file-not-allowed", "malformed-log-line", "ram-too-long",
                                "readme-too-long", "unknown-archive"]
    assert bad[bad.rule == "malformed-log-line"].line.tolist() == [2]
    assert found[found.workspace == "orphan-sprint3"].rule.tolist() == ["missing-readme"]
    decisions = query(db, "SELECT workspace, choice FROM decisions WHERE is_well_formed "
                          "ORDER BY workspace")
    assert decisions.values.tolist() == [["bad-sprint2", "a"], ["good-sprint1", "Option 1"]]


def test_claims_both_styles_and_staleness(brain, db):
    write(brain, "claims/sess-20260322-1200-work.yml",
          'sess_id: sess-20260322-1200-work\ntype: work\nstatus: open\n'
          'opened_at: "2026-03-22T12:00"\n')
    write(brain, "claims/sess-20260322-1200-pilote.yml",
          'name: sess-20260322-1200-pilote\ntype: pilote\nstatus: open\n'
          'opened: "2026-03-22T12:00"\n')
    write(brain, "claims/sess-20260322-1300-explore.yml",
          'sess_id: sess-20260322-1300-explore\ntype: explore\nstatus: closed\n'
          'opened_at: "2026-03-22T13:00"\nclosed_at: "2026-03-22T14:00"\n')
    write(brain, "claims/broken.yml", "sess_id: [unclosed\n")
    ingest_brain(brain, db)
    claims = query(db, "SELECT sess_id, key_style FROM claims ORDER BY sess_id")
    assert claims.key_style.tolist() == ["legacy", "v2", "v2"]
    # 17:00: work (4 h TTL) expired at 16:00; pilote (12 h) still fresh; closed never stale
    at_17 = metrics.claim_status(db, datetime(2026, 3, 22, 17, 0)).set_index("sess_id")
    assert at_17.is_stale.to_dict() == {"sess-20260322-1200-work": True,
                                        "sess-20260322-1200-pilote": False,
                                        "sess-20260322-1300-explore": False}
    at_midnight_plus = metrics.claim_status(db, datetime(2026, 3, 23, 0, 1)).set_index("sess_id")
    assert at_midnight_plus.loc["sess-20260322-1200-pilote", "is_stale"]
    assert at_17.loc["sess-20260322-1200-work", "ttl_hours"] == 4
    errors = query(db, "SELECT file, line, reason FROM ingest_errors")
    assert errors.file.str.endswith("broken.yml").all() and errors.line[0] == 2


def test_agent_cost_always_loaded_and_unused(brain, db):
    heavy_text = "---\nname: heavy\ncontext_tier: hot\n---\n" + "x" * 3960
    write(brain, "agents/heavy.md", heavy_text)
    write(brain, "agents/useful.md", "---\nname: useful\ncontext_tier: warm\n---\n" + "y" * 1960)
    for i in range(10):
        agents = "| heavy | ~1k |\n" + ("| useful | ~0.5k |\n" if i < 5 else "")
        write(brain, f"progression/metabolism/2026-03-{10 + i}-sess-202603{10 + i}-0900-work.md",
              f"# Metabolism — 2026-03-{10 + i} — sess-202603{10 + i}-0900-work\n\n"
              "| Clé | Valeur |\n|---|---|\n| type | work |\n\n## Agents chargés\n"
              f"| Agent | Tokens estimés |\n|---|---|\n{agents}\n## Notes\n"
              + ("useful: fixed the bug\n" if i < 5 else "nothing\n"))
    ingest_brain(brain, db)
    cost = metrics.agent_cost(db).set_index("agent")
    heavy_tokens = len(heavy_text.encode()) // 4  # SPEC §2.5 bytes / 4
    assert heavy_tokens == 999
    assert cost.loc["heavy", "tokens_per_load"] == heavy_tokens
    assert cost.loc["heavy", "tokens_total"] == 10 * heavy_tokens
    assert cost.loc["heavy", "share_of_sessions"] == 1.0
    assert cost.loc["heavy", "is_always_loaded"] and cost.loc["heavy", "is_little_used"]
    assert cost.loc["useful", "share_of_sessions"] == pytest.approx(0.5)
    assert cost.loc["useful", "use_share"] == 1.0 and not cost.loc["useful", "is_little_used"]
