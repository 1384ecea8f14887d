"""``brainlab trends``: change points of every trend series, and weeks compared (issue 43).

The library half is :mod:`brainlab.metrics.trends`; this module parses options and prints
(text, or ``--json``: an object whose ``changes`` lists ``series``, ``week``, ``direction``,
``before``, ``after`` with the difference and its interval).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from brainlab.cli.root import main, settings
from brainlab.cli.support import db_option, handle_errors
from brainlab.common.errors import ConfigError


@main.command("trends")
@db_option()
@click.option("--week", default=None, metavar="WEEK",
              help="Scan the history up to this week's end (default: all of it).")
@click.option("--daily", is_flag=True, help="Scan the daily series too (weekly always).")
@click.option("--compare", "target", default=None, metavar="WEEKS",
              help="Weeks to compare (2026-W43 or 2026-W43..2026-W44) with --to.")
@click.option("--to", "baseline", default=None, metavar="WEEKS",
              help="The baseline weeks of --compare, e.g. 2026-W40..2026-W42.")
@click.option("--basis", type=click.Choice(["best", "logged", "measured"]), default="best",
              show_default=True, help="Which side of each session (docs/measured.md).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--refresh", is_flag=True,
              help="Rescan and store the change points the view trend_changes shows (settings'"
                   " thresholds, basis best, weeks and days, all history).")
@handle_errors
def trends_cmd(db: Path, week: str | None, daily: bool, target: str | None,
               baseline: str | None, basis: str, as_json: bool, refresh: bool) -> None:
    """Change points of every trend series; with --compare/--to, weeks side by side.

    Series: health by category, the rolling ratio, coach triggers, tokens and cost per
    session, agent load cost (in all and per agent), tokens measured - logged. A change is
    listed with the week it starts, the means before and after and the difference's 95%
    interval; agents are new, gone, growing, shrinking or stable (docs/trends.md). The
    store's view trend_changes shows the stored scan only while no write came after it
    (an `ingest claude` or `ingest otel` leaves it stale): --refresh stores a new one.
    """
    from brainlab.common import terminal
    from brainlab.metrics import trends
    from brainlab.spec.weeks import Week
    from brainlab.store import trend_scan

    if bool(target) != bool(baseline):
        raise ConfigError("--compare and --to go together: e.g. --compare 2026-W43 "
                          "--to 2026-W40..2026-W42")
    thresholds = settings().thresholds
    if refresh:
        trends.store_changes(db, thresholds)
    until = Week.parse(week).end_at if week else None
    obs = trends.observations(db, thresholds, basis, until=until)
    periods = ("week", "day") if daily else ("week",)
    found = {p: trends.changes(obs, p) for p in periods}
    agents = trends.agent_classes(obs)
    compared = None
    if target:
        compared = trends.compare(obs, trends.week_range(target), trends.week_range(baseline))
    result = trends.report(obs, found, agents, compared, week)
    stored = trend_scan.status(db, thresholds)
    result["stored"] = {"state": stored.state, "changes": stored.changes,
                        "scanned_at": stored.scanned_at, "message": stored.message}
    if as_json:
        click.echo(json.dumps(result, indent=1))
        return
    columns = terminal.width()
    click.echo(trends.text(result, columns))
    if not stored.current and result["series"]:  # the view shows no row: why, what rescans
        click.echo(terminal.fit(f"store view trend_changes: {stored.message}", columns))
