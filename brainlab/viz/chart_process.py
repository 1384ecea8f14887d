"""vl-convert in a process of its own, so that a report kernel's charts leave its main thread.

vl-convert holds the GIL while it converts, and while its engine starts (the first chart of a
process, ~0.4 s): in the report kernel nothing else ran meanwhile (docs/report.md §4). A
:class:`ChartProcess` starts a Python running :data:`WORKER`, which starts the engine at once
(on the other core, while the kernel imports) and then converts the specs it is sent, one
JSON line each, in order; a thread of the caller reads the SVGs back, so the caller goes on
with its queries while a chart converts. A spec the process could not convert, or a process
that died, is converted in the caller's process at :meth:`Pending.result`: the same SVG, or
the same error, as without the process.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading

PROBE = {"data": {"values": [{"x": 1}]}, "mark": "point",
         "encoding": {"x": {"field": "x", "type": "quantitative"}}}


class Pending:
    """A chart sent to the process; :meth:`result` is its checked SVG (waits for it)."""

    def __init__(self, owner: ChartProcess | None, spec: dict, number: int | None) -> None:
        self._owner, self._spec, self._number = owner, spec, number
        self._svg: str | None = None

    def result(self) -> str:
        """The SVG (``charts.checked``); converted here when the process could not."""
        from brainlab.viz import charts

        if self._svg is None:
            svg = self._owner.wait(self._number) if self._owner else None
            if svg is None:
                import vl_convert

                svg = vl_convert.vegalite_to_svg(self._spec)
            self._svg = charts.checked(svg)
        return self._svg


class ChartProcess:
    """The converting process, its request pipe and the thread reading its replies."""

    def __init__(self) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-c", WORKER], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self._sent = 0
        self._replies: dict[int, dict] = {}
        self._ended = False
        self._changed = threading.Condition()
        threading.Thread(target=self._read, name="brainlab-charts-read", daemon=True).start()

    def _read(self) -> None:
        try:
            for number, line in enumerate(self._proc.stdout):
                reply = json.loads(line)
                with self._changed:
                    self._replies[number] = reply
                    self._changed.notify_all()
        except (OSError, ValueError):  # a broken line: what is missing is converted in-process
            pass
        finally:
            with self._changed:
                self._ended = True
                self._changed.notify_all()

    def submit(self, spec: dict) -> Pending:
        """Send ``spec`` to be converted; the answer comes with the returned ``Pending``."""
        try:
            line = json.dumps(spec, allow_nan=False).encode() + b"\n"
            self._proc.stdin.write(line)
            self._proc.stdin.flush()
        except (OSError, ValueError, TypeError):  # died, or a spec JSON cannot carry
            return Pending(None, spec, None)
        self._sent += 1
        return Pending(self, spec, self._sent - 1)

    def wait(self, number: int | None) -> str | None:
        """The SVG of request ``number``; None when the process failed it or died."""
        if number is None:
            return None
        with self._changed:
            self._changed.wait_for(lambda: number in self._replies or self._ended)
            reply = self._replies.pop(number, None)
        return reply.get("svg") if reply else None

    def close(self) -> None:
        """End the process (it also ends by itself when this one's pipe closes)."""
        with contextlib.suppress(OSError):
            self._proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=5)


# The process's code: vl-convert alone (``python -m`` of this module would import the
# brainlab.viz package, altair and pandas with it: ~0.5 CPU-s for nothing).
WORKER = f"""
import json, sys
import vl_convert
try:
    vl_convert.vegalite_to_svg({PROBE!r})  # the engine starts now, before the first chart
except Exception:
    pass
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    try:
        reply = {{"svg": vl_convert.vegalite_to_svg(json.loads(line))}}
    except Exception as exc:  # the caller converts it again, raising it there
        reply = {{"error": type(exc).__name__ + ": " + str(exc)}}
    out.write(json.dumps(reply).encode() + b"\\n")
    out.flush()
"""
