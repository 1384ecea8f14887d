"""Regulator-limit tuning (brainlab.sim.tuning_tickets) on crafted journals, answers by hand.

Each ticket uses its own stop code (or component) so every donor draw is forced. A relaunch is
a regulator session, a regulator RELANCE with a new fact, an accepted admission and a developer
session: 2 sessions. A wake-up (SPEC §6.6) is a supervisor decision, or the ticket ending or
escalating; a ticket is bad when it has one (view ticket_outcomes).

    ticket week      journal                                                 label
    A      2026-W02  code 15: stop + relaunch x3, 4th return -> ended (6 s)  bad (ended)
    G1     2026-W02  code 19: stop + relaunch x3 -> integrated (6 s)         good
    G2     2026-W02  code 20: stop + relaunch -> integrated (2 s)            good
    C      2026-W03  code 17: two refused decisions -> escalated (2 s)       bad (escalated)
    S      2026-W03  code 20 (other component): supervisor decides, relaunch
                     -> integrated (2 s)                                     bad (supervisor)
    C2     2026-W03  code 17 (other component): stop + relaunch -> integrated good (C's donor)
    O      2026-W03  a stop and a session, no end                            unlabelled, open

Alert = the rule set sends the ticket to the supervisor (replayed wake-ups >= 0.5).
- SPEC defaults: every ticket follows its journal: alerts A, C, S (3 in 2 weeks).
- max_relance_same_stop=2 (SPEC §6.5 three RELANCE): A and G1 are cut at their 3rd arrival
  (4 sessions each, ended): alerts A, G1, C, S -> precision 3/4, recall 1.
- max_refusals=2: C's 2nd refusal no longer goes up; C continues with C2's relaunch
  (integrated, no wake-up): alerts A, S -> precision 1, recall 2/3.
- both: alerts A, G1, S -> precision 2/3, recall 2/3.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from brainlab.common.errors import ConfigError, SimulationError
from brainlab.sim import tuning
from brainlab.sim.tuning import tickets as tuning_tickets
from brainlab.sources.circuits import CircuitsSource
from brainlab.spec.regulator import RegulatorRules
from brainlab.store import open_writer
from brainlab.store.ingest import run


class Ticket:
    """Events of one ticket, five minutes apart from ``start``."""

    def __init__(self, name, start):
        self.name, self.clock, self.lines = name, start, []

    def add(self, event, **fields):
        self.clock += timedelta(minutes=5)
        self.lines.append(json.dumps({"ticket": self.name, "event": event,
                                      "ts": self.clock.isoformat() + "Z", **fields}))
        return self

    def stop(self, code, component="parser", name="sans-livraison"):
        return self.add("stop", name=name, code=code, step="2.3", component=component, facts=[])

    def relaunch(self, by="regulator"):
        self.add("session", agent="regulateur", tokens=100)
        self.add("decision", by=by, kind="RELANCE_REPRENDRE", new_fact=True, facts=[])
        return self.add("admission", accepted=True).add("session", agent="developpeur",
                                                         tokens=100)

    def refused(self, reason):
        self.add("session", agent="regulateur", tokens=100)
        self.add("decision", by="regulator", kind="RELANCE_REPRENDRE", new_fact=True, facts=[])
        return self.add("admission", accepted=False, reason=reason)


def journals():
    w2, w3 = datetime(2026, 1, 5, 9), datetime(2026, 1, 12, 9)
    a = Ticket("A", w2)
    for _ in range(3):
        a.stop(15).relaunch()
    a.stop(15).add("end", outcome="ended")
    g1 = Ticket("G1", w2 + timedelta(days=1))
    for _ in range(3):
        g1.stop(19).relaunch()
    g1.add("end", outcome="integrated")
    g2 = Ticket("G2", w2 + timedelta(days=2)).stop(20).relaunch().add("end", outcome="integrated")
    c = Ticket("C", w3).stop(17).refused("fait-faux").refused("hors-titre")
    c.add("end", outcome="escalated")
    s = Ticket("S", w3 + timedelta(days=1)).stop(20, component="lexer").relaunch(by="supervisor")
    s.add("end", outcome="integrated")
    c2 = Ticket("C2", w3 + timedelta(days=2)).stop(17, component="lexer").relaunch()
    c2.add("end", outcome="integrated")
    o = Ticket("O", w3 + timedelta(days=3)).stop(15, component="open").add(
        "session", agent="developpeur", tokens=100)
    return [t.lines for t in (a, g1, g2, c, s, c2, o)]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    root = tmp_path_factory.mktemp("tickets")
    (root / "circuits").mkdir()
    lines = [line for ticket in journals() for line in ticket]
    (root / "circuits" / "crafted.jsonl").write_text("\n".join(lines) + "\n")
    path = root / "brainlab.duckdb"
    con = open_writer(path)
    try:
        run(con, [CircuitsSource()], root)
    finally:
        con.close()
    return path


def test_ticket_outcomes_labels(db):
    labels = tuning_tickets.outcomes(db).set_index("ticket")
    assert labels["is_bad"].to_dict() == {"A": True, "G1": False, "G2": False, "C": True,
                                          "S": True, "C2": False, "O": None}
    assert labels["bad_reason"].dropna().to_dict() == {
        "A": "ended", "C": "escalated", "S": "supervisor-decision"}
    assert labels.loc["O", "outcome"] == "open" and labels.loc["S", "wakeups"] == 1
    assert labels["iso_week"].tolist() == ["2026-W02"] * 3 + ["2026-W03"] * 4


def test_defaults_alert_exactly_the_bad_tickets(db):
    got = tuning_tickets.evaluate(db)
    assert (got["weeks"], got["alerts"], got["alerts_per_week"]) == (2, 3, 1.5)
    assert (got["true_positives"], got["false_positives"], got["false_negatives"]) == (3, 0, 0)
    assert got["bad_tickets"] == 3 and got["precision"] == 1.0 and got["recall"] == 1.0


def test_lower_relance_limit_cuts_loops(db):
    alerts = tuning_tickets.ticket_alerts(db, {"max_relance_same_stop": 2}).set_index("ticket")
    assert "O" not in alerts.index  # open: not replayed, not scored
    assert alerts["is_alert"].to_dict() == {"A": True, "G1": True, "G2": False, "C": True,
                                            "S": True, "C2": False}
    # cut at the 3rd arrival: 2 relaunches (4 sessions) kept, 2 saved, the circuit ends
    assert alerts.loc[["A", "G1"], "replay_sessions"].tolist() == [4, 4]
    assert alerts.loc[["A", "G1"], "sessions_saved"].tolist() == [2, 2]
    assert alerts.loc[["A", "G1"], "replay_outcome"].tolist() == ["ended", "ended"]
    got = tuning_tickets.evaluate(db, RegulatorRules(max_relance_same_stop=2))
    assert got["alerts"] == 4 and got["precision"] == 0.75 and got["recall"] == 1.0


def test_more_refusals_let_a_ticket_through(db):
    alerts = tuning_tickets.ticket_alerts(db, {"max_refusals": 2}).set_index("ticket")
    assert not alerts.loc["C", "is_alert"] and alerts.loc["C", "continued"]
    assert alerts.loc["C", "replay_outcome"] == "integrated"
    got = tuning_tickets.evaluate(db, {"max_refusals": 2})
    assert (got["alerts"], got["alerts_per_week"], got["false_negatives"]) == (2, 1.0, 1)
    assert got["precision"] == 1.0 and got["recall"] == pytest.approx(2 / 3)


@pytest.fixture(scope="module")
def ticket_sweep(db):
    return tuning.sweep(db, {"max_relance_same_stop": [3, 2], "max_refusals": [1, 2]},
                        kind="tickets")


def test_sweep_hand_computed(ticket_sweep):
    got = ticket_sweep.set_index(["max_relance_same_stop", "max_refusals"])
    assert got["alerts"].to_dict() == {(3, 1): 3, (3, 2): 2, (2, 1): 4, (2, 2): 3}
    assert got["alerts_per_week"].to_dict() == {(3, 1): 1.5, (3, 2): 1.0, (2, 1): 2.0,
                                                (2, 2): 1.5}
    assert got.loc[(2, 2), "precision"] == pytest.approx(2 / 3)
    assert got.loc[(2, 2), "recall"] == pytest.approx(2 / 3)
    assert list(ticket_sweep.columns) == ["max_relance_same_stop", "max_refusals",
                                          *tuning_tickets.TICKET_METRIC_COLUMNS]


@pytest.mark.parametrize(("budget", "expected"), [
    (2.0, (3, 1)),   # (3, 1) and (2, 1) recall 1; (3, 1) precision 1 > 0.75
    (1.5, (3, 1)),
    (1.0, (3, 2)),   # the only set within one alert per week
])
def test_recommend_tickets(ticket_sweep, budget, expected):
    best = tuning.recommend(ticket_sweep, budget)
    assert (best["max_relance_same_stop"], best["max_refusals"]) == expected


def test_recommend_tickets_over_budget(ticket_sweep):
    with pytest.raises(SimulationError, match="no threshold set"):
        tuning.recommend(ticket_sweep, 0.5)


def test_weekly_ticket_alerts(db):
    weekly = tuning_tickets.weekly_alerts(db, {"max_relance_same_stop": 2})
    assert weekly["iso_week"].tolist() == ["2026-W02", "2026-W03"]
    assert weekly["tickets"].tolist() == [3, 3]  # O (open) is not replayed
    assert weekly["alerts"].tolist() == [2, 2]  # A, G1 | C, S
    assert weekly["bad_tickets"].tolist() == [1, 2]
    assert weekly["true_positives"].tolist() == [1, 2]
    assert weekly["ended"].tolist() == [2, 0] and weekly["escalated"].tolist() == [0, 1]
    assert weekly["sessions_saved"].tolist() == [4, 0]


def test_ticket_grid_validation(db):
    with pytest.raises(ConfigError, match="unknown regulator rule"):
        tuning.sweep(db, {"conserve_close": [60]}, kind="tickets")
    with pytest.raises(ConfigError, match="kind"):
        tuning.sweep(db, {}, kind="nope")
