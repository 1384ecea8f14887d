"""``brainlab errors`` and ``brainlab sql``: read what ingest recorded, query the store."""

from __future__ import annotations

from pathlib import Path

import click

from brainlab.cli.root import main
from brainlab.cli.support import (
    db_option,
    handle_errors,
    out,
)
from brainlab.common.plaintext import visible


@main.command("errors")
@db_option()
@click.option("--limit", type=int, default=50, show_default=True,
              help="Show at most this many problems.")
@handle_errors
def errors_cmd(db: Path, limit: int) -> None:
    """List the problems recorded by ingest (file, line, reason)."""
    from brainlab.store import rows

    _names, found = rows(db, "SELECT file, line, severity, reason FROM ingest_errors "
                             "ORDER BY file, line NULLS FIRST LIMIT ?", [limit])
    if not found:
        click.echo("No ingest errors or warnings recorded.")
        return
    for file, line, severity, reason in found:
        where = file if line is None else f"{file}:{int(line)}"
        click.echo(f"{visible(where)}: {severity}: {visible(reason)}")
    _names, ((errors, warnings),) = rows(db, "SELECT count(*) FILTER (WHERE severity = 'error'),"
                                             " count(*) FILTER (WHERE severity <> 'error')"
                                             " FROM ingest_errors")
    click.echo(f"{errors} error(s) (rows not loaded), {warnings} warning(s) (loaded, flagged)"
               + (f"; first {limit} shown" if errors + warnings > limit else ""))


@main.command("sql")
@click.argument("statement")
@db_option()
@handle_errors
def sql_cmd(statement: str, db: Path) -> None:
    """Run one read-only SQL statement and print the result."""
    from brainlab.common import tables
    from brainlab.store.sql import run_sql

    names, rows, empty = run_sql(db, statement)
    if not rows:
        click.echo(empty)
        return
    text, _hidden = tables.render_text(names, rows, width=out.width, bold=out.styled)
    if text is None:  # cells to wrap, or too wide: rich lays it out
        text, _hidden = tables.render(names, rows, width=out.width, records_if_too_wide=True)
        out.print(text)
    else:
        click.echo(text, nl=False)
    click.echo(f"{len(rows):,} row(s)")
