"""``brainlab errors`` and ``brainlab sql``: read what ingest recorded, query the store."""

from __future__ import annotations

from pathlib import Path

import click

from brainlab.cli.root import main
from brainlab.cli.support import db_option, handle_errors, out


@main.command("errors")
@db_option()
@click.option("--limit", type=int, default=50, show_default=True,
              help="Show at most this many problems.")
@handle_errors
def errors_cmd(db: Path, limit: int) -> None:
    """List the problems recorded by ingest (file, line, reason)."""
    from brainlab.store.ingest_text import recorded_problems

    for line in recorded_problems(db, limit):
        click.echo(line)


@main.command("sql")
@click.argument("statement")
@db_option()
@handle_errors
def sql_cmd(statement: str, db: Path) -> None:
    """Run one read-only SQL statement and print the result."""
    from brainlab.store.sql import result_text, rows_line, run_sql

    names, rows, empty = run_sql(db, statement)
    if not rows:
        click.echo(empty)
        return
    shown, rich = result_text(names, rows, width=out.width, styled=out.styled)
    if rich:  # cells to wrap, or too wide: rich lays it out
        out.print(shown)
    else:
        click.echo(shown, nl=False)
    click.echo(rows_line(len(rows)))
