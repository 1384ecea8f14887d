"""The whole command tree: each top-level command's module, loaded when the command is asked for.

docs/cli.md lists them; :mod:`brainlab.cli` loads this module once the live fast path
(``statusline``, ``hook ...``) has declined the command line. A command's module registers
its commands on ``main`` when imported; ``main`` (:class:`~brainlab.cli.root.Tree`) imports
only the module of the command it runs (the other thirteen cost every ``brainlab`` process
~10 ms), and all of them to list or document the tree, or to answer an unknown name.
"""

from __future__ import annotations

from brainlab.cli.root import main, run, settings

# each top-level command, and the module of brainlab.cli that registers it
COMMANDS = {
    "check": "check", "synth": "demo", "demo": "demo", "ingest": "ingest", "lab": "lab",
    "export": "lake", "attach": "lake", "spark": "lake", "notebooks": "notebooks",
    "report": "report", "simulate": "simulate", "errors": "store", "sql": "store",
    "trends": "trends", "tune": "tune", "usage": "usage", "usage-check": "usage",
    "usage-who": "usage", "prices": "prices", "hooks": "live", "hook": "live",
    "statusline": "live", "limits": "live",
}
_loaded: set[str] = set()


def load(name: str | None = None) -> None:
    """Import the module registering the top-level command ``name`` (None: every module).

    A name no module registers loads them all too, so the tree, and an unknown name's error,
    list every command. Static imports, one per module (no dynamic import of brainlab:
    tests/test_architecture.py).
    """
    wanted = set(COMMANDS.values()) if name not in COMMANDS else {COMMANDS[name]}
    wanted -= _loaded
    _loaded.update(wanted)
    if "check" in wanted:
        from brainlab.cli import check  # noqa: F401
    if "demo" in wanted:
        from brainlab.cli import demo  # noqa: F401
    if "ingest" in wanted:
        from brainlab.cli import ingest  # noqa: F401
    if "lab" in wanted:
        from brainlab.cli import lab  # noqa: F401
    if "lake" in wanted:
        from brainlab.cli import lake  # noqa: F401
    if "notebooks" in wanted:
        from brainlab.cli import notebooks  # noqa: F401
    if "report" in wanted:
        from brainlab.cli import report  # noqa: F401
    if "simulate" in wanted:
        from brainlab.cli import simulate  # noqa: F401
    if "store" in wanted:
        from brainlab.cli import store  # noqa: F401
    if "trends" in wanted:
        from brainlab.cli import trends  # noqa: F401
    if "tune" in wanted:
        from brainlab.cli import tune  # noqa: F401
    if "usage" in wanted:
        from brainlab.cli import usage  # noqa: F401
    if "prices" in wanted:
        from brainlab.cli import prices

        main.add_command(prices.prices_cmd)
    if "live" in wanted:
        from brainlab.cli import live

        for command in (live.hooks_group, live.hook_group, live.statusline_cmd,
                        live.limits_cmd):
            main.add_command(command)


main.load = load

__all__ = ["COMMANDS", "load", "main", "run", "settings"]
