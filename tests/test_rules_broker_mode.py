"""BRK005: a recorded broker run in a mode where the seed never invokes the broker."""

from __future__ import annotations

import json

from conftest import write

from brainlab.rules.check import check


def subjects(brain, rule: str) -> list[str]:
    return sorted(v.subject for v in check(brain, select=[rule]).violations)


def inhale(brain, sprint: str, mode: str = "sprint") -> None:
    write(brain, f"progression/broker/2026-03-01-{sprint}.md",
          f"Context-broker — inhale sprint {sprint}\n\nProjet détecté : p\n"
          f"Mode           : {mode}\n\nSource map :\n  developer → [\"a.ts\"]\n")


def record(brain, sprint: str, session: str) -> None:
    line = json.dumps({"sprint": sprint, "project": "p", "domain": "core",
                       "agent": "developer", "session": session, "referenced": ["a.ts"]})
    write(brain, f"progression/sprints/{sprint}.jsonl", line + "\n")


def claim(brain, sess_id: str, type_: str) -> None:
    write(brain, f"claims/{sess_id}.yml",
          f"sess_id: {sess_id}\ntype: {type_}\nstatus: closed\n"
          "opened_at: \"2026-03-01T08:00\"\nclosed_at: \"2026-03-01T09:00\"\n")


def test_brk005_broker_in_a_coach_session_or_audit_mode(brain):
    inhale(brain, "p-audit-01", mode="audit")  # the block's own Mode line
    inhale(brain, "p-coach-01")  # Mode sprint, but the session is a coach session
    record(brain, "p-coach-01", "sess-20260301-0800-coach")
    claim(brain, "sess-20260301-0800-coach", "coach")
    inhale(brain, "p-work-01")  # near miss: a work session in sprint mode
    record(brain, "p-work-01", "sess-20260301-1000-work")
    claim(brain, "sess-20260301-1000-work", "work")
    assert subjects(brain, "BRK005") == ["p-audit-01", "p-coach-01"]
    found = {v.subject: v for v in check(brain, select=["BRK005"]).violations}
    assert "coach" in found["p-coach-01"].message and found["p-coach-01"].line
