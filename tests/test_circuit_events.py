"""Issue 41 item 7: the circuit-skills events in the journal (docs/regulator.md section 3).

The référent-technique's verdict (``tranché`` / ``monte au responsable``), answers to plan
questions (``CHANGE`` / ``GARDE``), ``sous-charge`` and ``decouverte`` (a finding filed as a closed
ticket) load as events, unknown fields kept; a verdict that goes up to the responsible person is
a supervisor wake-up, in the ``tickets`` view and in the replay alike; a bad value drops only
that event.
"""

from __future__ import annotations

import json

from brainlab.sim.regulator_checks import backtest, load_history
from brainlab.sources.circuits import CircuitsSource
from brainlab.store import ingest, open_writer, query


def journal(tmp_path, events):
    folder = tmp_path / "circuits"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "j.jsonl").write_text("\n".join(json.dumps(e, ensure_ascii=False)
                                              for e in events) + "\n", encoding="utf-8")
    db = tmp_path / "c.duckdb"
    con = open_writer(db)
    try:
        ingest.run(con, [CircuitsSource()], tmp_path)
    finally:
        con.close()
    return db


def ticket(name, *middle, outcome="integrated"):
    events = [{"ticket": name, "ts": "2026-01-05T10:00:00Z", "event": "step", "step": "1.1",
               "component": "."}]
    for i, e in enumerate(middle):
        events.append({"ticket": name, "ts": f"2026-01-05T10:{i + 1:02d}:00Z", **e})
    events.append({"ticket": name, "ts": "2026-01-05T11:00:00Z", "event": "end",
                   "outcome": outcome})
    return events


def test_skill_events_load_and_a_raised_verdict_wakes_the_supervisor(tmp_path):
    events = ticket(
        "T-1",
        {"event": "answer", "answer": "CHANGE", "by": "referent-technique", "question": "q?"},
        {"event": "answer", "answer": "GARDE", "by": "referent-technique"},
        {"event": "session", "agent": "referent-technique", "tokens": 100},
        {"event": "verdict", "verdict": "monte au responsable", "question": "consommation ?"},
        {"event": "verdict", "verdict": "tranché", "reviewer_note": "kept"},
        {"event": "decouverte", "filed": "T-1-d1", "by": "referent-technique"},
        {"event": "sous-charge", "component": "parser"},
        {"event": "answer", "answer": "PEUT-ETRE"},  # not CHANGE or GARDE: this event only
    ) + ticket("T-2")
    db = journal(tmp_path, events)
    row = query(db, "SELECT * FROM tickets WHERE ticket = 'T-1'").iloc[0]
    assert row.verdicts_raised == 1 and row.wakeups == 1  # integrated: only the verdict
    assert row.plan_answers == 2 and row.plan_changes == 1 and row.findings_filed == 1
    assert row.replayable and row.events_dropped == 1
    kept = query(db, "SELECT extra FROM circuit_events WHERE event = 'verdict'"
                     " AND verdict = 'tranché'")["extra"].iloc[0]
    assert json.loads(kept)["reviewer_note"] == "kept"  # unknown fields kept
    # the replay counts the same wake-up: the back-test reproduces the view
    history = load_history(db)
    bt = backtest(history, draws=50).set_index("figure")
    assert bt.loc["wakeups_per_ticket", "replayed"] == 0.5 == bt.loc["wakeups_per_ticket",
                                                                      "recorded"]
    assert bt["covered"].all()


def test_the_synthetic_journals_hold_the_skill_events():
    import random
    from collections import Counter
    from datetime import datetime

    from brainlab.synth.circuits import generate_tickets

    tickets = generate_tickets(random.Random(5), datetime(2026, 1, 5), datetime(2026, 3, 2), 200)
    kinds = Counter(e["event"] for t in tickets for e in t)
    assert kinds["answer"] and kinds["verdict"] and kinds["sous-charge"] and kinds["decouverte"]
    verdicts = {e["verdict"] for t in tickets for e in t if e["event"] == "verdict"}
    assert verdicts == {"tranché", "monte au responsable"}
