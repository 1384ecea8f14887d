"""A notebook kernel's printed text, sent a whole line at a time.

``print("text")`` writes ``"text"`` and then ``"\\n"``: two writes. ipykernel's output stream
sends what it has gathered every 0.2 s from its IO thread, so on a busy machine the send can
fall between the two, and the cell gets two stream outputs, the second a lone newline.
JupyterLab joins them; nbclient (papermill's engine, ``jupyter nbconvert --execute``) keeps
them apart, and stock ``nbconvert --to html`` draws the lone newline as an empty output area
(the flaky export check of issue 44 item 3). :func:`whole_lines` holds a line's text until
its newline (or an explicit flush: IPython flushes before each display and at the end of a
cell, so the order of text and displays is kept), then writes it in one call, which the
stream buffers atomically.
"""

from __future__ import annotations

import sys
import threading


class WholeLines:
    """A text stream that passes on only whole lines (the rest on :meth:`flush`)."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self._held = ""
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        """Hold ``text`` after its last newline; write everything before it in one call."""
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        with self._lock:
            pending = self._held + text
            cut = pending.rfind("\n") + 1
            self._held = pending[cut:]
            if cut:
                self.stream.write(pending[:cut])
        return len(text)

    def writelines(self, lines) -> None:
        """Write each of ``lines`` (held to whole lines as :meth:`write` does)."""
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        """Write the held text, then flush the stream."""
        with self._lock:
            held, self._held = self._held, ""
            if held:
                self.stream.write(held)
        self.stream.flush()

    def __getattr__(self, name):  # set_parent, encoding, fileno, isatty... are the stream's
        return getattr(self.stream, name)


def _in_kernel(stream) -> bool:
    return type(stream).__module__.startswith("ipykernel.")


def whole_lines() -> None:
    """Make this kernel's stdout and stderr send whole lines (once; nothing outside a kernel)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if _in_kernel(stream) and not isinstance(stream, WholeLines):
            setattr(sys, name, WholeLines(stream))
