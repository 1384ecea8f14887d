"""Circuit journals into circuit_events and the tickets view (SPEC §6.6, §6.7)."""

import json
import random
from datetime import datetime

from brainlab.sim.circuit_arrays import compile_journals
from brainlab.sim.regulator import load_journals, replay
from brainlab.sources.circuits import CircuitsSource
from brainlab.store import open_writer, query
from brainlab.store.ingest import run
from brainlab.synth.circuits import write_circuits


def ingest(root, db):
    con = open_writer(db)
    try:
        return run(con, [CircuitsSource()], root)
    finally:
        con.close()


def line(ticket, minute, event, **fields):
    return json.dumps({"ticket": ticket, "ts": f"2026-01-05T10:{minute:02d}:00Z",
                       "event": event, **fields})


GOOD = [
    line("T-1", 0, "step", step="1.1", component="."),
    line("T-1", 1, "session", agent="developpeur", tokens=1000),
    line("T-1", 2, "stop", name="sans-livraison", code=15, step="2.3", component="p", facts=[]),
    line("T-1", 3, "session", agent="regulateur", tokens=200),
    line("T-1", 4, "decision", by="regulator", kind="RELANCE_DEPUIS", new_fact=True, facts=[],
         depuis=[{"component": "p", "agent": "testwriter"}], note="kept"),
    line("T-1", 5, "admission", accepted=False, reason="fait-faux"),
    line("T-1", 6, "session", agent="regulateur", tokens=200),
    line("T-1", 7, "decision", by="regulator", kind="RELANCE_REPRENDRE", new_fact=False, facts=[]),
    line("T-1", 8, "admission", accepted=True),
    line("T-1", 9, "session", agent="developpeur", tokens=1000),
    line("T-1", 10, "stop", name="sans-livraison", code=15, step="2.3", component="p", facts=[]),
    line("T-1", 11, "decision", by="supervisor", kind="RELANCE_REPRENDRE", new_fact=True),
    line("T-1", 12, "session", agent="developpeur", tokens=1000),
    line("T-1", 13, "review", verdict="RENDU"),
    line("T-1", 14, "end", outcome="integrated"),
]


def test_tickets_view_counts_a_crafted_ticket(tmp_path):
    (tmp_path / "circuits").mkdir()
    (tmp_path / "circuits" / "a.jsonl").write_text("\n".join(GOOD) + "\n")
    db = tmp_path / "db.duckdb"
    summary = ingest(tmp_path, db)
    assert summary.total_errors == 0
    t = query(db, "SELECT * FROM tickets").iloc[0]
    assert (t.stops, t.stops_15, t.stops_16) == (2, 2, 0)
    assert (t.decisions_by_regulator, t.decisions_by_supervisor, t.decisions_by_table) == (2, 1, 0)
    kinds = (t.decisions_relance_depuis, t.decisions_relance_reprendre, t.decisions_monte)
    assert kinds == (1, 2, 0)
    assert (t.refused_decisions, t.reviews_rendered, t.relaunches_without_new_fact) == (1, 1, 1)
    # one supervisor decision; integrated, so the end wakes nobody
    assert (t.wakeups, t.sessions, t.tokens, t.outcome) == (1, 5, 3400, "integrated")
    # the stop came back: the 3 sessions of its first episode are a loop
    assert t.loop_sessions == 3
    assert t.hours_to_integration == 14 / 60
    extra = query(db, "SELECT extra FROM circuit_events "
                      "WHERE event = 'decision' AND extra IS NOT NULL")
    assert json.loads(extra.extra[0]) == {"note": "kept"}
    assert ingest(tmp_path, db).unchanged == {"circuits": 1}  # re-ingest changes nothing


def test_bad_lines_cost_their_event_and_every_ticket_loads(tmp_path):
    # SPEC §6.7: a bad line costs its own event; a missing optional field costs nothing.
    bad = [
        line("T-2", 5, "step", step="1.1", component="."),
        line("T-2", 1, "step", step="1.2", component="."),  # out of order: dropped
        line("T-2", 6, "end", outcome="integrated"),
        line("T-3", 1, "teleport", step="1.1"),  # unknown event: dropped
        line("T-3", 2, "end", outcome="integrated"),
        line("T-4", 1, "session", agent="developpeur"),  # tokens are optional: loads
        line("T-4", 2, "end", outcome="integrated"),
        line("T-5", 1, "end", outcome="integrated"),
        line("T-5", 2, "step", step="1.1", component="."),  # after the end: dropped
        "{not json",
    ]
    (tmp_path / "j.jsonl").write_text("\n".join(GOOD + bad) + "\n")
    db = tmp_path / "db.duckdb"
    ingest(tmp_path, db)
    t = query(db, "SELECT * FROM tickets ORDER BY ticket").set_index("ticket")
    assert list(t.index) == ["T-1", "T-2", "T-3", "T-4", "T-5"] and t.replayable.all()
    assert list(t.events_dropped) == [0, 1, 1, 0, 1]
    assert t.loc["T-4", "sessions"] == 1 and t.loc["T-4", "tokens"] == 0
    errors = query(db, "SELECT line, reason FROM ingest_errors ORDER BY line")
    reasons = " | ".join(errors.reason)
    for expected in ("out of order", "unknown event 'teleport'", "after the ticket's end",
                     "not JSON"):
        assert expected in reasons
    assert list(errors.line) == [17, 19, 24, 25]
    per = replay(load_journals(db), "default", draws=5, seed=0).per_ticket
    assert sorted(per.ticket) == ["T-1", "T-2", "T-3", "T-4", "T-5"]


def test_default_replay_reproduces_the_tickets_view(tmp_path):
    write_circuits(tmp_path, random.Random(11), datetime(2026, 1, 5), datetime(2026, 3, 2), 300)
    db = tmp_path / "db.duckdb"
    assert ingest(tmp_path, db).total_errors == 0
    view = query(db, "SELECT ticket, outcome, wakeups, sessions, tokens, loop_sessions "
                     "FROM tickets ORDER BY ticket").set_index("ticket")
    codes = set(query(db, "SELECT DISTINCT code_label FROM circuit_stops").code_label)
    assert {"15", "16", "17", "18", "19", "20", "23", "controles"} <= codes
    counts = query(db, "SELECT sum(refused_decisions) r, sum(questioning_rounds) q, "
                       "sum(reviews_rendered) v FROM tickets").iloc[0]
    assert counts.r > 0 and counts.q > 0 and counts.v > 0
    result = replay(load_journals(db), "default", draws=5, seed=0)
    per = result.per_ticket.set_index("ticket").loc[view.index]
    assert not per.continued.any()
    assert (per.outcome == view.outcome).all()
    for column in ("wakeups", "sessions", "tokens", "loop_sessions"):
        assert (per[column].to_numpy() == view[column].to_numpy()).all(), column


def test_compile_accepts_raw_journal_dicts():
    events = [json.loads(x) for x in GOOD]
    c = compile_journals(events)
    assert c.n == 1 and list(c.total[0]) == [5, 3400, 1, 3]
