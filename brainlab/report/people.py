"""The team report's "People" section: the week's usage per user (and machine) of a lake.

Shown only for a store attached to a lake (``brainlab report weekly --lake DIR``, or a file
made by ``brainlab attach``): a local store has no user or machine, and the section is
empty. Called by a cell of notebooks/reports/weekly_health.ipynb; names come from the lake's
folder names and reach HTML only through :func:`brainlab.report.sections.table` (escaped).
"""

from __future__ import annotations

from brainlab.metrics.people import week_people
from brainlab.report.sections import ReportContext, note, section, show, table


def people(ctx: ReportContext) -> str:
    """Tokens, cost, sessions and calls per user; per machine when a user has two or more."""
    found = week_people(ctx.db, ctx.week)
    if found is None:
        return ""
    by_user, by_machine = found["by_user"], found["by_machine"]
    if by_user.empty:
        return show(section("people", "People", note("No Claude Code call this week.")))
    who = f"{len(by_user)} {'person' if len(by_user) == 1 else 'people'}"
    parts = [note(f"{who}, {int(by_user['calls'].sum()):,} API calls,"
                  f" {int(by_user['total_tokens'].sum()):,} tokens,"
                  f" ${by_user['cost_usd'].sum():,.2f}; each call counted once, for the user"
                  " and machine of the line kept (SPEC §7)."),
             table(by_user)]
    if (by_user["machines"] > 1).any():
        parts += ["<h3>By machine</h3>", table(by_machine)]
    return show(section("people", "People", *parts))
