"""Issue 41 items 1-3: the broker replay runs where the seed invokes the broker, boot apart.

Seed context-broker (``seeds/context-broker.md.txt``): never in coach, toolkit-only or audit
mode nor for a solo single-file session (lines 32-37), only multi-agent use-brain/build-brain
sprints with a project (241-242) and a declared contract (76); files in context since boot
are not the broker's to load (97, SPEC §2.3, §4.2).
"""

from __future__ import annotations

import re

import pytest

from brainlab.common.errors import SimulationError
from brainlab.sim import broker
from brainlab.sim.broker_scope import SessionInfo, scope
from brainlab.spec.broker import SKIP_REASONS

BOOT = re.compile(r"(?:^|/)(?:KERNEL|PATHS|collaboration|focus|now)\.md$|(?:^|/)agents/[^/]+\.md$")


@pytest.mark.parametrize("contracts", ["declared", "all"])
def test_demo_misses_name_no_boot_or_agent_file(demo, contracts):
    ss = broker.load_sprints(demo["db"], contracts=contracts)
    result = broker.replay(ss, broker.DEFAULT_POLICIES)
    missed = result.files[result.files["misses"] > 0]
    assert len(missed) and not missed["path"].str.contains(BOOT).any()
    # boot context is counted apart, the same for every policy
    boot = result.summary["boot_tokens"]
    assert boot.nunique() == 1
    if contracts == "all":
        assert boot.iloc[0] > 0


def test_demo_skipped_and_replayed_add_up(demo):
    ss = broker.load_sprints(demo["db"])
    sc = ss.scope
    assert sc.replayed + sum(sc.skipped.values()) == sc.total
    assert sc.replayed == ss.rows["sprint_id"].nunique()
    assert set(sc.skipped) <= set(SKIP_REASONS)
    # the demo's brain sessions: coach and explore sessions, solo ones, single agents, and the
    # projects without a contract (brain, side-tool, the transcript-only ones)
    assert sc.skipped["no declared contract"] > 0 and sc.skipped["coach"] >= 1
    assert sc.skipped["solo single-file"] > 0 and sc.skipped["single agent"] > 0
    replayed = sc.sprints[sc.sprints["skip_reason"].isna()]
    assert set(replayed["contract"]) == {"declared"}
    assert set(replayed["project"]) == {"originsdigital"}
    assert not ss.rows["contract_inferred"].any()
    inferred = broker.load_sprints(demo["db"], contracts="inferred")
    assert inferred.rows["contract_inferred"].all()
    assert inferred.scope.skipped["declared contract"] == sc.replayed


def frames(rows):
    import pandas as pd

    agents = pd.DataFrame([{"sprint_id": s, "project": p, "agent": a, "session_id": sess,
                            "domain": "core"} for s, p, a, sess, _ in rows])
    refs = pd.DataFrame([(s, a, f, "read") for s, _, a, _, files in rows for f in files],
                        columns=["sprint_id", "agent", "path", "kind"])
    return agents, refs


def test_each_skip_reason_by_hand():
    import pandas as pd

    rows = [
        ("coach-1", "p", "dev", "s-coach", ["a.ts"]), ("coach-1", "p", "tw", "s-coach", ["b.ts"]),
        ("audit-1", "p", "dev", "s-audit", ["a.ts"]), ("audit-1", "p", "tw", "s-audit", ["b.ts"]),
        ("expl-1", "p", "dev", "s-expl", ["a.ts"]), ("expl-1", "p", "tw", "s-expl", ["b.ts"]),
        ("noproj-1", None, "dev", "s-work", ["a.ts"]), ("noproj-1", None, "tw", "s-work", ["b"]),
        ("solo-1", "p", "dev", "s-work", ["a.ts"]),
        ("single-1", "p", "dev", "s-work", ["a.ts", "b.ts"]),
        ("main-1", "p", "main", "s-work", ["a.ts"]), ("main-1", "p", "dev", "s-work", ["b.ts"]),
        ("q-1", "q", "dev", "s-work", ["a.ts"]), ("q-1", "q", "tw", "s-work", ["b.ts"]),
        ("ok-1", "p", "dev", "s-work", ["a.ts", "/brain/KERNEL.md", "agents/dev.md"]),
        ("ok-1", "p", "tw", "s-work", ["b.ts", "focus.md"]),
    ]
    agents, refs = frames(rows)
    info = SessionInfo(
        sessions=pd.DataFrame({"session_id": ["s-coach", "s-audit", "s-expl", "s-work"],
                               "type": ["coach", "work", "explore", "work"],
                               "mode": [None, "audit", None, "sprint"]}),
        contexts=pd.DataFrame({"session_type": ["work"], "path": ["focus.md"]}))
    agents, refs, sc = scope(agents, refs, {"p"}, info)
    reasons = {s: r if isinstance(r, str) else None
               for s, r in zip(sc.sprints["sprint_id"], sc.sprints["skip_reason"], strict=True)}
    assert reasons == {"coach-1": "coach", "audit-1": "audit",
                       "expl-1": "not use-brain/build-brain", "noproj-1": "no identified project",
                       "solo-1": "solo single-file", "single-1": "single agent",
                       "main-1": "solo single-file",  # main is the orchestrator, not planned
                       "q-1": "no declared contract", "ok-1": None}
    assert sc.replayed == 1 and sc.total == 9
    # boot context: layer 0, the session type's layers, the agent's own definition
    assert sorted(refs["path"]) == ["a.ts", "b.ts"]
    boot = agents.set_index("agent")
    assert boot.loc["dev", "boot_files"] == 2 and boot.loc["tw", "boot_files"] == 1
    assert boot.loc["dev", "boot_tokens"] == 2 * 8_000 / 4


def test_no_replayable_sprint_says_why(tmp_path):
    import random

    from click.testing import CliRunner

    from brainlab.cli import main
    from brainlab.synth.sprints import write_sprints

    brain, db = tmp_path / "brain", tmp_path / "b.duckdb"
    write_sprints(brain, [], random.Random(3))
    (brain / "projets" / "originsdigital.md").unlink()  # no declared contract at all
    CliRunner().invoke(main, ["ingest", "sprints", str(brain), "--db", str(db)])
    with pytest.raises(SimulationError, match="--contracts inferred"):
        broker.load_sprints(db)
    assert broker.load_sprints(db, contracts="inferred").scope.replayed > 0
