"""Data tests on the models (issue 40 item 6), as dbt's generic tests.

Each model yml's grain as a unique key, its not-null and accepted-values declarations
(brainlab/store/datatests.py) hold on the demo store and the corpus store, one pass each;
a planted duplicate, NULL and unknown value are each caught; the violation contract is
declared once (models/rules/_violation.yml) and every rule gets it.
"""

from __future__ import annotations

import shutil

import pytest

from brainlab.store import datatests, open_writer, reader, rulebook
from brainlab.store.graph import FOLDER
from brainlab.store.schema import models


def test_the_demo_store_meets_every_declaration(demo):
    with reader(demo["db"]) as con:
        assert [str(f) for f in datatests.run(con)] == []


def test_the_corpus_store_meets_every_declaration(corpus_store):
    with reader(corpus_store) as con:
        assert [str(f) for f in datatests.run(con)] == []


def test_a_store_with_telemetry_meets_the_declarations_of_what_reads_it(demo, tmp_path):
    """The demo's OpenTelemetry files (neither shared store has any) ingested into a copy:
    the otel tables and views, and the call views telemetry adds calls to."""
    from brainlab.otel.ingest import discover, ingest_otel

    db = tmp_path / "telemetry.duckdb"
    shutil.copy(demo["db"], db)
    con = open_writer(db)
    try:
        assert ingest_otel(con, discover([demo["root"] / "telemetry"])).rows["otel_events"]
    finally:
        con.close()
    names = [n for n in models() if n.startswith("otel_")] + [
        "cc_requests", "cc_usage_tools", "usage_who"]
    with reader(db) as con:
        assert [str(f) for f in datatests.run(con, names)] == []


def test_every_table_and_view_states_its_grain_as_a_key():
    """Outside rules/ (a violation is its row), every table and view declares unique_key (``~``
    only where its columns cannot state the grain), and every declaration names documented
    columns and known values."""
    missing = [m["_file"] for m in models().values()
               if m.get("kind", "table") != "macro" and m["_layer"] != "rules"
               and "unique_key" not in m]
    assert missing == []
    for model in models().values():
        datatests.declared(model)  # raises on an unknown column or spec reference


@pytest.fixture
def planted(empty_store, tmp_path):
    """A copy of the empty store whose rows break each kind of declaration (two claims of one
    file, a call line without its session, a mark of an unknown kind), and a view of two
    rows."""
    db = tmp_path / "planted.duckdb"
    shutil.copy(empty_store, db)
    con = open_writer(db)
    try:
        con.execute("INSERT INTO claims (source_file, sess_id) VALUES"
                    " ('/b/claims/a.yml', 'a'), ('/b/claims/a.yml', 'b'), ('/b/claims/d.yml', 'd')")
        con.execute("INSERT INTO cc_marks (session_id, kind, source_file, line) VALUES"
                    " ('s', 'prompt', '/t/s.jsonl', 1), ('s', 'bogus', '/t/s.jsonl', 2)")
        con.execute("INSERT INTO cc_request_lines (session_id, message_id, model, ts, is_nested,"
                    " cwd, source_file, line) VALUES (NULL, 'm1', 'x', '2026-01-01', false, '/',"
                    " '/t/s.jsonl', 1), ('s', 'm2', 'x', '2026-01-01', false, '/', '/t/s.jsonl', 2)")
        con.execute("CREATE VIEW two_rows AS SELECT 1 AS n UNION ALL SELECT 2")
    finally:
        con.close()
    return db


def test_a_planted_violation_of_each_declaration_is_found(planted):
    with reader(planted) as con:
        found = {(f.model, f.test, f.columns): f
                 for f in datatests.run(con, ["claims", "cc_request_lines", "cc_marks"])}
    assert set(found) == {("claims", "unique_key", ("source_file",)),
                          ("cc_marks", "accepted_values", ("kind",)),
                          ("cc_request_lines", "not_null", ("session_id",))}
    assert found["claims", "unique_key", ("source_file",)].example == "/b/claims/a.yml"
    assert found["cc_marks", "accepted_values", ("kind",)].example == "bogus"
    assert found["cc_request_lines", "not_null", ("session_id",)].rows == 1


def test_a_one_row_relation_with_a_second_row_is_found(planted):
    """``unique_key: []``: at most one row (brain_clock, session_match_summary)."""
    model = {"_file": "marts/x.yml", "unique_key": [], "columns": [{"name": "n"}]}
    with reader(planted) as con:
        assert con.execute(datatests.check_sql("two_rows", datatests.declared(model))
                           ).fetchone()[:2] == (1, "()")


def test_a_declaration_of_an_unknown_column_or_spec_value_fails():
    with pytest.raises(ValueError, match="marts/x.yml: unique_key names"):
        datatests.declared({"_file": "marts/x.yml", "unique_key": ["nope"], "columns": []})
    with pytest.raises(ValueError, match="names no module"):
        datatests.spec_values("nowhere.THING")
    assert datatests.spec_values("rules.SEVERITIES") == ("error", "warning", "info")


CONTRACT = [c["name"] for c in rulebook.violation_contract()]


def test_the_violation_contract_is_declared_once_and_every_rule_gets_it():
    assert CONTRACT == ["subject_kind", "subject", "occurred_at", "file", "line", "message",
                        "evidence"]
    copies = [p.name for p in (FOLDER / "rules").glob("[!_]*.yml")
              if any(f"{{name: {c}," in p.read_text(encoding="utf-8") for c in CONTRACT)]
    assert copies == [], "a rule yml repeats the violation contract"
    rules = {name: m for name, m in models().items() if m["_layer"] == "rules"}
    assert len(rules) > 40
    for name, model in rules.items():
        assert [c["name"] for c in model["columns"]][-7:] == CONTRACT, name
    kind = {c["name"]: c for c in models()["rule_ses001"]["columns"]}["subject_kind"]
    assert kind["description"] == "What broke the rule: session."
    assert kind["accepted_values"] == {"spec": "rules.SUBJECT_KINDS"}
