"""Issue 4 §6: the synthetic brain's sprints, rebuilt from its transcripts alone, show the
planted domain (protocol misses there, history does not), like the broker files do."""

from brainlab.sim.broker import load_sprints, replay
from brainlab.sources.contracts import ContractSource
from brainlab.sources.sprints import sprint_sources
from brainlab.store import ingest, open_writer
from brainlab.synth.sprints import PLANTED_DOMAIN, PROJECT, UNCONTRACTED
from brainlab.transcripts.ingest import ingest_claude


def _ingest_sprint_sessions(con, root):
    """The sprint sessions of the demo's transcripts (their sessions run in the repos)."""
    projects = root / "claude" / "projects"
    for project in (PROJECT, UNCONTRACTED):
        ingest_claude(con, projects / f"-home-dev-projects-{project}")


def test_transcript_sprints_show_the_planted_domain(demo, tmp_path):
    root = demo["root"]
    billing_names = demo["planted"]["transcript-sprints"]["sprints"]
    assert len(billing_names) >= 4
    db = tmp_path / "t.duckdb"
    con = open_writer(db)
    ingest.run(con, [ContractSource()], root)  # the contract only: no records, no broker files
    _ingest_sprint_sessions(con, root)
    assert con.execute("SELECT count(*) FROM ingest_errors").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM sprints").fetchone()[0] == 0
    con.close()
    rows = replay(load_sprints(db, contracts="all"), ["protocol", "history", "recorded"]).rows
    rows = rows.astype({"sprint_id": str, "agent": str, "domain": str, "policy": str})
    billing = rows[rows.domain == PLANTED_DOMAIN]
    # the broker's blocks named the sprints: the transcript spans carry those names
    assert sorted(billing.sprint_id.unique()) == sorted(billing_names)
    # each role's first billing sprint teaches history; after it, history misses nothing
    order = {name: i for i, name in enumerate(billing_names)}
    first = billing.groupby("agent").sprint_id.agg(lambda s: min(s, key=order.get))
    later = billing[billing.sprint_id != billing.agent.map(first)]
    assert len(later[later.policy == "history"]) >= 6
    protocol = later[later.policy == "protocol"]
    history = later[later.policy == "history"]
    doers = protocol[protocol.agent.isin(["developer", "testwriter"])]
    assert len(doers) >= 4
    assert (doers.misses == 2).all() and (doers.loaded == 2).all()  # 4 needed, 2 allowed
    assert history.misses.sum() == 0 and (history[history.agent == "developer"].hits == 4).all()
    # the broker's source maps came from the transcripts' inhale blocks (recorded policy)
    recorded = billing[(billing.policy == "recorded") & (billing.agent == "developer")]
    assert len(recorded) == len(billing_names)
    # until the planted switch to on-demand (synth plant broker-policy-change)
    switched = set(demo["planted"]["broker policy change"]["sprints"])
    assert (recorded[~recorded.sprint_id.isin(switched)].hits >= 2).all()
    assert (recorded[recorded.sprint_id.isin(switched)].loaded == 0).all()
    # the project without a contract: no blocks, one sprint per session, inferred contract
    side = rows[rows.project == UNCONTRACTED]
    assert len(side) and side.contract_inferred.all()


def test_records_and_transcripts_of_the_same_sprints_count_once(demo, tmp_path):
    db = tmp_path / "all.duckdb"
    con = open_writer(db)
    ingest.run(con, sprint_sources(), demo["root"])  # contract, broker files, JSONL record
    _ingest_sprint_sessions(con, demo["root"])
    planned = con.execute("SELECT count(DISTINCT sprint_id) FROM sprints").fetchone()[0]
    con.close()
    ss = load_sprints(db, contracts="all")  # side-tool's are inferred
    assert ss.scope.total == planned  # no transcript sprint added twice
    # every planned sprint is replayed or skipped once (one ran in audit mode: plant
    # broker-in-audit-mode, skipped as the seed never runs the broker there)
    assert ss.rows.sprint_id.nunique() == planned - ss.scope.skipped.get("audit", 0)
