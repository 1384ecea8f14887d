"""The whole command tree: every command module, each registering its commands on ``main``.

docs/cli.md lists them; :mod:`brainlab.cli` loads this module once the live fast path
(``statusline``, ``hook ...``) has declined the command line.
"""

from __future__ import annotations

from brainlab.cli import (  # noqa: F401  (each module registers its commands on main)
    check,
    demo,
    ingest,
    lab,
    lake,
    live,
    notebooks,
    prices,
    report,
    simulate,
    store,
    trends,
    tune,
    usage,
)
from brainlab.cli.root import main, run, settings

for _command in (prices.prices_cmd, live.hooks_group, live.hook_group, live.statusline_cmd,
                 live.limits_cmd):
    main.add_command(_command)

__all__ = ["main", "run", "settings"]
