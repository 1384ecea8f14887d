"""The status line's and the hook ingest's launcher: ``python -S .../brainlab/live/launch.py ...``.

Python's start-up imports ``site`` (every ``.pth`` file of site-packages: editable installs,
plug-ins): 100 ms of a 150 ms status line on a busy machine, for nothing the status line uses
(it needs the standard library and this package only). ``brainlab hooks install`` therefore
writes ``<python> -S <this file> statusline``: this file puts the folder holding the
``brainlab`` package first on ``sys.path`` and runs :func:`brainlab.live.fast.dispatch`.
Arguments it does not know print the minimal line (statusline) or nothing, and exit 0.

Every hook command must still run through it (issue 46 item 5): ``hook ingest --foreground``
and ``hook session-start`` need DuckDB, which lives in site-packages. So the first import that
nothing on the bare path satisfies runs ``site`` then (:class:`SiteOnDemand`) and is looked up
again: the status line, which imports nothing outside the standard library and this package,
never pays for it; a command that needs DuckDB gets it.
"""

import os
import sys


class SiteOnDemand:
    """The last finder of ``sys.meta_path``: site-packages added on the first need.

    A top-level module no other finder resolves and that site-packages holds (``duckdb``)
    adds site-packages as a start without ``-S`` would have (``site.main()``: ``.pth`` files
    too), then is looked up again. A module missing everywhere (the standard library's
    optional imports, ``org.python.core`` of ``copy``) costs a look at the site-packages
    folders, never ``site.main()``.
    """

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        """The module's spec once site-packages are on the path (None: not there either)."""
        if path is not None or cls not in sys.meta_path:
            return None  # a submodule: its package was found, and with it the path
        import site  # with -S its import runs nothing
        from importlib.machinery import PathFinder

        prefixes = [sys.prefix]  # a virtual environment's: site.venv() sets it, so look
        here = os.path.dirname(sys.executable)  # for its pyvenv.cfg as that function does
        for folder in (here, os.path.dirname(here)):
            if os.path.isfile(os.path.join(folder, "pyvenv.cfg")):
                prefixes.insert(0, folder)
                break
        folders = [f for f in site.getsitepackages(prefixes) + [site.getusersitepackages()]
                   if os.path.isdir(f)]
        if PathFinder.find_spec(name, folders) is None:
            return None
        sys.meta_path.remove(cls)
        site.main()
        return PathFinder.find_spec(name, None, target)


if __name__ == "__main__":
    ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.path[0] = ROOT  # not brainlab/live/: its modules would shadow the standard library
    if sys.flags.no_site:
        sys.meta_path.append(SiteOnDemand)
    from brainlab.live.fast import dispatch

    dispatch(["brainlab", *sys.argv[1:]])
    if sys.argv[1:2] == ["statusline"]:
        print("brainlab")
    sys.exit(0)
