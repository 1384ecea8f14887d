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
from brainlab.common.paths import DEFAULT_DB, DEFAULT_REPORTS, SETTINGS_ENV, config_requested
from brainlab.common.plaintext import visible

if TYPE_CHECKING:
    from collections.abc import Callable

    from brainlab.settings import Settings


class Tree(click.Group):
    """The ``brainlab`` group: a command's module is imported when the command is asked for.

    ``load(name)`` (:func:`brainlab.cli.commands.load`) imports the module registering
    ``name``, or every module for None; set once the tree's module is imported.
    """

    load: Callable[[str | None], None] | None = None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name``, its module imported first (every one for a name none has)."""
        if cmd_name not in self.commands and self.load is not None:
            self.load(cmd_name)
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command's name (all their modules imported)."""
        if self.load is not None:
            self.load(None)
        return super().list_commands(ctx)


@click.group(cls=Tree)
@click.version_option(__version__, prog_name="brainlab")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Settings file ([thresholds], [regulator], [paths], timezone,"
                                 " start_of_week); default: $BRAINLAB_CONFIG, else ./brainlab.toml"
                                 " when present (docs/settings.md).")
@click.pass_context
def main(ctx: click.Context, config_path: Path | None) -> None:
    """brainlab: load brain-protocol logs into DuckDB, replay them, report on them."""
    if not config_requested(config_path):  # SPEC defaults: nothing to read, nothing imported
        return
    from brainlab import settings as store

    try:
        resolved = store.resolve(config_path)
    except BrainlabError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(1)
    _apply_settings(ctx, resolved)


def _apply_settings(ctx: click.Context, resolved: Settings) -> None:
    """Make ``resolved`` the process's settings for this command, and its children's.

    The settings' db, reports folder and price file become the defaults of every command's
    ``--db``/``--out``/``--prices`` (click's ``default_map``: an option given on the command
    line still wins); the kernels, papermill runs and workers the command starts receive them
    in ``$BRAINLAB_SETTINGS``. Both are undone when the command ends (a test's next command
    in the same process starts afresh).
    """
    from brainlab import settings as store

    ctx.obj = resolved
    store.use(resolved)
    before = os.environ.get(SETTINGS_ENV)
    os.environ[SETTINGS_ENV] = resolved.to_json()

    def restore() -> None:
        store.use(None)
        if before is None:
            os.environ.pop(SETTINGS_ENV, None)
        else:
            os.environ[SETTINGS_ENV] = before

    ctx.call_on_close(restore)
    swaps = {("db", DEFAULT_DB): resolved.db, ("out_dir", DEFAULT_REPORTS): resolved.reports,
             ("prices", None): resolved.prices}

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
    """The process's settings (:func:`brainlab.settings.current`): the group resolved them."""
    from brainlab.settings import current

    return current()


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
    from brainlab.store.connection import LINGER_S, WARM

    WARM.linger = LINGER_S  # the process is brainlab's alone: its readers keep the store warm
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
