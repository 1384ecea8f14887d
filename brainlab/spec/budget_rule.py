"""SPEC §3.3: how a context peak reads against a mode budget (over, watch, ok), written once.

The budgets themselves are :data:`brainlab.spec.modes.BUDGETS`. The rule is given twice, side
by side here and nowhere else: as SQL (the store writes the macros ``budget_over`` and
``budget_watch`` from it, which view ``mode_budget_checks`` and rules BUD001/BUD002 call) and
in Python for the status line, which must not open the store (and imports nothing here, to
stay fast). tests/test_budget_rule.py checks both agree on every budget.
"""

from __future__ import annotations

# over: at or past the max, unless the session made more commits than the budget allows for
BUDGET_OVER_SQL = ("max_pct IS NOT NULL AND pct >= max_pct"
                   " AND NOT coalesce(commits > min_commits, false)")
# watch: at or past the watch line
BUDGET_WATCH_SQL = "watch_pct IS NOT NULL AND pct >= watch_pct"


def budget_tone(pct: float, watch_pct: float | None, max_pct: float | None,
                min_commits: int | None, commits: int | None) -> str:
    """``over``, ``watch`` or ``ok``: :data:`BUDGET_OVER_SQL` and :data:`BUDGET_WATCH_SQL`."""
    excused = min_commits is not None and commits is not None and commits > min_commits
    if max_pct is not None and pct >= max_pct and not excused:
        return "over"
    if watch_pct is not None and pct >= watch_pct:
        return "watch"
    return "ok"
