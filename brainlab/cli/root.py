"""The top of the command tree: the ``brainlab`` group, its settings, and the console script.

Every command turns a :class:`~brainlab.common.errors.BrainlabError` into ``Error: ...`` and exit
code 1 (see :mod:`brainlab.cli.support`). Logic lives in the library; a command is a few lines.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from brainlab import __version__
from brainlab.common.errors import BrainlabError
from brainlab.common.paths import CONFIG_ENV, DEFAULT_DB, DEFAULT_REPORTS, config_requested
from brainlab.common.plaintext import visible

if TYPE_CHECKING:
    from brainlab.settings import Settings



@click.group()
@click.version_option(__version__, prog_name="brainlab")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Settings file ([thresholds], [regulator], [paths], timezone);"
                                 " default: $BRAINLAB_CONFIG, else ./brainlab.toml when present.")
@click.pass_context
def main(ctx: click.Context, config_path: Path | None) -> None:
    """brainlab: load brain-protocol logs into DuckDB, replay them, report on them."""
    if not config_requested(config_path):  # no settings file: SPEC defaults, nothing imported
        return
    from brainlab.settings import load_settings

    try:
        ctx.obj = load_settings(config_path)
    except BrainlabError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(1)
    _apply_settings(ctx, ctx.obj)


def _apply_settings(ctx: click.Context, settings) -> None:
    """Make a settings file the default of every command's --db/--out/--prices/--thresholds.

    Through click's ``default_map`` (an option given on the command line still wins), and
    ``$BRAINLAB_CONFIG`` for the notebooks and reports a command runs in a kernel.
    """
    if settings.source is None:
        return
    os.environ[CONFIG_ENV] = str(Path(settings.source).resolve())
    swaps = {("db", DEFAULT_DB): settings.db, ("out_dir", DEFAULT_REPORTS): settings.reports,
             ("prices", None): settings.prices, ("thresholds_file", None): settings.source}

    def defaults(group: click.Group) -> dict:
        found = {}
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                found[name] = defaults(command)
                continue
            found[name] = {p.name: swaps[(p.name, p.default)] for p in command.params
                           if swaps.get((p.name, p.default)) is not None}
        return found

    ctx.default_map = defaults(ctx.command)


def settings() -> Settings:
    """The settings the group loaded (SPEC defaults outside a command)."""
    from brainlab.settings import Settings

    ctx = click.get_current_context(silent=True)
    found = ctx.find_object(Settings) if ctx else None
    return found or Settings()


class ClosedExit(int):
    """Exit status 0 of a command that closed its store and every file it opened.

    A command returns :data:`CLOSED`; its group's result callback exits with it
    (``ctx.exit(CLOSED)``), and :func:`run` then leaves without tearing the interpreter down.
    Anything else (CliRunner, a test) sees exit code 0.
    """


CLOSED = ClosedExit(0)


def run() -> None:
    """The console script: :func:`main`, then ``os._exit`` after an exit with :data:`CLOSED`.

    Tearing the interpreter down (freeing every module and object) cost 15-30 ms of an
    incremental ``ingest claude`` (0.15-0.4 s, issue 12); that command closes its store
    first, so once its output is flushed nothing is left to clean up.
    """
    try:
        main()
    except SystemExit as exc:
        if not isinstance(exc.code, ClosedExit):
            raise
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:  # a closed pipe: let Python report it as usual
            raise exc from None
        os._exit(0)
    except Exception as exc:  # a bug no command foresaw: still one line, never a traceback
        if os.environ.get("BRAINLAB_DEBUG"):
            raise
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        click.echo(f"Error: unexpected {type(exc).__name__}: {visible(first)}. This is a brainlab"
                   " bug: run the command again with BRAINLAB_DEBUG=1 and report the traceback",
                   err=True)
        sys.exit(70)
