"""``brainlab usage [VIEW]``, ``usage-check`` and ``usage-who``: tokens and cost."""

from __future__ import annotations

from pathlib import Path

import click

from brainlab.cli.options import cost_mode_option, timezone_options
from brainlab.cli.root import main
from brainlab.cli.support import (
    db_option,
    handle_errors,
    out,
)
from brainlab.common.errors import ConfigError


@main.command("usage")
@click.argument("by", metavar="[VIEW]", default="daily",
                type=click.Choice(["daily", "weekly", "monthly", "sessions", "models",
                                   "blocks", "projects", "agents", "tickets", "branches",
                                   "tools", "limits"]))
@db_option()
@click.option("--since", metavar="DAY", default=None, help="First day, e.g. 2026-11-01.")
@click.option("--until", metavar="DAY", default=None, help="Last day (inclusive).")
@click.option("--project", default=None, help="One project (the folder name of its cwd).")
@click.option("--limit", type=int, default=None,
              help="Newest N periods or sessions; top N models by cost.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON records instead of a table.")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV instead of a table.")
@timezone_options
@cost_mode_option
@handle_errors
def usage_cmd(by: str, db: Path, since, until, project, limit, as_json: bool,
              as_csv: bool, timezone: str | None, start_of_week: str | None,
              cost_mode: str) -> None:
    """Claude Code tokens and cost by VIEW (default: daily).

    VIEW is daily, weekly, monthly, sessions, models, blocks (5-hour windows), projects,
    agents (subagent types), tickets (sessions in .claude/worktrees/<ticket>), branches (the
    lines' git branch), tools (a call split equally among the tool uses it issued) or limits
    (the 5-hour and 7-day rate-limit windows the status line saw; also `brainlab limits`).
    Days are days of --timezone (default: brainlab.toml's `timezone`, else this machine's zone); cost
    is USD at the prices `ingest claude` used.
    """
    from brainlab.common import tables
    from brainlab.metrics.usage import usage_table

    if as_json and as_csv:
        raise ConfigError("--json and --csv print different formats: give one of them")
    if by == "limits":  # issue 25: brainlab.metrics.limits, windows named by their reset time
        from brainlab.metrics.limits import limits_output

        if since or until or project or timezone or start_of_week or cost_mode != "calculate":
            raise ConfigError("usage limits takes --limit, --json, --csv and --db only:"
                              " drop the other options")
        click.echo(limits_output(db, limit, "json" if as_json else "csv" if as_csv else "text"),
                   nl=False)
        return
    if by == "blocks" and cost_mode != "calculate":
        raise ConfigError("--cost-mode reported|auto is not available for blocks yet: use"
                          " --cost-mode calculate (the default) with `usage blocks`")
    if by == "blocks":
        from brainlab.metrics.usage_blocks import blocks_table

        found = blocks_table(db, since=since, until=until, project=project, timezone=timezone)
    else:
        found = usage_table(db, by, since=since, until=until, project=project, limit=limit,
                            timezone=timezone, start_of_week=start_of_week,
                            cost_mode=cost_mode)
    if as_json or as_csv:
        click.echo((tables.to_json if as_json else tables.to_csv)(found.columns, found.rows),
                   nl=as_json)
    else:
        print_usage(found, db)
    if found.undated:  # counting rule 4: never a "day: null" row (stderr: JSON stays JSON)
        click.echo(f"{found.undated} call(s) without a timestamp left out of this dated view"
                   " (counted in `usage sessions` and `usage models`; see `brainlab errors`)",
                   err=as_json or as_csv)


def print_usage(found, db: Path) -> None:
    """Print a :class:`~brainlab.metrics.usage.UsageTable` fitted to the terminal, or why empty."""
    from brainlab.common import tables

    if not found.rows:
        click.echo(found.empty_message(db))
        return
    rows, columns = tables.usage_rows(found.view, found.columns, found.rows), found.columns
    if found.display:  # a view with its own terminal rows (usage blocks)
        columns, rows = found.display
    spec = found.table_columns or tables.USAGE_COLUMNS[found.view]
    text, hidden = tables.render_text(  # the same characters as rich's table, without rich
        columns, rows, width=out.width, columns=spec, totals=True, bold=out.styled)
    if text is not None:
        click.echo(text, nl=False)
    else:
        table, hidden = tables.render(columns, rows, width=out.width, columns=spec, totals=True)
        out.print(table)
    if hidden:  # wrapped at the width, as rich wrapped it
        import textwrap

        click.echo(textwrap.fill(f"(not shown at {out.width} columns: {', '.join(hidden)};"
                                 " see --json or --csv)", width=out.width,
                                 break_long_words=False, break_on_hyphens=False))



@click.command("usage-check")
@db_option()
@click.option("--tolerance", default=0.01, show_default=True,
              help="Relative difference under which metric and call totals agree.")
@handle_errors
def usage_check_cmd(db: Path, tolerance: float) -> None:
    """Where Claude Code's metric totals and the call totals disagree (per day and model)."""
    from brainlab.otel.check import usage_check

    found = usage_check(db, tolerance)
    if not found.rows:
        click.echo(found.message)
        return
    _print_table(found.columns, found.rows, totals=False)
    click.echo(found.message)


@click.command("usage-who")
@click.option("--by", default="user", show_default=True, metavar="DIM",
              type=click.Choice(["user", "organization", "query_source", "agent", "skill",
                                 "mcp_server", "effort", "speed", "source", "model"]),
              help="Group by: user, organization, query_source, agent, skill, mcp_server,"
                   " effort, speed, source or model.")
@db_option()
@click.option("--since", metavar="DAY", default=None, help="First UTC day, e.g. 2026-11-01.")
@click.option("--until", metavar="DAY", default=None, help="Last UTC day (inclusive).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON records instead of a table.")
@handle_errors
def usage_who_cmd(by: str, db: Path, since, until, as_json: bool) -> None:
    """Who spent it: tokens, cost and calls by user, organization, agent, skill, ... (issue 26).

    Every call counts once (transcripts and telemetry); calls without an api_request event
    show as the missing marker.
    """
    from brainlab.common import tables
    from brainlab.otel.check import usage_who

    found = usage_who(db, by, since, until)
    if as_json:
        click.echo(tables.to_json(list(found.columns), found.rows))
        return
    if not found.rows:
        click.echo(found.message)
        return
    _print_table(found.columns, found.rows, totals=True)


def _print_table(columns, rows, totals: bool) -> None:
    """A table fitted to the terminal, as `brainlab usage` prints one (plain text or rich)."""
    from brainlab.cli.support import out
    from brainlab.common import tables

    text, _hidden = tables.render_text(columns, rows, width=out.width, totals=totals,
                                       bold=out.styled)
    if text is not None:
        click.echo(text, nl=False)
    else:  # a cell that needs wrapping or is not plain ASCII: rich lays it out
        out.print(tables.render(columns, rows, width=out.width, totals=totals)[0])


main.add_command(usage_check_cmd)
main.add_command(usage_who_cmd)
