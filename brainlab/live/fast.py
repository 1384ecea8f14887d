"""Start-up path of ``brainlab statusline`` and ``brainlab hook ...``, before click is imported.

:func:`brainlab.cli.run`'s module calls :func:`dispatch` first when the console script is
``brainlab statusline|hook``: these commands run after each assistant message, so the 50 ms
of importing click (and rich, DuckDB) would be most of their cost. Anything this parser does
not know (``--help``, a typo) returns to click, which prints help and errors as usual.
Whatever happens inside, the commands print their output and exit 0 (DESIGN §3: live code
stays out of the way); problems go to the live log (:func:`brainlab.live.cache.log`).
"""

from __future__ import annotations

import os
import sys

FAST = ("statusline", "hook")
# The hard deadline of each command (issue 46 item 2): past it the process prints its degraded
# output (the minimal status line; session start: the boot context of the last digest, or
# nothing) and exits 0, even from inside a blocked system call: a real-time timer's SIGALRM
# interrupts the main thread's ``open`` of a FIFO or ``read`` of a pipe never closed, and its
# handler ends the run. The status line runs after every message and must not hold the
# display; session start is a hook `hooks install` gives 10 s.
STATUSLINE_BUDGET_S = 2.0
SESSION_START_BUDGET_S = 9.0  # inside the 10 s `hooks install` gives the hook (HOOK_TIMEOUT)
_DEGRADED = [b""]  # what the deadline prints (the minimal line; session start: its fallback)


def arm(seconds: float, degraded: str) -> None:
    """Start the deadline: ``seconds`` from now the process prints ``degraded`` and exits 0.

    ``signal.setitimer`` (a real-time timer): its signal interrupts any blocking call of the
    main thread (``open`` of a FIFO, ``read`` of a pipe), whose handler then ends the run.
    Nowhere without ``SIGALRM`` (Windows): nothing armed.
    """
    import _signal  # noqa: PLC2701 - the C module: ``signal`` builds enums at import (1 ms)

    if not hasattr(_signal, "setitimer"):
        return
    degrade(degraded)
    _signal.signal(_signal.SIGALRM, _expire)
    _signal.setitimer(_signal.ITIMER_REAL, seconds)


def degrade(text: str) -> None:
    """What the deadline prints from now on (a better fallback once one is known)."""
    _DEGRADED[0] = text.encode("utf-8", "backslashreplace")


def disarm() -> None:
    """Stop the deadline (before the command prints its own output)."""
    import _signal  # noqa: PLC2701

    if hasattr(_signal, "setitimer"):
        _signal.setitimer(_signal.ITIMER_REAL, 0)


def _expire(signum, frame) -> None:
    try:
        os.write(1, _DEGRADED[0])
    except OSError:
        pass
    try:
        from brainlab.live.cache import log

        log("deadline: the command ran out of its budget; printed its degraded output")
    finally:
        os._exit(0)


class SiteOnDemand:
    """The last finder of ``sys.meta_path``: site-packages added on the first need.

    A top-level module no other finder resolves and that site-packages holds (``duckdb``)
    adds site-packages as a start without ``-S`` would have (``site.main()``: ``.pth`` files
    too), then is looked up again. A module of the standard library missing on this platform
    (``nt``) costs nothing, one missing everywhere (``org.python.core``, which ``copy``
    tries) a look at the site-packages folders, never ``site.main()``.
    """

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        """The module's spec once site-packages are on the path (None: not there either)."""
        if path is not None or cls not in sys.meta_path or name in sys.stdlib_module_names:
            return None  # a submodule (its package was found), or a platform's module (nt)
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
        found = PathFinder.find_spec(name, folders)
        if found is None or found.origin is None:  # not there, or a bare folder (``org``)
            return None
        sys.meta_path.remove(cls)
        site.main()
        return PathFinder.find_spec(name, None, target)


def parse_statusline_args(args: list[str]) -> dict | None:
    """``--segments A,B``, ``--plain``, ``--width N``; None for anything else (click decides)."""
    from brainlab.live.statusline import SEGMENTS

    options = {"segments": SEGMENTS, "plain": False, "width": None}
    i = 0
    while i < len(args):
        arg, value = args[i], None
        if "=" in arg:
            arg, value = arg.split("=", 1)
        if arg == "--plain" and value is None:
            options["plain"] = True
        elif arg in ("--segments", "--width"):
            if value is None:
                if i + 1 >= len(args):
                    return None
                i, value = i + 1, args[i + 1]
            if arg == "--width":
                if not value.isdigit():
                    return None
                options["width"] = int(value)
            else:
                names = tuple(s.strip() for s in value.split(",") if s.strip())
                if not names or any(s not in SEGMENTS for s in names):
                    return None
                options["segments"] = names
        else:
            return None
        i += 1
    return options


def terminal_width(explicit: int | None) -> int | None:
    """``--width``, else ``$COLUMNS`` when it is a number, else no limit."""
    if explicit:
        return explicit
    value = os.environ.get("COLUMNS", "")
    return int(value) if value.isdigit() and int(value) > 0 else None


def statusline_main(options: dict) -> int:
    """Read stdin, print the line; 0 whatever happens, within :data:`STATUSLINE_BUDGET_S`."""
    from brainlab.live import statusline
    line = statusline.MINIMAL
    arm(STATUSLINE_BUDGET_S, line + "\n")
    try:
        data = statusline.parse(statusline.read_stdin(sys.stdin.buffer))
        line = statusline.render(data, options["segments"], options["plain"],
                                 terminal_width(options["width"]))
    except Exception as exc:  # noqa: BLE001 - a status line never fails the session's display
        from brainlab.live.cache import log

        log(f"statusline: {type(exc).__name__}: {exc}")
    disarm()
    _write(line + "\n")
    return 0


def session_start_main(db: str | None, write=None) -> int:
    """``hook session-start`` within :data:`SESSION_START_BUDGET_S`; 0 whatever happens.

    The deadline is armed in a real process only (stdin is the process's own: click's test
    runner swaps it).
    """
    from brainlab.live.session_start import main as session_start

    armed = sys.stdin is sys.__stdin__
    if armed:
        arm(SESSION_START_BUDGET_S, "")
    try:
        return session_start(sys.stdin.buffer, write or _write, db,
                             degrade=degrade if armed else None,
                             disarm=disarm if armed else None)
    finally:
        if armed:
            disarm()


def hook_main(args: list[str]) -> int | None:
    """``hook ingest [--foreground] [--db PATH]`` or ``hook session-start [--db PATH]``.

    None: arguments this parser does not know; click handles them.
    """
    if args[:1] == ["session-start"] and (len(args) == 1 or (len(args) == 3 and args[1] == "--db")):
        return session_start_main(args[2] if len(args) == 3 else None)
    if args[:1] == ["ingest"]:
        foreground, db, rest = False, None, args[1:]
        while rest:
            if rest[0] == "--foreground":
                foreground, rest = True, rest[1:]
            elif rest[0] == "--db" and len(rest) > 1:
                db, rest = rest[1], rest[2:]
            elif rest[0].startswith("--db="):
                db, rest = rest[0][5:], rest[1:]
            else:
                return None
        from brainlab.live.hook_ingest import main as hook_ingest

        return hook_ingest(sys.stdin.buffer, foreground=foreground, db=db)
    return None


def _write(text: str) -> None:
    """``text`` to stdout as UTF-8 whatever the locale.

    A character it cannot encode (a lone surrogate) is written as its escape: the whole line
    is never dropped.
    """
    try:
        data = text.encode("utf-8", "backslashreplace")
        stream = getattr(sys.stdout, "buffer", None)
        if stream is None:
            sys.stdout.write(data.decode("utf-8"))
        else:
            sys.stdout.flush()
            stream.write(data)
        sys.stdout.flush()
    except (OSError, ValueError):  # Claude Code cancelled the run and closed the pipe
        pass


def dispatch(argv: list[str]) -> None:
    """Run ``argv`` here and exit when it is a live command this parser knows; else return."""
    if len(argv) < 2 or argv[1] not in FAST or os.path.basename(argv[0]) not in (
            "brainlab", "brainlab.exe"):
        return
    if argv[1] == "statusline":
        options = parse_statusline_args(argv[2:])
        code = None if options is None else statusline_main(options)
    else:
        code = hook_main(argv[2:])
    if code is None:
        return
    os._exit(code)  # output flushed; nothing to tear down
