"""``brainlab check``: lint a brain checkout against the protocol (SPEC §2-§6)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from brainlab.cli.root import main
from brainlab.cli.support import (
    handle_errors,
)


@main.command("check")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text",
              show_default=True, help="Output: file:line lines, a JSON list, or SARIF 2.1.0.")
@click.option("--select", default="", metavar="IDS",
              help="Comma-separated rule ids or prefixes to check (default: all).")
@click.option("--ignore", default="", metavar="IDS",
              help="Comma-separated rule ids or prefixes to skip.")
@click.option("--db", "db", type=click.Path(path_type=Path), default=None,
              help="Also read the Claude Code transcripts of this database (read-only).")
@handle_errors(code=2)
def check_cmd(path: Path, fmt: str, select: str, ignore: str, db: Path | None) -> None:
    """Lint a brain checkout against the protocol (SPEC §2-§6).

    Exit 1 on an error or a file that could not be read, 2 on misuse.
    """
    from brainlab.rules.check import check
    from brainlab.rules.formats import render

    result = check(path, select.split(","), ignore.split(","), db=db)
    click.echo(render(result, fmt))
    sys.exit(result.exit_code)
