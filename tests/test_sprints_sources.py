"""Sprint records, broker blocks and contracts: parsing, error rows, store views, transcripts."""

import json

import pandas as pd
import pytest
from conftest import SHARED

from brainlab.sim.broker import load_sprints, replay
from brainlab.sources.broker_blocks import find_blocks
from brainlab.sources.contracts import parse_contract
from brainlab.sources.sprints import sprint_sources
from brainlab.store import ingest, open_writer, query

SEED = SHARED / "protocol" / "seeds" / "context-broker.md.txt"

BLOCKS = """# notes
Context-broker — inhale sprint auth-1

Projet détecté : shop
Mode           : sprint

Source map :
  developer → ["auth.middleware.ts", "auth.routes.ts"]
  reviewer → []   ← contexte boot suffisant

Exclusions explicites :
  "video.routes.ts" — tentant mais hors domaine sprint

→ Passer à tech-lead gate.

Context-broker — expire sprint auth-1

Release map :
  LIBÉRER : ["auth.middleware.ts"]
  GARDER  : ["auth.routes.ts"] — pagination non testée

Breath metrics :
  context_load : 1.5
  stale_ratio  : 25%
  breath_depth : +1
  exhale_rate  : 50%
"""


def test_find_blocks_reads_both_formats():
    blocks, errors = find_blocks(BLOCKS)
    assert errors == []
    inhale, expire = blocks
    assert (inhale.kind, inhale.sprint, inhale.project, inhale.mode) == \
        ("inhale", "auth-1", "shop", "sprint")
    loads = [(f["agent"], f["path"]) for f in inhale.files if f["action"] == "load"]
    assert loads == [("developer", "auth.middleware.ts"), ("developer", "auth.routes.ts")]
    assert [f["agent"] for f in inhale.files if f["action"] == "agent"] == ["developer",
                                                                           "reviewer"]
    assert [f["path"] for f in inhale.files if f["action"] == "exclude"] == ["video.routes.ts"]
    assert expire.reason == "pagination non testée"
    assert [(f["path"], f["action"]) for f in expire.files] == \
        [("auth.middleware.ts", "libérer"), ("auth.routes.ts", "garder")]
    assert expire.metrics["stale_ratio"] == 0.25 and expire.metrics["breath_depth"] == 1


def test_find_blocks_malformed_lines_become_errors():
    text = ("Context-broker — inhale sprint s\nSource map :\n  dev → [\"a.ts\"\n"
            "Context-broker — expire sprint s\n  context_load : lots\n"
            "Context-broker — inhale sprint\n")
    blocks, errors = find_blocks(text)
    reasons = " | ".join(r for _, r in errors)
    assert "unclosed file list" in reasons
    assert "not a number" in reasons
    assert "no release map" in reasons
    assert "without a sprint name" in reasons
    assert [b.kind for b in blocks] == ["inhale"]  # the source-map header was still seen


def test_contract_from_seed_and_fenced_block():
    contract, errors = parse_contract(SEED.read_text(encoding="utf-8"))
    assert errors == [] and contract["id"] == "originsdigital"
    assert contract["domains"]["video"][0] == ["video.routes.ts", "Video.ts"]
    fenced, errors = parse_contract("```yaml\nprojet:\n  id: x\n  domaines:\n"
                                    "    a: [f.ts]\n    b: oops\n```\n")
    assert list(fenced["domains"]) == ["a"] and "expected" in errors[0][1]


@pytest.fixture
def brain(tmp_path):
    root = tmp_path / "brain"
    (root / "projets").mkdir(parents=True)
    (root / "progression" / "broker").mkdir(parents=True)
    (root / "progression" / "sprints").mkdir(parents=True)
    (root / "projets" / "shop.md").write_text(
        "# Shop\nprojet:\n  id : \"shop\"\n  domaines :\n"
        "    auth : [\"auth.middleware.ts\", \"auth.routes.ts\"]\n", encoding="utf-8")
    (root / "projets" / "tool.md").write_text("# Tool, no contract\n", encoding="utf-8")
    (root / "progression" / "broker" / "2026-03-02-auth-1.md").write_text(BLOCKS,
                                                                          encoding="utf-8")
    lines = [
        {"sprint": "auth-1", "project": "shop", "domain": "auth", "agent": "developer",
         "referenced": ["src/auth/auth.routes.ts"], "touched": ["src/auth/auth.routes.ts"],
         "open_todos": ["auth"], "bytes": {"auth.routes.ts": 4000,
                                           "auth.middleware.ts": 2000}},
        {"sprint": "auth-1", "project": "shop", "domain": "auth", "agent": "reviewer",
         "referenced": [{"path": "src/auth/auth.middleware.ts", "kind": "search"}]},
        {"sprint": "t-1", "project": "tool", "agent": "developer",
         "referenced": ["src/cli/main.py", "src/core/x.py"], "touched": ["src/cli/main.py"]},
    ]
    bad = ["{not json", json.dumps({"sprint": "x", "agent": "a"}),
           json.dumps({"sprint": "x", "project": "p", "agent": "a", "referenced": "a.ts"}),
           json.dumps({"sprint": "x", "project": "p", "agent": "a",
                       "referenced": [{"path": "a", "kind": "glance"}]}),
           json.dumps(lines[0]),  # duplicate sprint/agent
           json.dumps({"sprint": "auth-1", "project": "other", "agent": "qa"}),
           json.dumps({"sprint": "y", "project": "p", "agent": "a", "started_at": "soon"})]
    (root / "progression" / "sprints" / "s.jsonl").write_text(
        "\n".join(json.dumps(x) for x in lines) + "\n" + "\n".join(bad) + "\n",
        encoding="utf-8")
    return root


def ingest_brain(root, db):
    con = open_writer(db)
    try:
        return ingest.run(con, sprint_sources(), root)
    finally:
        con.close()


def test_ingest_error_rows_and_views(brain, tmp_path):
    db = tmp_path / "b.duckdb"
    summary = ingest_brain(brain, db)
    errors = query(db, "SELECT line, reason FROM ingest_errors WHERE source = 'sprints' "
                       "ORDER BY line")
    assert errors["line"].tolist() == [4, 5, 6, 7, 8, 9, 10]
    assert "invalid JSON" in errors.reason[0] and "duplicate" in errors.reason[4]
    assert query(db, "SELECT count(*) n FROM sprint_agents").n[0] == 3
    warn = query(db, "SELECT severity FROM ingest_errors WHERE source = 'contracts'")
    assert warn.severity.tolist() == ["warning"]  # tool.md has no contract
    loads = query(db, "SELECT agent, loaded FROM broker_recorded_loads ORDER BY agent")
    assert [list(x) for x in loads.loaded] == [["auth.middleware.ts", "auth.routes.ts"], []]
    inputs = query(db, "SELECT sprint_id, agent, loaded, released FROM sprint_agent_inputs "
                       "ORDER BY sprint_id, agent")
    assert list(inputs.released[0]) == ["auth.middleware.ts"]
    contracts = query(db, "SELECT domain, path, inferred FROM project_contract_files "
                          "WHERE project = 'tool' ORDER BY domain")
    assert contracts.values.tolist() == [["cli", "src/cli/main.py", True],
                                         ["core", "src/core/x.py", True]]
    # re-ingesting the same files changes nothing
    again = ingest_brain(brain, db)
    assert sum(again.loaded.values()) == 0 and sum(summary.loaded.values()) == 4


def test_replay_from_store_uses_recorded_maps_and_labels_inferred(brain, tmp_path):
    db = tmp_path / "b.duckdb"
    ingest_brain(brain, db)
    ss = load_sprints(db, contracts="all")
    result = replay(ss, ["recorded", "protocol"], miss_overhead_tokens=0)
    rows = result.rows.set_index(["sprint_id", "agent", "policy"])
    dev = rows.loc[("auth-1", "developer", "recorded")]
    # loaded middleware (waste) + routes (hit); the broker released middleware, kept routes
    assert (dev.loaded, dev.hits, dev.waste, dev.released, dev.kept) == (2, 1, 1, 1, 1)
    assert dev.tokens_loaded == (4000 + 2000) / 4
    assert rows.loc[("auth-1", "reviewer", "recorded")].misses == 1
    # t-1 (project tool, no contract): labelled inferred; one agent, so not the broker's
    # (seeds/context-broker.md.txt:241): counted as skipped, not replayed
    tool = ss.scope.sprints.set_index("sprint_id").loc["t-1"]
    assert tool.contract == "inferred" and tool.skip_reason == "single agent"
    assert "t-1" not in set(result.rows["sprint_id"].astype(str))


def test_transcript_sprints(tmp_path):
    """Sprints from the transcript relations' columns (fixture tables on a schema-less file,
    so the test holds whether or not the real cc_* views are on this branch)."""
    from brainlab.sim.sprintset import SprintSet
    from brainlab.sim.transcript_sprints import transcript_inputs
    from brainlab.store import StoreConfig, connect

    con = connect(StoreConfig(path=tmp_path / "t.duckdb", read_only=False))
    try:
        assert transcript_inputs(con) is None  # no transcript relations: nothing added
        con.execute("CREATE TABLE cc_tool_calls (session_id VARCHAR, agent_id VARCHAR, "
                    "subagent_type VARCHAR, ts TIMESTAMP, tool VARCHAR, file_path VARCHAR, "
                    "pattern VARCHAR, launched_subagent_type VARCHAR, is_git_commit BOOLEAN, "
                    "source_file VARCHAR, line BIGINT)")
        con.execute("CREATE TABLE cc_requests (session_id VARCHAR, agent_id VARCHAR, "
                    "project VARCHAR, cwd VARCHAR, ts TIMESTAMP)")
        con.execute("CREATE TABLE broker_blocks (sprint VARCHAR, kind VARCHAR, ts TIMESTAMP, "
                    "project VARCHAR, session_id VARCHAR)")
        con.execute("INSERT INTO cc_requests VALUES "
                    "('S1', NULL, 'shop', '/r', '2026-03-02 10:00'), "
                    "('S2', NULL, 'shop', '/r', '2026-03-03 10:00')")
        calls = [
            ("S1", None, None, "2026-03-02 10:05", "Read", "/r/src/auth/a.ts"),
            ("S1", "x1", "developer", "2026-03-02 10:06", "Edit", "/r/src/auth/b.ts"),
            ("S1", "x1", "developer", "2026-03-02 10:07", "Bash", None),
            ("S1", None, None, "2026-03-02 12:00", "Read", "/r/src/auth/late.ts"),
            ("S2", None, None, "2026-03-03 10:05", "Grep", "/r/src/auth"),
            ("S2", None, None, "2026-03-03 10:06", "Write", "/r/src/auth/c.ts"),
        ]
        for c in calls:
            con.execute("INSERT INTO cc_tool_calls (session_id, agent_id, subagent_type, ts, "
                        "tool, file_path) VALUES (?, ?, ?, ?, ?, ?)", list(c))
        # S1 has broker markers: the span 10:00-11:00 is sprint 'auth-1'
        con.execute("INSERT INTO broker_blocks VALUES "
                    "('auth-1', 'inhale', '2026-03-02 10:00', 'shop', 'S1'), "
                    "('auth-1', 'expire', '2026-03-02 11:00', 'shop', 'S1')")
        agents, refs = transcript_inputs(con)
    finally:
        con.close()
    empty = pd.DataFrame(columns=["project", "domain", "path", "position", "inferred"])
    ss = SprintSet.build(agents, refs, empty)
    keys = set(zip(ss.rows.sprint_id, ss.rows.agent, strict=True))
    assert keys == {("auth-1", "main"), ("auth-1", "developer"), ("S2", "main")}
    result = replay(ss, ["on-demand"]).rows.astype({"sprint_id": str, "agent": str})
    result = result.set_index(["sprint_id", "agent"])
    assert result.loc[("auth-1", "main")].referenced == 1  # late.ts is outside the span
    assert result.loc[("S2", "main")].referenced == 2  # the Grep path and the Write
    dev = result.loc[("auth-1", "developer")]
    assert dev.domain == "auth" and bool(dev.contract_inferred)  # parent directory, inferred
