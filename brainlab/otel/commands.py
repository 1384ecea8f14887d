"""The otel commands: ``brainlab ingest otel PATH...`` and ``brainlab usage-check``.

Registered in cli.py with ``add_command``; each parses options, calls the library, prints.
cli.py imports this module at its end, so the helpers of cli.py are looked up when a command
runs (importing this module first must not import cli.py half-way).
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
        from brainlab.cli import handle_errors as handle

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
    from brainlab.cli import late_progress, print_problems
    from brainlab.otel.ingest import ingest_otel_db

    with late_progress("ingest otel") as advance:
        summary = ingest_otel_db(db, paths, hash_identities=hash_identities, progress=advance)
    rows = summary.rows
    click.echo(f"otel {summary.read} read, {summary.unchanged} unchanged, {summary.renamed}"
               f" renamed, {summary.bytes_read / 1e6:.1f} MB: {rows.get('otel_events', 0):,}"
               f" events, {rows.get('otel_metric_points', 0):,} metric points,"
               f" {rows.get('otel_spans', 0):,} spans, {rows.get('otel_attributes', 0):,}"
               " other attributes")
    print_problems(summary.errors, summary.warnings, db)
    click.echo(f"database: {db}")


@click.command("usage-check")
@db_option()
@click.option("--tolerance", default=0.01, show_default=True,
              help="Relative difference under which metric and call totals agree.")
@handle_errors
def usage_check_cmd(db: Path, tolerance: float) -> None:
    """Where Claude Code's metric totals and the call totals disagree (per day and model)."""
    from brainlab import tables
    from brainlab.otel.check import usage_check

    found = usage_check(db, tolerance)
    if not found.rows:
        click.echo(found.message)
        return
    text, _hidden = tables.render_text(found.columns, found.rows, width=160)
    if text is None:  # a cell rich would have to wrap: plain columns
        text = "".join("  ".join(str(c) for c in row) + "\n" for row in [found.columns, *found.rows])
    click.echo(text, nl=False)
    click.echo(found.message)
