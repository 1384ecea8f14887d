"""Circuit journals as people write them (SPEC §6.7, issue 16).

Optional fields may be left out without losing anything; a problem in one event costs that event,
or, when the lost event is a stop or the end, marks the ticket not replayable with the reason,
visible in the ``tickets`` view and in the replay's output.
"""

import json

import pytest
from click.testing import CliRunner

from brainlab.cli import main
from brainlab.sim.regulator import format_summary, load_journals, replay
from brainlab.sources.circuits import CircuitsSource
from brainlab.store import open_writer, query
from brainlab.store.ingest import run

# Rule sets whose limits read the optional fields: new_fact (escalate_without_new_fact, the
# relaunch limit), refusal reasons (max_refusals), rounds (max_question_rounds), reviews.
RULES = ["default", "max_relance_same_stop=1", "max_refusals=0", "max_question_rounds=2",
         "escalate_without_new_fact=false", "lenient"]
COMPARED = ["outcome", "wakeups", "sessions", "loop_sessions", "continued"]


def ev(ticket, minute, event, **fields):
    return {"ticket": ticket, "ts": f"2026-01-05T10:{minute:02d}:00Z", "event": event, **fields}


def full_journal():
    """Four tickets covering every event kind, every optional field written.

    Where a rule needs an optional field, the written value is the one SPEC §6.7 reads when it
    is missing (a stop back without new fact, questioned rounds, reviews accepted), so the
    journal with the field left out must replay exactly the same.
    """
    t1 = [
        ev("T-1", 0, "step", step="1.1", component=".", note="survey"),  # unknown: kept
        ev("T-1", 1, "session", agent="developpeur", tokens=1000, questioned=True),
        ev("T-1", 2, "stop", name="sans-livraison", code=15, step="2.3", component="parser",
           facts=["sans-changement", "parser"], kind="sans-livraison-dev", new_fact=True),
        ev("T-1", 3, "session", agent="regulateur", tokens=200),
        ev("T-1", 4, "decision", by="regulator", kind="RELANCE_DEPUIS", new_fact=True,
           facts=["au-titre"], depuis=[{"component": "parser", "agent": "testwriter"}]),
        ev("T-1", 5, "admission", accepted=False, reason="fait-faux"),
        ev("T-1", 6, "session", agent="regulateur", tokens=200),
        ev("T-1", 7, "decision", by="regulator", kind="RELANCE_REPRENDRE", new_fact=True,
           facts=[]),
        ev("T-1", 8, "admission", accepted=True, reason="ok"),
        ev("T-1", 9, "session", agent="developpeur", tokens=1000),
        ev("T-1", 10, "review", verdict="ACCEPTÉ"),
        ev("T-1", 11, "end", outcome="integrated", note="merged"),
    ]
    t2 = [  # a stop that comes back without a new fact: the table sends it up (MONTE)
        ev("T-2", 0, "step", step="2.3", component="lexer"),
        ev("T-2", 1, "stop", name="references", code=23, step="3", component=".",
           facts=[], kind="references-instables", new_fact=True),
        ev("T-2", 2, "session", agent="regulateur", tokens=300),
        ev("T-2", 3, "decision", by="regulator", kind="RELANCE_REPRENDRE", new_fact=True,
           facts=[]),
        ev("T-2", 4, "admission", accepted=True, reason="ok"),
        ev("T-2", 5, "session", agent="developpeur", tokens=900),
        ev("T-2", 6, "stop", name="references", code=23, step="3", component=".",
           facts=[], kind="references-instables", new_fact=False),
        ev("T-2", 7, "decision", by="table", kind="MONTE", new_fact=False, facts=[]),
        ev("T-2", 8, "decision", by="supervisor", kind="RELANCE_REPRENDRE", new_fact=False,
           facts=[]),
        ev("T-2", 9, "session", agent="developpeur", tokens=900),
        ev("T-2", 10, "end", outcome="integrated"),
    ]
    t3 = [  # questioning rounds, all still questioned
        ev("T-3", 0, "stop", name="besoin", code=20, step="2.3", component="ui", facts=[],
           kind="besoin-question"),
        ev("T-3", 1, "session", agent="regulateur", tokens=300),
        ev("T-3", 2, "session", agent="questionneur", tokens=100, questioned=True),
        ev("T-3", 3, "session", agent="questionneur", tokens=100, questioned=True),
        ev("T-3", 4, "decision", by="regulator", kind="RELANCE_REPRENDRE", new_fact=True,
           facts=["au-titre"]),
        ev("T-3", 5, "admission", accepted=True),
        ev("T-3", 6, "session", agent="developpeur", tokens=800),
        ev("T-3", 7, "end", outcome="integrated"),
    ]
    t4 = [  # a controles stop (no code, SPEC §6.2) the circuit ends on
        ev("T-4", 0, "step", step="3", component="."),
        ev("T-4", 1, "stop", name="controles", code=None, step="3", component=".", facts=[],
           kind="rouge-sans-proprietaire"),
        ev("T-4", 2, "decision", by="supervisor", kind="MONTE", new_fact=True, facts=[]),
        ev("T-4", 3, "end", outcome="escalated"),
    ]
    return t1 + t2 + t3 + t4


# SPEC §6.7: the required fields of each event kind; everything else is optional.
REQUIRED = {"step": {"step", "component"}, "stop": {"name", "code"}, "decision": {"by", "kind"},
            "admission": {"accepted"}, "review": set(), "session": {"agent"},
            "end": {"outcome"}}


def minimal(events, kind):
    """``events`` with every optional field of ``kind`` events left out (a controles stop's
    code too: SPEC §6.2 gives it none)."""
    keep = {"ticket", "ts", "event"}
    out = []
    for e in events:
        if e["event"] == kind:
            required = REQUIRED[kind] - ({"code"} if e.get("name") == "controles" else set())
            e = {k: v for k, v in e.items() if k in keep | required}
        out.append(e)
    return out


def load(tmp_path, events, name="db"):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "journal.jsonl").write_text(
        "\n".join(e if isinstance(e, str) else json.dumps(e, ensure_ascii=False)
                  for e in events) + "\n", encoding="utf-8")
    db = folder / "brainlab.duckdb"
    con = open_writer(db)
    try:
        run(con, [CircuitsSource()], folder)
    finally:
        con.close()
    return db


def errors(db, severity="error"):
    return query(db, "SELECT line, reason FROM ingest_errors WHERE severity = ? ORDER BY line",
                 [severity])


def replayed(db):
    per = replay(load_journals(db), RULES, draws=20, seed=3).per_ticket
    return per.set_index(["rules", "ticket"]).sort_index()


def tickets(db):
    return query(db, "SELECT * FROM tickets ORDER BY ticket").set_index("ticket")


@pytest.fixture(scope="module")
def full(tmp_path_factory) -> dict:
    """The full journal loaded once a module, with its ``tickets`` and its replay under every
    rule set: 15 tests compare with them, and each loaded and replayed it again (~0.25 CPU-s
    a test, issue 40). Read only: ``db``, ``tickets``, ``replayed``."""
    db = load(tmp_path_factory.mktemp("circuits"), full_journal(), "full")
    return {"db": db, "tickets": tickets(db), "replayed": replayed(db)}


@pytest.mark.parametrize("kind", list(REQUIRED))
def test_every_optional_field_missing_replays_like_the_full_journal(tmp_path, kind, full):
    events = minimal(full_journal(), kind)
    # something was left out (step and end have no optional SPEC field: an unknown one goes)
    assert events != full_journal()
    bare = load(tmp_path, events, "bare")
    assert errors(bare).empty, errors(bare)
    assert query(bare, "SELECT count(*) n FROM circuit_events").n[0] == len(events)
    a, b = full["tickets"], tickets(bare)
    assert b.replayable.all() and (b.events_dropped == 0).all()
    same = ["outcome", "stops", "decisions", "decisions_monte", "refused_decisions", "reviews",
            "reviews_rendered", "questioning_rounds", "wakeups", "sessions", "loop_sessions"]
    assert a[same].equals(b[same])
    x, y = full["replayed"], replayed(bare)
    assert x[COMPARED].equals(y[COMPARED])
    if kind != "session":  # tokens missing are NULL: only the session kind loses them
        assert x["tokens"].equals(y["tokens"])


def test_missing_optional_fields_warn_only_where_a_rule_needs_them(tmp_path):
    events = minimal(minimal(full_journal(), "review"), "admission")
    db = load(tmp_path, events)
    warned = " | ".join(errors(db, "warning").reason)
    assert "review without a verdict" in warned  # max_reviews needs the verdict
    assert "refused admission without a reason" in warned  # max_refusals needs the reason
    # the accepted admissions and sessions without tokens need nothing: no warning for them
    assert query(db, "SELECT count(*) n FROM ingest_errors").n[0] == 2
    assert tickets(db).loc["T-1", "warnings"] == 2


def returning_stop(new_fact):
    """A stop back at rank 2 the table sends up; its new_fact as given (None: left out)."""
    stop = {"name": "sans-livraison", "code": 15, "step": "2.3", "component": "p"}
    back = dict(stop, **({} if new_fact is None else {"new_fact": new_fact}))
    decision = {"by": "table", "kind": "MONTE"}
    return [
        ev("T-9", 0, "stop", **stop),
        ev("T-9", 1, "decision", by="regulator", kind="RELANCE_REPRENDRE", new_fact=True),
        ev("T-9", 2, "session", agent="developpeur", tokens=10),
        ev("T-9", 3, "stop", **back),
        ev("T-9", 4, "decision", **decision),
        ev("T-9", 5, "decision", by="supervisor", kind="RELANCE_REPRENDRE"),
        ev("T-9", 6, "session", agent="developpeur", tokens=10),
        ev("T-9", 7, "end", outcome="integrated"),
    ]


def test_new_fact_not_stated_on_a_returning_stop_reads_false_with_a_warning(tmp_path):
    unstated = load(tmp_path, returning_stop(None), "unstated")
    warnings = errors(unstated, "warning")
    assert len(warnings) == 1 and warnings.line[0] == 4
    assert "came back (relaunch rank 2)" in warnings.reason[0]
    assert "read as false" in warnings.reason[0]
    stated_false = load(tmp_path, returning_stop(False), "false")
    assert errors(stated_false, "warning").empty
    said_false = replayed(stated_false)
    said_true = replayed(load(tmp_path, returning_stop(True), "true"))
    got = replayed(unstated)
    assert got[COMPARED].equals(said_false[COMPARED])
    # it matters: without the rule, the stop stated false goes on past the supervisor
    key = ("escalate_without_new_fact=false", "T-9")
    assert got.loc[key, "continued"] and not said_true.loc[key, "continued"]


def test_three_tickets_one_monte_without_new_fact_all_replay(tmp_path):
    events = [
        ev("T-1", 0, "stop", name="sans-livraison", code=15, step="2.3", component="a"),
        ev("T-1", 1, "decision", by="regulator", kind="RELANCE_REPRENDRE", new_fact=True),
        ev("T-1", 2, "session", agent="developpeur", tokens=100),
        ev("T-1", 3, "end", outcome="integrated"),
        ev("T-2", 0, "stop", name="hors-portee", code=19, step="2.3", component="b"),
        ev("T-2", 1, "decision", by="regulator", kind="MONTE"),  # no new_fact: natural
        ev("T-2", 2, "decision", by="supervisor", kind="RELANCE_DEPUIS", new_fact=True),
        ev("T-2", 3, "session", agent="testwriter", tokens=100),
        ev("T-2", 4, "end", outcome="integrated"),
        ev("T-3", 0, "step", step="1.1", component="."),
        ev("T-3", 1, "session", agent="developpeur", tokens=100),
        ev("T-3", 2, "end", outcome="integrated"),
    ]
    db = load(tmp_path, events)
    assert query(db, "SELECT count(*) n FROM ingest_errors").n[0] == 0
    assert tickets(db).replayable.all()
    result = replay(load_journals(db), "default", draws=5, seed=0)
    assert sorted(result.per_ticket.ticket) == ["T-1", "T-2", "T-3"]
    assert result.not_replayed.empty
    assert format_summary(result).startswith("3 tickets")


def with_line(line_at, text, events=None):
    """The full journal with ``text`` inserted before index ``line_at`` (0-based)."""
    lines = [json.dumps(e, ensure_ascii=False) for e in (events or full_journal())]
    return [*lines[:line_at], text, *lines[line_at:]]


# (what is wrong, the line inserted into T-1 before its review, the ingest error text)
EVENT_ERRORS = {
    "unknown event": (json.dumps(ev("T-1", 9, "teleport", step="2.3")),
                      "unknown event 'teleport'"),
    "missing required field": (json.dumps(ev("T-1", 9, "decision", kind="MONTE")),
                               "decision event missing field(s) by"),
    "bad required value": (json.dumps(ev("T-1", 9, "decision", by="boss", kind="MONTE")),
                           "decided_by must be one of"),
    "bad ts": (json.dumps(dict(ev("T-1", 9, "session", agent="developpeur"), ts="tuesday")),
               "bad ts 'tuesday'"),
    "out of order": (json.dumps(ev("T-1", 1, "session", agent="developpeur", tokens=5)),
                     "session event out of order"),
    "not JSON, ticket readable": ('{"ticket": "T-1", "ts": "2026-01-05T10:09:00Z", '
                                  '"event": "session", "agent": "develop', "not JSON"),
}


@pytest.mark.parametrize("case", list(EVENT_ERRORS))
def test_a_bad_event_costs_that_event_only(tmp_path, case, full):
    text, reason = EVENT_ERRORS[case]
    db = load(tmp_path, with_line(10, text))
    found = errors(db)
    assert len(found) == 1 and found.line[0] == 11
    assert reason in found.reason[0] and "this event is left out" in found.reason[0]
    # every good event is kept, the ticket replays as if the line were not there
    assert query(db, "SELECT count(*) n FROM circuit_events").n[0] == len(full_journal())
    t = tickets(db)
    assert t.replayable.all() and t.loc["T-1", "events_dropped"] == 1
    assert replayed(db).equals(full["replayed"])


def test_an_event_after_the_end_is_dropped_and_the_ticket_replays(tmp_path, full):
    late = json.dumps(ev("T-4", 30, "session", agent="developpeur", tokens=5))
    db = load(tmp_path, [*with_line(len(full_journal()), late)])
    assert "after the ticket's end" in errors(db).reason[0]
    assert tickets(db).loc["T-4", "events_dropped"] == 1
    assert replayed(db).equals(full["replayed"])


def test_a_line_of_no_ticket_costs_that_line(tmp_path, full):
    db = load(tmp_path, with_line(3, "{not json") + [json.dumps({"ts": "x", "event": "end"})])
    found = errors(db)
    assert list(found.line) == [4, len(full_journal()) + 2]
    assert "not JSON" in found.reason[0] and "belongs to no ticket" in found.reason[1]
    assert query(db, "SELECT count(*) n FROM circuit_problems").n[0] == 0
    assert replayed(db).equals(full["replayed"])


# (what is wrong, the line replacing a T-1 line, index of the line it replaces)
STRUCTURE_ERRORS = {
    "stop without a code": (json.dumps(ev("T-1", 2, "stop", name="sans-livraison",
                                           step="2.3", component="parser")), 2,
                            "stop event missing field(s) code"),
    "stop with an unknown name": (json.dumps(ev("T-1", 2, "stop", name="sans-livrason",
                                                code=15)), 2, "name must be one of"),
    "end without an outcome": (json.dumps(ev("T-1", 11, "end")), 11,
                               "end event missing field(s) outcome"),
    "stop out of order": (json.dumps(ev("T-1", 0, "stop", name="sans-livraison", code=15)), 2,
                          "stop event out of order"),
    "not JSON, may be a stop": ('{"ticket": "T-1", "ts": "2026-01-05T10:02:00Z", "event": "st',
                                2, "not JSON"),
}


@pytest.mark.parametrize("case", list(STRUCTURE_ERRORS))
def test_a_lost_stop_or_end_leaves_the_ticket_not_replayable_and_visible(tmp_path, case):
    text, index, reason = STRUCTURE_ERRORS[case]
    lines = [json.dumps(e, ensure_ascii=False) for e in full_journal()]
    lines[index] = text
    db = load(tmp_path, lines)
    found = errors(db)
    assert len(found) == 1 and reason in found.reason[0]
    assert "marked not replayable" in found.reason[0]
    # T-1's other events load; the ticket is listed, not replayable, with the reason
    n = query(db, "SELECT count(*) n FROM circuit_events WHERE ticket = 'T-1'").n[0]
    assert n == sum(e["ticket"] == "T-1" for e in full_journal()) - 1
    t = tickets(db)
    assert not t.loc["T-1", "replayable"] and t.drop("T-1").replayable.all()
    assert f"line {index + 1}: " in t.loc["T-1", "not_replayable_reason"]
    assert reason in t.loc["T-1", "not_replayable_reason"]
    if "end" in case:
        assert t.loc["T-1", "outcome"] == "unknown"
    # the replay takes the three others and names T-1 with its reason
    result = replay(load_journals(db), "default", draws=5, seed=0)
    assert sorted(result.per_ticket.ticket) == ["T-2", "T-3", "T-4"]
    assert list(result.not_replayed.ticket) == ["T-1"]
    text = format_summary(result)
    assert "1 ticket(s) not replayed" in text and reason in text


def test_simulate_regulator_names_tickets_it_cannot_replay(tmp_path):
    lines = [json.dumps(e, ensure_ascii=False) for e in full_journal()]
    lines[2] = json.dumps(ev("T-1", 2, "stop", name="sans-livraison"))  # no code
    lines.append(json.dumps(ev("T-5", 1, "step", step="1.1", component=".")))  # open
    db = load(tmp_path, lines)
    res = CliRunner().invoke(main, ["simulate", "regulator", "--db", str(db), "--draws", "5"])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("5 ticket(s) in the store, 3 replayed")
    assert "\n3 tickets; estimate" in res.output
    assert "2 ticket(s) not replayed" in res.output
    assert "T-1: line 3: stop event missing field(s) code" in res.output
    assert "T-5: open: no end event yet" in res.output


def test_nothing_replayable_is_a_one_line_error_naming_the_tickets(tmp_path):
    db = load(tmp_path, [json.dumps(ev("T-1", 0, "stop", name="besoin")),
                         json.dumps(ev("T-1", 1, "end", outcome="ended"))])
    res = CliRunner().invoke(main, ["simulate", "regulator", "--db", str(db), "--draws", "5"])
    assert res.exit_code == 1
    assert "Error: no replayable ticket: 1 ticket(s) left out (T-1: line 1:" in res.output
    assert "Traceback" not in res.output


def test_a_store_from_an_older_brainlab_is_a_one_line_error(tmp_path):
    db = load(tmp_path, full_journal())
    con = open_writer(db)  # the tickets view as brainlab wrote it before SPEC §6.7's split
    try:
        con.execute("CREATE OR REPLACE VIEW tickets AS SELECT DISTINCT ticket FROM circuit_events")
    finally:
        con.close()
    res = CliRunner().invoke(main, ["simulate", "regulator", "--db", str(db), "--draws", "5"])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert "was built by an older brainlab" in res.output
    assert "brainlab ingest circuits PATH --db NEW.duckdb" in res.output
