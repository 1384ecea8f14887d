"""The otel commands: ``brainlab ingest otel PATH...``, ``usage-check`` and ``usage-who``.

Registered in cli.py with ``add_command``; each parses options, calls the library, prints,
with the helpers of :mod:`brainlab.cli_support` (the library half is ``brainlab/otel``).
"""

from __future__ import annotations

import functools
from pathlib import Path

import click

from brainlab.paths import DEFAULT_DB


def db_option():
    """The shared ``--db PATH`` option (as cli.db_option)."""
    return click.option("--db", "db", type=click.Path(path_type=Path), default=DEFAULT_DB,
                        show_default=True, help="DuckDB database file.")


def handle_errors(func):
    """cli.handle_errors, looked up at call time: BrainlabError -> one line, exit 1."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from brainlab.cli_support import handle_errors as handle

        return handle(func)(*args, **kwargs)

    return wrapper


@click.command("otel")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@db_option()
@click.option("--hash-identities", is_flag=True,
              help="Store user ids and emails as keyed hashes (key: $BRAINLAB_IDENTITY_KEY).")
@handle_errors
def ingest_otel_cmd(paths: tuple[Path, ...], db: Path, hash_identities: bool) -> None:
    """Ingest OpenTelemetry files (the collector's file exporter: OTLP JSON or proto, zstd).

    PATHS are files or folders. Files are known by content: a rotated or renamed file is not
    read again, a grown file only from where the last run stopped.
    """
    from brainlab.cli_support import late_progress, print_problems
    from brainlab.otel.ingest import ingest_otel_db

    with late_progress("ingest otel") as advance:
        summary = ingest_otel_db(db, paths, hash_identities=hash_identities, progress=advance)
    rows = summary.rows
    click.echo(f"otel {summary.read} read, {summary.unchanged} unchanged, {summary.renamed}"
               f" renamed, {summary.bytes_read / 1e6:.1f} MB")
    click.echo(f"{rows.get('otel_events', 0):,} events, {rows.get('otel_metric_points', 0):,}"
               f" metric points, {rows.get('otel_spans', 0):,} spans,"
               f" {rows.get('otel_attributes', 0):,} other attributes")
    print_problems(summary.errors, summary.warnings, db)
    click.echo(f"database: {db}")


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
    from brainlab import tables
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
    from brainlab import tables
    from brainlab.cli_support import out

    text, _hidden = tables.render_text(columns, rows, width=out.width, totals=totals,
                                       bold=out.styled)
    if text is not None:
        click.echo(text, nl=False)
    else:  # a cell that needs wrapping or is not plain ASCII: rich lays it out
        out.print(tables.render(columns, rows, width=out.width, totals=totals)[0])
