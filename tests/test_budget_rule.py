"""SPEC §3.3 mode budgets: one rule for the store's BUD001/BUD002 and the status line's colour.

brainlab/spec/modes.py holds the budgets (``BUDGETS``); brainlab/spec/budget_rule.py how a
context peak reads against one, in Python (``budget_tone``) and as the SQL the store's
``budget_over`` / ``budget_watch`` macros are written from (view ``mode_budget_checks`` calls
them). Over a grid of peaks, commit counts and every budget, the status line, the spec
function and the macros of a real store give the same verdict.
"""

from __future__ import annotations

import itertools

import pytest

from brainlab.live.statusline import budget_of, budget_tone
from brainlab.spec import modes
from brainlab.store import open_writer

PEAKS = (0.0, 39.9, 40.0, 59.9, 60.0, 79.9, 80.0, 80.1, 100.0)
COMMITS = (None, 0, 5, 6)


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    con = open_writer(tmp_path_factory.mktemp("budget") / "b.duckdb")
    yield con
    con.close()


def _sql_tone(con, pct, budget, commits) -> str:
    over, watch = con.execute(
        "SELECT budget_over(?::DOUBLE, ?::INTEGER, ?::DOUBLE, ?::INTEGER),"
        " budget_watch(?::DOUBLE, ?::DOUBLE)",
        [pct, commits, budget.max_pct, budget.min_commits, pct, budget.watch_pct]).fetchone()
    return "over" if over else "watch" if watch else "ok"


def test_the_store_and_the_status_line_read_budgets_alike(con):
    checked = 0
    for budget, pct, commits in itertools.product(modes.BUDGETS, PEAKS, COMMITS):
        spec = modes.budget_tone(pct, budget, commits)
        assert _sql_tone(con, pct, budget, commits) == spec, (budget.mode, pct, commits)
        if commits is not None:  # the status line always knows its commit count
            line = budget_tone(pct, budget_of(budget.mode, None), commits)
            assert line == spec, (budget.mode, pct, commits)
        checked += 1
    assert checked == len(modes.BUDGETS) * len(PEAKS) * len(COMMITS)


def test_spec_examples():
    sprint, prod, conserve = (modes.budget_of_mode(m) for m in ("SPRINT", "prod", "conserve"))
    assert modes.budget_tone(80.0, sprint, 5) == "over"
    assert modes.budget_tone(80.0, sprint, 6) == "ok"  # more than 5 commits: acceptable
    assert modes.budget_tone(60.0, prod, 0) == "watch"
    assert modes.budget_tone(40.0, conserve, 0) == "over"
    assert modes.budget_of_mode("navigate") is None


def test_mode_budget_checks_calls_the_macros(con):
    sql = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = 'mode_budget_checks'"
                      ).fetchone()[0]
    assert "budget_over(" in sql and "budget_watch(" in sql
