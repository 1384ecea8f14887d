"""The ``brainlab`` command tree: one module per command group (docs/cli.md lists them).

Each module parses arguments, calls the library and prints.

``root`` holds the ``brainlab`` group and the console script; :mod:`brainlab.cli.commands`
imports every group's module, which registers its commands on it. :func:`run` answers
``statusline`` and ``hook ...`` with :mod:`brainlab.live.fast` before click is even imported
(issue 25); ``main`` and ``settings`` load the tree when first read.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from brainlab.cli.root import main, settings

__all__ = ["main", "run", "settings"]


def run() -> None:
    """The console script (``brainlab``): the live fast path, else the command tree."""
    if sys.argv[1:2] in (["statusline"], ["hook"]):  # issue 25: live commands without click
        from brainlab.live.fast import dispatch

        dispatch(sys.argv)  # exits when it handled the command
    from brainlab.cli.commands import run as run_tree

    run_tree()


def __getattr__(name: str):
    """``brainlab.cli.main`` and ``brainlab.cli.settings``: the tree, loaded on first use."""
    if name in ("main", "settings"):
        from brainlab.cli import commands

        return getattr(commands, name)
    raise AttributeError(f"module 'brainlab.cli' has no attribute {name!r}")
