"""The live commands for click: ``hooks install|uninstall``, ``hook ...``, ``statusline``, ``limits``.

``statusline`` and ``hook ...`` normally run through :mod:`brainlab.live.fast` before click
is imported; these definitions give them ``--help`` and serve any other way of calling
them (the same library functions either way).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from brainlab.common.paths import DEFAULT_DB


def _handle(func):
    from brainlab.cli.support import handle_errors

    return handle_errors(func)


@click.group("hooks")
def hooks_group() -> None:
    """Add or remove brainlab's hooks and status line in Claude Code's settings."""


def _target(scope: str, settings: Path | None) -> Path:
    from brainlab.live.settings import settings_path

    return settings if settings is not None else settings_path(scope)


_scope = click.option("--scope", type=click.Choice(["user", "project", "local"]), default="user",
                      show_default=True, help="Which settings file: ~/.claude/settings.json,"
                      " .claude/settings.json or .claude/settings.local.json.")
_settings = click.option("--settings", "settings_file", type=click.Path(path_type=Path),
                         default=None, help="This settings file instead of the scope's.")
_dry = click.option("--dry-run", is_flag=True, help="Print the diff; write nothing.")


def _run(install: bool, scope, settings_file, dry_run, db) -> None:
    from brainlab.live.settings import apply, plan, shown

    change = plan(_target(scope, settings_file), install, db)
    where = shown(str(change.path))
    if dry_run:
        click.echo(change.diff() or f"{where}: nothing to change", nl=False)
        if not change.diff():
            click.echo()
    elif change.changed:
        apply(change)
        through = f" (through its symlink, in {shown(str(change.target))})" \
            if change.target != change.path else ""
        click.echo(f"{'installed in' if install else 'removed from'} {where}{through}")
    else:
        click.echo(f"{where}: {'already installed' if install else 'nothing of brainlab'}"
                   "; nothing changed")
    if change.note:
        click.echo(change.note)


@hooks_group.command("install")
@_scope
@_settings
@_dry
@click.option("--db", type=click.Path(path_type=Path), default=DEFAULT_DB, show_default=True,
              help="Store the hooks ingest into (written as an absolute path).")
def hooks_install(scope, settings_file, dry_run, db) -> None:
    """Add the ingest and session-start hooks and the status line (idempotent)."""
    _handle(_run)(True, scope, settings_file, dry_run, db)


@hooks_group.command("uninstall")
@_scope
@_settings
@_dry
def hooks_uninstall(scope, settings_file, dry_run) -> None:
    """Remove exactly the hooks and status line brainlab added."""
    _handle(_run)(False, scope, settings_file, dry_run, DEFAULT_DB)


@click.group("hook")
def hook_group() -> None:
    """Commands Claude Code runs as hooks (JSON on stdin; always exit 0)."""


@hook_group.command("ingest")
@click.option("--foreground", is_flag=True, help="Ingest in this process (else detached).")
@click.option("--db", default=None, help="Store (default: $BRAINLAB_DB, else the settings' [paths] db,"
              " else data/brainlab.duckdb).")
def hook_ingest(foreground: bool, db: str | None) -> None:
    """Stop/SubagentStop/SessionEnd/PreCompact: ingest the named transcripts, spool if busy."""
    from brainlab.live.hook_ingest import main

    sys.exit(main(sys.stdin.buffer, foreground=foreground, db=db))


@hook_group.command("session-start")
@click.option("--db", default=None, help="Store (default: $BRAINLAB_DB, else the settings' [paths] db,"
              " else data/brainlab.duckdb).")
def hook_session_start(db: str | None) -> None:
    """SessionStart: print the protocol's boot context (coach, KPI, claims, budget) if any."""
    from brainlab.live.fast import session_start_main

    sys.exit(session_start_main(db, lambda text: click.echo(text, nl=False)))


@click.command("statusline")
@click.option("--segments", default=None, metavar="LIST",
              help="Comma-separated: model,effort,context,cost,today,limit,ticket,protocol"
                   " (default: all).")
@click.option("--plain", is_flag=True, help="No colours.")
@click.option("--width", type=int, default=None, help="Columns (default: $COLUMNS).")
def statusline_cmd(segments: str | None, plain: bool, width: int | None) -> None:
    """Print Claude Code's status line from its JSON on stdin (exit 0 whatever happens)."""
    from brainlab.live.fast import parse_statusline_args, statusline_main

    args = (["--segments", segments] if segments else []) + (["--plain"] if plain else []) \
        + (["--width", str(width)] if width else [])
    options = parse_statusline_args(args)
    if options is None:
        raise click.BadParameter(f"unknown segment in {segments!r}", param_hint="--segments")
    sys.exit(statusline_main(options))


@click.command("limits")
@click.option("--db", type=click.Path(path_type=Path), default=DEFAULT_DB, show_default=True,
              help="DuckDB database file.")
@click.option("--limit", type=int, default=20, show_default=True, help="Newest N windows.")
def limits_cmd(db: Path, limit: int) -> None:
    """Rate-limit use over time (the same as `brainlab usage limits`)."""
    _handle(_limits)(db, limit)


def _limits(db: Path, limit: int) -> None:
    from brainlab.common import terminal
    from brainlab.metrics.limits import limits_text

    click.echo(terminal.fit(limits_text(db, limit), terminal.width()), nl=False)
