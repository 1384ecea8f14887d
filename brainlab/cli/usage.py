"""``brainlab usage [VIEW] [--by DIM]``: tokens and cost (``usage-check``, ``usage-who``: aliases)."""

from __future__ import annotations

from pathlib import Path

import click

from brainlab.cli.options import cost_mode_option, timezone_option, timezone_options
from brainlab.cli.root import CLOSED, main
from brainlab.cli.support import (
    db_option,
    handle_errors,
    out,
)
from brainlab.common.errors import ConfigError


@main.command("usage")
@click.argument("view", metavar="[VIEW]", default=None, required=False,
                type=click.Choice(["daily", "weekly", "monthly", "sessions", "models",
                                   "blocks", "projects", "agents", "tickets", "branches",
                                   "tools", "total", "limits", "check",
                                   "reconcile"]))
@db_option()
@click.option("--by", "by", multiple=True, metavar="DIM",
              help="Also group by DIM (repeatable or comma-separated): user, machine, project,"
                   " branch, agent, ticket, model, session, skill, plugin, mcp_server, query_source,"
                   " agent_name, organization, effort, speed, source. Without VIEW: totals"
                   " per DIM (view total).")
@click.option("--since", metavar="DAY", default=None,
              help="First day of --timezone, e.g. 2026-11-01.")
@click.option("--until", metavar="DAY", default=None,
              help="Last day of --timezone (inclusive).")
@click.option("--project", default=None, help="One project (the folder name of its cwd).")
@click.option("--branch", default=None, help="One git branch (the lines' gitBranch).")
@click.option("--user", default=None,
              help="One user: the lake's user on a store attached to a team lake, else the"
                   " telemetry's.")
@click.option("--machine", default=None, help="One machine (a store attached to a team lake).")
@click.option("--limit", type=int, default=None,
              help="Newest N periods or sessions; top N models by cost.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON records instead of a table.")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV instead of a table.")
@click.option("--tolerance", type=float, default=None,
              help="usage check: relative difference under which metric and call totals"
                   " agree (default 0.01).")
@timezone_options
@cost_mode_option
@handle_errors
def usage_cmd(view: str | None, db: Path, by: tuple[str, ...], since, until, project, branch,
              user, machine, limit, as_json: bool, as_csv: bool, tolerance: float | None,
              timezone: str | None, start_of_week: str | None, cost_mode: str) -> None:
    """Claude Code tokens and cost by VIEW (default: daily; with --by alone: total).

    VIEW is daily, weekly, monthly, sessions, models, blocks (5-hour windows), projects,
    agents (subagent types), tickets (sessions in .claude/worktrees/<ticket>), branches (the
    lines' git branch), tools (a call split equally among the tool uses it issued), total
    (one row, or one per --by value), limits (the 5-hour and 7-day rate-limit windows the
    status line saw; also `brainlab limits`), check (telemetry's metric totals against the
    calls; formerly `usage-check`) or reconcile (each session's tokens and cost per UTC day
    from transcripts, telemetry and the status line side by side, the gaps, and a flag past
    the tolerance). --by DIM adds a grouping to any view but tools and
    blocks (`usage --by user` is the former `usage-who --by user`); --project, --branch,
    --user and --machine keep one value. Days, --since and --until are days of --timezone
    (default: brainlab.toml's `timezone`, else this machine's zone); cost is USD at the prices
    `ingest claude` used.
    """
    from brainlab.common import tables
    from brainlab.metrics.usage import check_dimensions, usage_table

    view = view or ("total" if by else "daily")
    if as_json and as_csv:
        raise ConfigError("--json and --csv print different formats: give one of them")
    by = check_dimensions(by)
    filters = {"branch": branch, "user": user, "machine": machine}
    if tolerance is not None and view != "check":
        raise ConfigError("--tolerance is for `usage check` only")
    if view in ("limits", "check"):  # issue 25: brainlab.metrics.limits; issue 26: otel
        given = [name for name, value in (("--since", since), ("--until", until),
                 ("--project", project), ("--branch", branch), ("--user", user),
                 ("--machine", machine), ("--by", by), ("--timezone", timezone),
                 ("--start-of-week", start_of_week),
                 ("--cost-mode", cost_mode != "calculate" or None)) if value]
        if view == "check":
            given += [n for n, v in (("--limit", limit), ("--csv", as_csv)) if v]
        if given:
            takes = ("--limit, --json, --csv and --db" if view == "limits"
                     else "--tolerance, --json and --db")
            raise ConfigError(f"usage {view} takes {takes} only: drop {', '.join(given)}")
        if view == "check":
            _usage_check(db, 0.01 if tolerance is None else tolerance, as_json)
            return
        from brainlab.common import terminal
        from brainlab.metrics.limits import limits_output

        shown = limits_output(db, limit, "json" if as_json else "csv" if as_csv else "text")
        click.echo(shown if as_json or as_csv else terminal.fit(shown, terminal.width()),
                   nl=False)
        return
    if view == "reconcile":  # issue 45: brainlab.metrics.reconcile, three measures side by side
        from brainlab.metrics.reconcile import reconcile_output

        given = [name for name, value in (("--project", project), ("--branch", branch),
                 ("--user", user), ("--machine", machine), ("--by", by),
                 ("--timezone", timezone), ("--start-of-week", start_of_week),
                 ("--tolerance", tolerance),
                 ("--cost-mode", cost_mode != "calculate" or None)) if value]
        if given:
            raise ConfigError("usage reconcile takes --since, --until (UTC days), --limit,"
                              f" --json, --csv and --db only: drop {', '.join(given)}")
        click.echo(reconcile_output(db, "json" if as_json else "csv" if as_csv else "text",
                                    since=since, until=until, limit=limit), nl=False)
        return
    if view == "blocks" and cost_mode != "calculate":
        raise ConfigError("--cost-mode reported|auto is not available for blocks yet: use"
                          " --cost-mode calculate (the default) with `usage blocks`")
    if view == "blocks":
        from brainlab.metrics.usage_blocks import blocks_table

        if by:
            raise ConfigError("usage blocks are 5-hour windows of all the calls: drop --by"
                              " (filters --project, --branch, --user, --machine apply)")
        found = blocks_table(db, since=since, until=until, project=project, timezone=timezone,
                             filters=filters)
    else:
        found = usage_table(db, view, since=since, until=until, project=project, limit=limit,
                            timezone=timezone, start_of_week=start_of_week,
                            cost_mode=cost_mode, by=by, filters=filters)
    if as_json or as_csv:
        click.echo((tables.to_json if as_json else tables.to_csv)(found.columns, found.rows),
                   nl=as_json)
    else:
        print_usage(found, db)
    if found.undated:  # counting rule 4: never a "day: null" row (stderr: JSON stays JSON)
        click.echo(f"{found.undated} call(s) without a timestamp left out of this dated view"
                   " (counted in `usage sessions` and `usage models`; see `brainlab errors`)",
                   err=as_json or as_csv)
    click.get_current_context().exit(CLOSED)  # the store is closed: no teardown (run)


def _usage_check(db: Path, tolerance: float, as_json: bool) -> None:
    """``usage check``: where telemetry's metric totals and the call totals disagree."""
    from brainlab.common import tables
    from brainlab.otel.check import usage_check

    found = usage_check(db, tolerance)
    if as_json:
        click.echo(tables.to_json(list(found.columns), found.rows))
        return
    if not found.rows:
        click.echo(found.message)
        return
    _print_table(found.columns, found.rows, totals=False)
    click.echo(found.message)


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
    """Alias of `brainlab usage check` (kept for one release): metric vs call totals."""
    _usage_check(db, tolerance, as_json=False)


@click.command("usage-who")
@click.option("--by", default="user", show_default=True, metavar="DIM",
              type=click.Choice(["user", "organization", "query_source", "agent", "skill",
                                 "mcp_server", "effort", "speed", "source", "model"]),
              help="Group by: user, organization, query_source, agent, skill, mcp_server,"
                   " effort, speed, source or model.")
@db_option()
@click.option("--since", metavar="DAY", default=None,
              help="First day of --timezone, e.g. 2026-11-01.")
@click.option("--until", metavar="DAY", default=None,
              help="Last day of --timezone (inclusive).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON records instead of a table.")
@timezone_option
@handle_errors
def usage_who_cmd(by: str, db: Path, since, until, as_json: bool,
                  timezone: str | None) -> None:
    """Alias of `brainlab usage --by DIM` (kept for one release): who spent it (issue 26).

    Every call counts once (transcripts and telemetry); calls without an api_request event
    show as the missing marker. --by agent is the telemetry's agent name (`usage --by
    agent_name`); days follow --timezone, as `usage`'s.
    """
    from brainlab.common import tables
    from brainlab.metrics.usage import usage_who

    columns, rows, message = usage_who(db, by, since, until, timezone)
    if as_json:
        click.echo(tables.to_json(list(columns), rows))
        return
    if not rows:
        click.echo(message)
        return
    _print_table(columns, rows, totals=True)


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
