"""The status line's and the hook ingest's launcher: ``python -S .../brainlab/live/launch.py ...``.

Python's start-up imports ``site`` (every ``.pth`` file of site-packages: editable installs,
plug-ins): 100 ms of a 150 ms status line on a busy machine, for nothing the status line uses
(it needs the standard library and this package only). ``brainlab hooks install`` therefore
writes ``<python> -S <this file> statusline``: this file puts the folder holding the
``brainlab`` package first on ``sys.path`` and runs :func:`brainlab.live.fast.dispatch`.
Arguments it does not know print the minimal line (statusline) or nothing, and exit 0.

Every hook command must still run through it (issue 46 item 5): ``hook ingest --foreground``
and ``hook session-start`` need DuckDB, which lives in site-packages. So the first import that
nothing on the bare path satisfies runs ``site`` then
(:class:`brainlab.live.fast.SiteOnDemand`, in a module so that its code is not compiled at
each run as this script's is) and is looked up again: a hook command that needs DuckDB gets
it. The status line, which imports nothing outside the standard library and this package,
runs without it (not even the look a probe such as ``copy``'s ``org.python.core`` costs).
"""

import os
import sys

if __name__ == "__main__":
    ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.path[0] = ROOT  # not brainlab/live/: its modules would shadow the standard library
    from brainlab.live import fast

    if sys.flags.no_site and sys.argv[1:2] != ["statusline"]:  # the line needs none: its
        sys.meta_path.append(fast.SiteOnDemand)  # optional imports (copy's) cost nothing
    fast.dispatch(["brainlab", *sys.argv[1:]])
    if sys.argv[1:2] == ["statusline"]:
        print("brainlab")
    sys.exit(0)
