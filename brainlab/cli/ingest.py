"""``brainlab ingest ...``: load files into the database (the only commands that write)."""

from __future__ import annotations

from pathlib import Path

import click

from brainlab.cli.options import cost_mode_option
from brainlab.cli.root import CLOSED, main
from brainlab.cli.support import (
    db_option,
    drain_live_spool,
    handle_errors,
    late_progress,
    out,
    print_problems,
    run_ingest,
)


@main.group()
def ingest() -> None:
    """Load files into the database (the only commands that write)."""


@ingest.result_callback()
@click.pass_context
def _ingest_done(ctx: click.Context, result, **_kwargs) -> None:
    from brainlab.store import upgrade  # the store was upgraded to this schema (issue 24)

    while upgrade.DONE:
        click.echo(upgrade.DONE.pop(0).line())
    if result is CLOSED:  # the command closed its store: the console script may skip teardown
        ctx.exit(CLOSED)


@ingest.command("brain")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@db_option()
@handle_errors
def ingest_brain(path: Path, db: Path) -> None:
    """Ingest a brain checkout: metabolism logs, agents, contexts, claims, handoffs, workspaces."""
    from brainlab.sources import brain_sources
    from brainlab.store.ingest import ingest_brain as ingest_brain_files
    from brainlab.store.ingest import require_brain

    require_brain(path)  # fails before the progress bar and the db
    run_ingest(db, brain_sources(), path, "brain", ingest=ingest_brain_files)


@ingest.command("sprints")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@db_option()
@handle_errors
def ingest_sprints(path: Path, db: Path) -> None:
    """Ingest sprints: a JSONL sprint record, a broker output .md, a contract, or a brain folder."""
    from brainlab.common.errors import SourceError
    from brainlab.sources.sprints import nothing_found, sources_for

    sources = sources_for(path)
    if not any(s.discover(path.resolve()) for s in sources):  # fail before touching the db
        raise SourceError(nothing_found(path))
    run_ingest(db, sources, path, "sprints")



@ingest.command("circuits")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@db_option()
@handle_errors
def ingest_circuits(path: Path, db: Path) -> None:
    """Ingest ticket circuit journals (SPEC §6.7): PATH/circuits/**/*.jsonl, or PATH/**/*.jsonl."""
    from brainlab.common.errors import SourceError
    from brainlab.sources.circuits import CircuitsSource

    if not CircuitsSource().discover(path.resolve()):  # fail before touching the db
        raise SourceError(CircuitsSource.nothing_found(path))
    run_ingest(db, [CircuitsSource()], path, "circuits")



@ingest.command("claude")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@db_option()
@click.option("--prices", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A TOML price file overriding/adding models (else $BRAINLAB_PRICES).")
@click.option("--daily", "table", flag_value="daily", default=None,
              help="Then print the daily usage table (as `brainlab usage daily`).")
@click.option("--weekly", "table", flag_value="weekly",
              help="Then print the weekly usage table (as `brainlab usage weekly`).")
@click.option("--prune", is_flag=True,
              help="Remove the rows of transcripts gone from disk (kept by default).")
@cost_mode_option
@handle_errors
def ingest_claude_cmd(path: Path | None, db: Path, prices: Path | None, table: str | None,
                      prune: bool, cost_mode: str) -> int:
    """Ingest Claude Code transcripts (default: every Claude root, as ccusage reads them).

    The roots: each folder of $CLAUDE_CONFIG_DIR (comma-separated), else
    ~/.config/claude/projects and ~/.claude/projects. Reads only new files and the new tail of
    grown files; tokens are deduplicated per API call. Transcripts Claude Code deleted keep
    their rows unless --prune. A progress bar appears once a run passes 0.5 s
    ($BRAINLAB_PROGRESS_AFTER: seconds, or never).
    """
    from brainlab.transcripts.ingest import default_roots, ingest_claude_db
    from brainlab.transcripts.summary_text import summary_lines

    root = path or default_roots()
    with late_progress("ingest claude") as advance:  # no bar for a quick run
        summary = ingest_claude_db(db, root, prices=prices, progress=advance, prune=prune)
    drain_live_spool(db, prices, root if isinstance(root, Path) else None)
    for line, style in summary_lines(summary, root):
        if style:  # names come from data: never read as markup
            out.print(line, style=style, markup=False, highlight=False)
        else:
            click.echo(line)
    print_problems(summary.errors, summary.warnings, db)
    click.echo(f"database: {db}")  # plain text: rich only for the coloured lines above
    if table:  # one process, as ccusage's one command: the same code as `brainlab usage`
        from brainlab.cli.usage import print_usage
        from brainlab.metrics.usage import usage_table

        print_usage(usage_table(db, table, cost_mode=cost_mode), db)
    return CLOSED  # the store is closed: the console script may skip teardown




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
    from brainlab.otel.ingest import ingest_otel_db

    with late_progress("ingest otel") as advance:
        summary = ingest_otel_db(db, paths, hash_identities=hash_identities, progress=advance)
    for line in summary.lines():
        click.echo(line)
    print_problems(summary.errors, summary.warnings, db)
    click.echo(f"database: {db}")


ingest.add_command(ingest_otel_cmd)
