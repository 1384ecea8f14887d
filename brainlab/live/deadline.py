"""The hard deadline of ``statusline`` and ``hook session-start`` (issue 46 item 2).

Past its budget the process prints its degraded output (the minimal status line; for
session start, the boot context of the last digest, or nothing) and exits 0, even from inside
a blocked system call: ``signal.setitimer`` delivers ``SIGALRM``, which interrupts the main
thread's ``open`` of a FIFO or ``read`` of a pipe Claude Code never closed, and its handler
ends the run. The budgets are :mod:`brainlab.live.fast`'s.
"""

from __future__ import annotations

import os

_DEGRADED = [b""]  # what the deadline prints (the minimal line; session start: its fallback)


def arm(seconds: float, degraded: str) -> None:
    """Start the deadline: ``seconds`` from now the process prints ``degraded`` and exits 0.

    ``signal.setitimer`` (a real-time timer): its signal interrupts any blocking call of the
    main thread (``open`` of a FIFO, ``read`` of a pipe), whose handler then ends the run.
    Nowhere without ``SIGALRM`` (Windows): nothing armed.
    """
    import signal

    if not hasattr(signal, "setitimer"):
        return
    degrade(degraded)
    signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)


def degrade(text: str) -> None:
    """What the deadline prints from now on (a better fallback once one is known)."""
    _DEGRADED[0] = text.encode("utf-8", "backslashreplace")


def disarm() -> None:
    """Stop the deadline (before the command prints its own output)."""
    import signal

    if hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_REAL, 0)


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


