"""The ``brainlab`` command tree: one module per command group (docs/cli.md lists them).

Each module parses arguments, calls the library and prints.

``root`` holds the ``brainlab`` group and the console script (:func:`run`); importing this
package registers every group's commands on it. ``statusline`` and ``hook ...`` are answered
by :mod:`brainlab.live.fast` before click is even imported (issue 25).
"""

from __future__ import annotations

import sys

if sys.argv[1:2] in (["statusline"], ["hook"]):  # issue 25: live commands start without click
    from brainlab.live.fast import dispatch

    dispatch(sys.argv)  # exits when it handled the command

from brainlab.cli import (  # noqa: E402,F401  (each module registers its commands on main)
    check,
    demo,
    ingest,
    lab,
    lake,
    live,
    prices,
    report,
    simulate,
    store,
    tune,
    usage,
)
from brainlab.cli.root import main, run, settings  # noqa: E402

for _command in (prices.prices_cmd, live.hooks_group, live.hook_group, live.statusline_cmd,
                 live.limits_cmd):
    main.add_command(_command)

__all__ = ["main", "run", "settings"]
