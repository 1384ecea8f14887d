"""Report sections over relations other branches add: left out while missing or empty,
shown (escaped, filtered to the week, with SPEC §4.4 alerts) once they hold rows."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from report_helpers import active_content

from brainlab.metrics import report as data
from brainlab.metrics.report import Week
from brainlab.report import sections
from brainlab.sources.sprints import sprint_sources
from brainlab.spec.thresholds import Thresholds
from brainlab.store import StoreConfig, connect, ingest, open_writer

WEEK = Week.parse("2026-W48")


@pytest.fixture
def bare_db(tmp_path):
    db = tmp_path / "extra.duckdb"
    con = connect(StoreConfig(path=db, read_only=False))
    con.close()
    return db


def execute(db, *statements):
    con = connect(StoreConfig(path=db, read_only=False))
    try:
        for sql, params in statements:
            con.execute(sql, params)
    finally:
        con.close()


def ctx_for(db):
    return sections.ReportContext(db=db, week=WEEK, thresholds=Thresholds())


def test_sections_left_out_without_sprints_or_tickets(bare_db):
    assert data.sprint_breath(bare_db, WEEK) is None
    assert data.ticket_outcomes(bare_db, WEEK) is None
    execute(bare_db, ("CREATE TABLE sprints (sprint_id VARCHAR, started_at TIMESTAMP)", []),
            ("CREATE VIEW tickets AS SELECT 'T-1' AS ticket, now()::TIMESTAMP AS started_at "
             "WHERE false", []))
    assert data.sprint_breath(bare_db, WEEK) is None  # exists, but empty
    assert data.ticket_outcomes(bare_db, WEEK) is None
    assert sections.breath(ctx_for(bare_db)) == "" and sections.regulator(ctx_for(bare_db)) == ""


def test_breath_printed_alerts_and_tickets_of_the_week(bare_db):
    """Without replayable sprints the broker's printed values are the basis (3 alerts)."""
    inside, before = datetime(2026, 11, 24, 10), datetime(2026, 11, 10, 10)
    execute(
        bare_db,
        ("CREATE TABLE sprints (sprint_id VARCHAR, project VARCHAR, domain VARCHAR, "
         "started_at TIMESTAMP)", []),
        ("INSERT INTO sprints VALUES ('s-ok', 'p', 'd', ?), ('s-bad', '<b>p</b>', 'd', ?), "
         "('s-old', 'p', 'd', ?)", [inside, inside, before]),
        ("CREATE TABLE broker_recorded_releases (sprint_id VARCHAR, context_load DOUBLE, "
         "stale_ratio DOUBLE, breath_depth INTEGER, exhale_rate DOUBLE)", []),
        # SPEC §4.4: context_load > 2.0 overload, stale_ratio > 30% noise, exhale < 50% retention
        ("INSERT INTO broker_recorded_releases VALUES ('s-ok', 1.5, 0.2, 1, 0.6), "
         "('s-bad', 2.5, 0.4, 3, 0.3), ('s-old', 9, 0.9, 9, 0.0)", []),
        ("CREATE TABLE tickets (ticket VARCHAR, started_at TIMESTAMP, last_event_at TIMESTAMP,"
         " outcome VARCHAR, stops INTEGER)", []),
        ("INSERT INTO tickets VALUES ('T-1', ?, ?, 'integrated', 1), "
         "('T-2', ?, ?, 'escalated', 3), ('T-3', ?, ?, 'ended', 0)",
         [inside, inside, before, inside, before, before]),
    )
    breath = data.sprint_breath(bare_db, WEEK).set_index("sprint_id")
    assert sorted(breath.index) == ["s-bad", "s-ok"]
    assert breath.loc["s-ok", "alerts"] == ""
    assert breath.loc["s-bad", "alerts"] == "overload, noise, retention"
    assert breath.loc["s-bad", "printed_context_load"] == 2.5
    tickets = data.ticket_outcomes(bare_db, WEEK)
    assert sorted(tickets["ticket"]) == ["T-1", "T-2"]  # T-3 ended before the week
    breath_html = sections.breath(ctx_for(bare_db))
    assert "1 with an alert" in breath_html and active_content(breath_html) == []
    assert "&lt;b&gt;p&lt;/b&gt;" in breath_html
    regulator_html = sections.regulator(ctx_for(bare_db))
    assert "escalated" in regulator_html and "integrated" in regulator_html


def sprint_line(name, day, refs, loaded, todos):
    return json.dumps({
        "sprint": name, "project": "p", "domain": "core", "agent": "developer",
        "referenced": [{"path": f"src/core/{f}.py", "kind": "read"} for f in refs],
        "loaded": [f"src/core/{f}.py" for f in loaded], "open_todos": todos,
        "started_at": f"2026-11-{day:02d}T10:00", "ended_at": f"2026-11-{day:02d}T11:00"})


def test_breath_section_shows_measured_metrics_with_accumulation_and_blind_overload(tmp_path):
    """Issue 14: the report reads the replayed (measured) breath, raises the accumulation alert
    (breath_depth rising over 3 sprints) and the overload of a sprint that loads files and
    references none. Depth (kept = referenced and open to-do): s1 0, s2 1, s3 2, s4 3."""
    records = tmp_path / "sprints.jsonl"
    records.write_text("\n".join([
        sprint_line("s1", 23, "a", "a", []), sprint_line("s2", 24, "ab", "ab", ["core"]),
        sprint_line("s3", 25, "abc", "abc", ["core"]),
        sprint_line("s4", 26, "abcd", "abcd", ["core"]),
        sprint_line("blind", 27, "", "ab", [])]) + "\n", encoding="utf-8")
    db = tmp_path / "breath.duckdb"
    con = open_writer(db)
    try:
        ingest.run(con, sprint_sources(), records)
    finally:
        con.close()
    frame = sections.breath_table(ctx_for(db)).set_index("sprint_id")
    assert frame.loc["s1", "alerts"] == ""
    assert "accumulation" in frame.loc["s3", "alerts"]
    assert "accumulation" in frame.loc["s4", "alerts"]
    assert "overload" in frame.loc["blind", "alerts"]
    assert frame.loc["s4", "breath_depth"] == 4 and frame.loc["s3", "breath_depth"] == 3


def test_compliance_section_on_the_demo_and_on_bare_stores(demo, empty_store, bare_db):
    """Issue 14: the week's violations by rule, with the trend and top offenders, escaped."""
    ctx = sections.ReportContext(db=demo["db"], week=Week.parse("2026-W48"),
                                 thresholds=Thresholds())
    html = sections.compliance(ctx)
    assert "Protocol compliance" in html and active_content(html) == []
    forgotten = demo["planted"]["claim left open past its TTL (work, 4 h)"]["sess_id"]
    assert "CLM001" in html and forgotten in html  # the stale claim opened on 2026-11-27
    assert "violations-per-week" in ctx.charts_drawn
    empty = sections.compliance(ctx_for(empty_store))
    assert "No violation." in empty
    assert sections.compliance(ctx_for(bare_db)) == ""  # no catalogue: left out
