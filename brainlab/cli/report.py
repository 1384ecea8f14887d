"""``brainlab report weekly``: render the weekly health reports with papermill."""

from __future__ import annotations

from pathlib import Path

import click

from brainlab.cli.options import timezone_options
from brainlab.cli.root import main
from brainlab.cli.support import (
    console,
    db_option,
    handle_errors,
    out,
    progress_bar,
)
from brainlab.common.paths import DEFAULT_REPORTS


@main.group()
def report() -> None:
    """Render reports (papermill notebooks to self-contained HTML)."""


@report.command("weekly")
@click.option("--week", default=None,
              help="ISO week, e.g. 2026-W48, or any day of the week, e.g. 2026-11-25 (default:"
                   " the latest week holding a session, transcript sessions included).")
@click.option("--all", "all_weeks", is_flag=True, help="Every week from the first session.")
@click.option("--since", default=None, help="Every week from this week (as --week) to the"
              " latest.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=DEFAULT_REPORTS,
              show_default=True, help="Reports folder: <out>/<week>/weekly_health.html.")
@db_option()
@click.option("--thresholds", "thresholds_file", type=click.Path(exists=True, path_type=Path),
              default=None, help="TOML file with a [thresholds] table (default: SPEC values).")
@click.option("--ratio-window", type=int, default=0, help="Rolling ratio window (0: thresholds').")
@click.option("--basis", type=click.Choice(["best", "logged", "measured"]), default="best",
              show_default=True, help="Metabolism from logs, transcripts, or transcripts where "
              "they exist (docs/measured.md).")
@click.option("--history-weeks", type=int, default=12, show_default=True,
              help="Weeks shown in trend charts.")
@click.option("--timeout", type=int, default=120, show_default=True,
              help="Seconds allowed per notebook cell.")
@click.option("--lake", default=None, help="A team lake instead of --db: attached to"
              " <out>/lake.duckdb, with a per-person table (docs/lake.md).")
@click.option("--user", "users", multiple=True, help="With --lake: only this user (repeatable).")
@click.option("--machine", "machines", multiple=True,
              help="With --lake: only this machine (repeatable).")
@timezone_options
@handle_errors
def report_weekly(week, all_weeks, since, out_dir, db, thresholds_file, ratio_window, basis,
                  history_weeks, timeout, lake, users, machines, timezone,
                  start_of_week) -> None:
    """Render the weekly health report of one or more weeks, and the index.

    Weeks are ISO weeks (Monday to Sunday, 2026-W48) unless --start-of-week sunday (named by
    their Sunday, 2026-11-22); a transcript session counts in the week of its first request's
    day in --timezone.
    """
    from brainlab.report.runner import early_kernel

    # The kernel starts first and imports the report's modules on the other core while this
    # process imports its own, checks the store and plans the weeks (docs/report.md §4).
    team = bool(lake or users or machines)  # a team report: the lake attached beside the reports
    with early_kernel() as kernel:
        from brainlab.metrics.usage_time import resolve_time
        from brainlab.report import plan_weeks, render_weeks

        timezone, start_of_week = resolve_time(timezone, start_of_week)

        if team:  # a team report: the lake attached beside the reports
            from brainlab.lake.attach import attach_for_report

            db = attach_for_report(lake, out_dir, users, machines)
        plan = plan_weeks(db, week=week, all_weeks=all_weeks, since=since,
                          first_day=start_of_week, tz=timezone)
        weeks = plan.weeks
        if plan.skipped:
            console.print(f"skipped {len(plan.skipped)} empty week(s) (no session): "
                          f"{plan.skipped[0]}..{plan.skipped[-1]}", markup=False,
                          highlight=False)
        with progress_bar() as bar:
            task = bar.add_task("report weekly", total=len(weeks))
            render_weeks(db, weeks, out_dir, on_done=lambda label, path: (
                bar.advance(task), out.print(str(path), markup=False, highlight=False)),
                kernel=kernel, thresholds_file=thresholds_file, ratio_window=ratio_window,
                basis=basis, history_weeks=history_weeks, timeout=timeout, timezone=timezone,
                start_of_week=start_of_week)
    out.print(f"index: {out_dir / 'index.html'}", markup=False, highlight=False)
