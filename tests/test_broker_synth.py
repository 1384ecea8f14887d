"""The planted effect: in the four-file domain protocol misses and history does not."""

import random

from brainlab.sim.broker import load_sprints, replay
from brainlab.sources.sprints import sprint_sources
from brainlab.store import ingest, open_writer
from brainlab.synth.sprints import PLANTED_DOMAIN, UNCONTRACTED, write_sprints


def test_replay_finds_the_planted_domain(tmp_path):
    brain, db = tmp_path / "brain", tmp_path / "b.duckdb"
    effects = write_sprints(brain, [], random.Random(5))
    planted = effects[0]["sprints"]
    assert len(planted) >= 4
    con = open_writer(db)
    ingest.run(con, sprint_sources(), brain)
    con.close()
    rows = replay(load_sprints(db), ["protocol", "history", "recorded"]).rows
    billing = rows[rows.domain == PLANTED_DOMAIN]
    later = billing[billing.sprint_id != planted[0]]
    protocol = later[later.policy == "protocol"]
    history = later[later.policy == "history"]
    doers = protocol[protocol.agent.isin(["developer", "testwriter"])]
    assert (doers.misses == 2).all() and (doers.loaded == 2).all()  # 4 needed, 2 allowed
    assert history.misses.sum() == 0 and (history[history.agent == "developer"].hits == 4).all()
    # elsewhere the protocol does fine for the developer, who touches at most 2 files
    other = rows[(rows.domain != PLANTED_DOMAIN) & (rows.policy == "protocol")
                 & (rows.agent == "developer") & ~rows.contract_inferred]
    assert other.misses.sum() == 0
    # the broker's recorded maps were read back (it followed the protocol, plus extras)
    recorded = billing[(billing.policy == "recorded") & (billing.agent == "developer")]
    assert (recorded.hits >= 2).all()
    assert rows[rows.project == UNCONTRACTED].contract_inferred.all()
