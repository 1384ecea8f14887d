"""Report sections over relations other branches add: left out while missing or empty,
shown (escaped, filtered to the week, with SPEC §4.4 alerts) once they hold rows."""

from __future__ import annotations

from datetime import datetime

import pytest
from report_helpers import active_content

from brainlab.config import Thresholds
from brainlab.metrics import report as data
from brainlab.metrics.report import Week
from brainlab.report import sections
from brainlab.store import StoreConfig, connect

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


def test_breath_alerts_and_tickets_of_the_week(bare_db):
    inside, before = datetime(2026, 11, 24, 10), datetime(2026, 11, 10, 10)
    execute(
        bare_db,
        ("CREATE TABLE sprints (sprint_id VARCHAR, project VARCHAR, started_at TIMESTAMP)", []),
        ("INSERT INTO sprints VALUES ('s-ok', 'p', ?), ('s-bad', '<b>p</b>', ?), ('s-old', 'p', ?)",
         [inside, inside, before]),
        ("CREATE TABLE breath_metrics (sprint_id VARCHAR, context_load DOUBLE, "
         "stale_ratio DOUBLE, breath_depth INTEGER, exhale_rate DOUBLE)", []),
        # SPEC §4.4: context_load > 2.0 overload, stale_ratio > 30% noise, exhale < 50% retention
        ("INSERT INTO breath_metrics VALUES ('s-ok', 1.5, 0.2, 1, 0.6), "
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
    tickets = data.ticket_outcomes(bare_db, WEEK)
    assert sorted(tickets["ticket"]) == ["T-1", "T-2"]  # T-3 ended before the week
    breath_html = sections.breath(ctx_for(bare_db))
    assert "1 with an alert" in breath_html and active_content(breath_html) == []
    assert "&lt;b&gt;p&lt;/b&gt;" in breath_html
    regulator_html = sections.regulator(ctx_for(bare_db))
    assert "escalated" in regulator_html and "integrated" in regulator_html


def test_usage_section_left_out_without_transcripts(bare_db):
    assert data.transcript_usage(bare_db, WEEK) is None
    assert sections.usage(ctx_for(bare_db)) == ""


def test_usage_section_matches_usage_daily(demo):
    """The week's usage equals the sum of usage_daily over its seven UTC days."""
    from brainlab.store import query

    found = data.transcript_usage(demo["db"], WEEK)
    daily = query(demo["db"], "SELECT sum(total_tokens) AS t, sum(cost_usd) AS c FROM usage_daily "
                              "WHERE day >= DATE '2026-11-23' AND day < DATE '2026-11-30'")
    assert found["by_day"]["total_tokens"].sum() == daily.t[0] > 0
    assert found["by_model"]["cost_usd"].sum() == pytest.approx(daily.c[0])
    ctx = sections.ReportContext(db=demo["db"], week=WEEK, thresholds=Thresholds())
    fragment = sections.usage(ctx)
    assert "Claude Code usage" in fragment and ctx.charts_drawn == ["usage-per-day"]
    assert f"${daily.c[0]:,.2f}" in fragment
