"""The status line's and the hook ingest's launcher: ``python -S .../brainlab/live/launch.py ...``.

Python's start-up imports ``site`` (every ``.pth`` file of site-packages: editable installs,
plug-ins): 100 ms of a 150 ms status line on a busy machine, for nothing the status line uses
(it needs the standard library and this package only). ``brainlab hooks install`` therefore
writes ``<python> -S <this file> statusline``: this file puts the folder holding the
``brainlab`` package first on ``sys.path`` and runs :func:`brainlab.live.fast.dispatch`.
Arguments it does not know print the minimal line (statusline) or nothing, and exit 0.
"""

import os
import sys

if __name__ == "__main__":
    ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.path[0] = ROOT  # not brainlab/live/: its modules would shadow the standard library
    from brainlab.live.fast import dispatch

    dispatch(["brainlab", *sys.argv[1:]])
    if sys.argv[1:2] == ["statusline"]:
        print("brainlab")
    sys.exit(0)
