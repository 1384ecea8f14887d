"""Each SPEC §6.5 rule on a crafted journal: outcome under the default rules and a changed limit.

Expected values are counted by hand from the journals below (sessions are `session` events;
a wake-up is a supervisor decision, or the ticket ending/escalating). docs/regulator.md gives
the replay semantics: cut = the ticket stops where the limit fires (one wake-up, later sessions
saved); continue = the ticket goes on with the journal of a donor stop of the same code and
relaunch rank that the circuit passed.
"""

from datetime import datetime, timedelta

import pytest

from brainlab.common.errors import ConfigError
from brainlab.sim.regulator import replay
from brainlab.spec.regulator import ADMISSION_REASONS, RegulatorRules, parse_rules


class Journal:
    """A tiny builder of SPEC §6.7 events, one ticket at a time, timestamps increasing."""

    def __init__(self):
        self.events = []
        self.clock = datetime(2026, 1, 5, 9, 0)

    def add(self, ticket, event, **fields):
        self.clock += timedelta(minutes=5)
        self.events.append({"ticket": ticket, "ts": self.clock.isoformat() + "Z",
                            "event": event, **fields})
        return self

    def stop(self, t, name="sans-livraison", code=15, step="2.3", component="parser", **kw):
        return self.add(t, "stop", name=name, code=code, step=step, component=component,
                        facts=[], **kw)

    def session(self, t, agent="developpeur", tokens=100, **kw):
        return self.add(t, "session", agent=agent, tokens=tokens, **kw)

    def decide(self, t, by="regulator", kind="RELANCE_REPRENDRE", new_fact=True):
        return self.add(t, "decision", by=by, kind=kind, new_fact=new_fact, facts=[])

    def admit(self, t, accepted=True, reason=None):
        return self.add(t, "admission", accepted=accepted,
                        **({"reason": reason} if reason else {}))

    def relaunch(self, t):
        """A regulator RELANCE accepted, then the relaunched developer: 2 sessions."""
        return self.session(t, "regulateur").decide(t).admit(t).session(t)

    def end(self, t, outcome):
        return self.add(t, "end", outcome=outcome)


def one(result, ticket, rules):
    frame = result.per_ticket
    row = frame[(frame.ticket == ticket) & (frame.rules == rules)]
    assert len(row) == 1
    return row.iloc[0]


def run(journal, *specs):
    return replay(journal.events, list(specs), draws=20, seed=1)


def test_rules_parse_variants_and_overrides():
    assert parse_rules("default") == RegulatorRules()
    assert parse_rules("max_relance_same_stop=2").max_relance_same_stop == 2
    lenient = parse_rules("lenient,max_reviews=5")
    assert lenient.max_refusals == 2 and lenient.max_reviews == 5
    assert parse_rules("escalate_without_new_fact=false").escalate_without_new_fact is False
    assert "a-repasser" not in parse_rules("table_policy=renvoi-testwriter").table_kinds()
    for bad in ("max_relances=2", "nosuchvariant", "max_reviews=x", "escalate_without_new_fact=2"):
        with pytest.raises(ConfigError):
            parse_rules(bad)


def test_three_relance_on_same_stop_ends_the_circuit():
    # SPEC §6.5: the same stop after three RELANCE in a row ends the circuit.
    j = Journal()
    for _ in range(3):
        j.stop("A").relaunch("A")
    # 4th return: ended, no regulator; 6 sessions before. It states its new fact: not stated,
    # SPEC §6.7 reads it as false and a looser limit could not take the stop any further.
    j.stop("A", new_fact=True).end("A", "ended")
    r = run(j, "default", "max_relance_same_stop=2", "max_relance_same_stop=4")
    d = one(r, "A", "default")
    assert (d.outcome, d.wakeups, d.sessions, d.loop_sessions) == ("ended", 1, 6, 6)
    s = one(r, "A", "max_relance_same_stop=2")  # cut at the 3rd arrival: 2 relaunches kept
    assert (s.outcome, s.wakeups, s.sessions, s.loop_sessions) == ("ended", 1, 4, 4)
    # Looser: continue at rank 4 with the only donor (A's own rank-3 relaunch, rank shifted by
    # one): one more relaunch (2 sessions), then the 5th return ends it.
    lo = one(r, "A", "max_relance_same_stop=4")
    assert (lo.outcome, lo.wakeups, lo.sessions, bool(lo.continued)) == ("ended", 1, 8, True)


def test_stop_back_without_new_fact_goes_up():
    # SPEC §6.3/§6.5: the same stop back with no new fact goes to the supervisor.
    j = Journal()
    j.stop("B").relaunch("B").stop("B", new_fact=False)
    j.decide("B", by="table", kind="MONTE", new_fact=False).end("B", "escalated")
    # Donor: the same code at rank 2, back with a new fact, relaunched, then integrated.
    j.stop("B2").relaunch("B2").stop("B2", new_fact=True).relaunch("B2").end("B2", "integrated")
    r = run(j, "default", "escalate_without_new_fact=false")
    d = one(r, "B", "default")
    assert (d.outcome, d.wakeups, d.sessions) == ("escalated", 1, 2)
    lo = one(r, "B", "escalate_without_new_fact=false")
    # 2 sessions before the return, then B2 from its rank-2 stop: 2 sessions, integrated.
    assert (lo.outcome, lo.wakeups, lo.sessions) == ("integrated", 0, 4)
    assert one(r, "B2", "escalate_without_new_fact=false").sessions == 4


def refused_twice(reasons=("fait-faux", "hors-titre")):
    j = Journal()
    j.stop("C").session("C", "regulateur").decide("C").admit("C", False, reasons[0])
    j.session("C", "regulateur").decide("C").admit("C", False, reasons[1]).end("C", "escalated")
    j.stop("C2").relaunch("C2").end("C2", "integrated")  # donor: same code, rank 1, passed
    return j


def test_second_refusal_goes_to_supervisor():
    # SPEC §6.5: after a refusal the regulator is resumed once; a second refusal goes up.
    r = run(refused_twice(), "default", "max_refusals=0", "max_refusals=2")
    d = one(r, "C", "default")
    assert (d.outcome, d.wakeups, d.sessions) == ("escalated", 1, 2)
    s = one(r, "C", "max_refusals=0")  # up at the first refusal: the resumed session saved
    assert (s.outcome, s.wakeups, s.sessions) == ("escalated", 1, 1)
    lo = one(r, "C", "max_refusals=2")  # continue with C2's relaunch: 2 sessions, integrated
    assert (lo.outcome, lo.wakeups, lo.sessions) == ("integrated", 0, 2)


@pytest.mark.parametrize("reason", ADMISSION_REASONS)
def test_each_admission_rule_refuses(reason):
    # SPEC §6.5 admission rules: a refused decision, then an accepted one.
    j = Journal()
    j.stop("D").session("D", "regulateur").decide("D").admit("D", False, reason)
    j.relaunch("D").end("D", "integrated")  # 3 sessions
    switch = "refuse_" + reason.replace("-", "_") + "=false"
    r = run(j, "default", "max_refusals=0", f"max_refusals=0,{switch}")
    assert (one(r, "D", "default").outcome, one(r, "D", "default").sessions) == ("integrated", 3)
    s = one(r, "D", "max_refusals=0")  # no retry after a refusal: up at once
    assert (s.outcome, s.wakeups, s.sessions) == ("escalated", 1, 1)
    off = one(r, "D", f"max_refusals=0,{switch}")  # that rule off: the refusal does not count
    assert (off.outcome, off.wakeups, off.sessions) == ("integrated", 0, 3)


def test_missing_decision_asked_again_once():
    # SPEC §6.5: a missing or malformed decision is asked for again once; the 2nd miss goes up.
    j = Journal()
    j.stop("F").session("F", "regulateur").admit("F", False, "fiche-absente")
    j.session("F", "regulateur").admit("F", False, "fiche-absente").end("F", "escalated")
    j.stop("F2").relaunch("F2").end("F2", "integrated")
    r = run(j, "default", "max_fiche_reasks=0", "max_fiche_reasks=2")
    d = one(r, "F", "default")
    assert (d.outcome, d.wakeups, d.sessions) == ("escalated", 1, 2)
    s = one(r, "F", "max_fiche_reasks=0")
    assert (s.outcome, s.wakeups, s.sessions) == ("escalated", 1, 1)
    lo = one(r, "F", "max_fiche_reasks=2")
    assert (lo.outcome, lo.wakeups, lo.sessions) == ("integrated", 0, 2)


def test_fourth_questioned_round_goes_up():
    # SPEC §6.5: up to 4 questioning rounds; a 4th round still questioned goes up (18).
    j = Journal()
    j.stop("Q").session("Q", "regulateur")
    for i in range(4):
        j.session("Q", "questionneur", questioned=True)
        if i < 3:
            j.session("Q", "regulateur")
    j.end("Q", "escalated")  # 1 + 4 + 3 = 8 sessions
    # Q2: three questioned rounds, then agreed: passes under the default.
    j.stop("Q2").session("Q2", "regulateur")
    for _ in range(3):
        j.session("Q2", "questionneur", questioned=True).session("Q2", "regulateur")
    j.session("Q2", "questionneur", questioned=False).decide("Q2").admit("Q2").session("Q2")
    j.end("Q2", "integrated")  # 1 + 6 + 1 + 1 = 9 sessions
    r = run(j, "default", "max_question_rounds=3", "max_question_rounds=5")
    assert (one(r, "Q", "default").outcome, one(r, "Q", "default").sessions) == ("escalated", 8)
    assert (one(r, "Q2", "default").outcome, one(r, "Q2", "default").wakeups) == ("integrated", 0)
    s = one(r, "Q", "max_question_rounds=3")  # up after the 3rd questioned round: 6 sessions
    assert (s.outcome, s.wakeups, s.sessions) == ("escalated", 1, 6)
    s2 = one(r, "Q2", "max_question_rounds=3")  # cut: the same 6 sessions, then up
    assert (s2.outcome, s2.wakeups, s2.sessions) == ("escalated", 1, 6)
    lo = one(r, "Q", "max_question_rounds=5")  # continue with Q2 (the only donor): 9 sessions
    assert (lo.outcome, lo.wakeups, lo.sessions) == ("integrated", 0, 9)


def test_regulator_rules_on_at_most_three_stops_per_arbitration():
    # SPEC §6.5: at most three regulator stops per arbitration (same step and component).
    j = Journal()
    for name, code in (("sans-livraison", 15), ("hors-portee", 19), ("besoin", 20)):
        j.stop("R", name=name, code=code).relaunch("R")
    j.stop("R", name="controles", code=None)  # the 4th goes to the supervisor
    j.decide("R", by="supervisor").session("R").end("R", "integrated")  # 7 sessions, 1 wake-up
    j.stop("R2", name="controles", code=None, step="3").relaunch("R2").end("R2", "integrated")
    r = run(j, "default", "max_regulator_stops=2", "max_regulator_stops=4")
    d = one(r, "R", "default")
    assert (d.outcome, d.wakeups, d.sessions) == ("integrated", 1, 7)
    s = one(r, "R", "max_regulator_stops=2")  # cut at the 3rd stop's arrival: 4 sessions
    assert (s.outcome, s.wakeups, s.sessions) == ("escalated", 1, 4)
    lo = one(r, "R", "max_regulator_stops=4")  # a regulator instead: R2's relaunch, 6 + 2
    assert (lo.outcome, lo.wakeups, lo.sessions) == ("integrated", 0, 8)


def test_third_rendered_review_stops():
    # SPEC §6.5: a 3rd rendered review stops the circuit (16).
    j = Journal()
    for i in range(3):
        j.session("V", "relecteur").add("V", "review", verdict="RENDU")
        if i < 2:
            j.session("V")
    j.stop("V", name="relecture-arret", code=16, step="4", component=".").relaunch("V")
    j.session("V", "relecteur").add("V", "review", verdict="ACCEPTÉ").end("V", "integrated")
    r = run(j, "default", "max_reviews=2", "max_reviews=4")
    d = one(r, "V", "default")  # rel dev rel dev rel | reg dev | rel = 8
    assert (d.outcome, d.wakeups, d.sessions) == ("integrated", 0, 8)
    s = one(r, "V", "max_reviews=2")  # cut at the 2nd RENDU: rel dev rel = 3
    assert (s.outcome, s.wakeups, s.sessions) == ("ended", 1, 3)
    # Looser: the 3rd RENDU does not stop; the only donor is V after its 2nd RENDU (review
    # numbers shifted by one): dev rel (4th RENDU stops), reg dev, rel ACCEPTÉ: 5 more.
    lo = one(r, "V", "max_reviews=4")
    assert (lo.outcome, lo.wakeups, lo.sessions, bool(lo.continued)) == ("integrated", 0, 10, True)


def test_table_policy_counts_toward_regulator_stops():
    # SPEC §6.3: a stop kind the table decides is not a regulator stop; taken off the table,
    # it counts toward max_regulator_stops.
    j = Journal()
    j.stop("T", kind="a-repasser").decide("T", by="table").session("T")
    for name, code in (("hors-portee", 19), ("besoin", 20)):
        j.stop("T", name=name, code=code).relaunch("T")
    j.stop("T", name="controles", code=None).relaunch("T").end("T", "integrated")  # 7 sessions
    r = run(j, "default", "table_policy=none")
    assert (one(r, "T", "default").outcome, one(r, "T", "default").sessions) == ("integrated", 7)
    s = one(r, "T", "table_policy=none")  # 4th regulator stop: cut at its arrival, 5 sessions
    assert (s.outcome, s.wakeups, s.sessions) == ("escalated", 1, 5)
