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
STATUSLINE_BUDGET_S = 2.0  # the status line's hard deadline (brainlab.live.deadline)
SESSION_START_BUDGET_S = 6.0  # session start's: well inside the 10 s `hooks install` gives it


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
    from brainlab.live.deadline import arm, disarm

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

    The deadline is armed in a real process only (stdin is the process's own: click's test runner swaps it).
    """
    from brainlab.live.deadline import arm, disarm
    from brainlab.live.session_start import main as session_start

    armed = sys.stdin is sys.__stdin__
    if armed:
        arm(SESSION_START_BUDGET_S, "")
    try:
        return session_start(sys.stdin.buffer, write or _write, db)
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
