"""What rich's Console finds out about the terminal, without importing rich (issue 12).

rich costs 16 ms to import, a sixth of ``brainlab usage daily``; the read commands print
plain text and need only the width and whether to embolden. :class:`LazyConsole` makes the
rich Console on first use, for the commands that draw with it (progress bars, wrapped
tables). The rules are rich's (``Console.size``, ``is_terminal``, ``is_dumb_terminal``):
tests/test_cli_read.py compares them.
"""

from __future__ import annotations

import os
import sys


def is_terminal(stream=None) -> bool:
    """Whether ``stream`` (default stdout) understands escape sequences, as rich decides."""
    tty_compatible = os.environ.get("TTY_COMPATIBLE", "")
    if tty_compatible in ("0", "1"):
        return tty_compatible == "1"
    force_color = os.environ.get("FORCE_COLOR")
    if force_color is not None:
        return force_color != ""
    isatty = getattr(stream or sys.stdout, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def _dumb(stream=None) -> bool:
    return is_terminal(stream) and os.environ.get("TERM", "").lower() in ("dumb", "unknown")


def width(stream=None) -> int:
    """Columns to fit output into: $COLUMNS, else the terminal's, else 80 (rich's rules)."""
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        return int(columns)
    if _dumb(stream):
        return 80
    found = None
    for descriptor in (0, 1, 2):  # rich asks stdin, stdout, stderr in turn
        try:
            found = os.get_terminal_size(descriptor).columns
        except (AttributeError, ValueError, OSError):
            continue
        break
    return found or 80


def fit(text: str, columns: int) -> str:
    """``text`` with each line longer than ``columns`` cut between words (0: as it is).

    A line's rest goes on the next lines, indented two past its own indent, so a list of
    indented items stays readable at 80 columns; no word is split (a path longer than the
    line stays whole).
    """
    if columns <= 0:
        return text
    import textwrap

    out = []
    for line in text.split("\n"):
        if len(line) <= columns:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip(" ")) + 2)
        out.append(textwrap.fill(line, max(columns, 40), subsequent_indent=indent,
                                 break_long_words=False, break_on_hyphens=False))
    return "\n".join(out)


def has_style(stream=None) -> bool:
    """Whether rich would print bold there (a terminal with a colour system: not a dumb one)."""
    return is_terminal(stream) and not _dumb(stream)


class LazyConsole:
    """A rich Console made on first use; ``width`` and ``styled`` answer without it."""

    def __init__(self, **options) -> None:
        options = {"markup": False, "highlight": False, **options}  # data is never markup
        object.__setattr__(self, "_options", options)
        object.__setattr__(self, "_console", None)

    def real(self):
        """The rich Console (made, and rich imported, now if not yet)."""
        if self._console is None:
            from rich.console import Console

            object.__setattr__(self, "_console", Console(**self._options))
        return self._console

    def _stream(self):
        return sys.stderr if self._options.get("stderr") else sys.stdout

    @property
    def width(self) -> int:
        """The console's width (rich's rules; a width set on the Console wins)."""
        return self._console.width if self._console is not None else width(self._stream())

    @property
    def styled(self) -> bool:
        """Whether bold text is printed as such (a terminal with colours)."""
        if self._console is not None:
            return self._console.is_terminal and self._console.color_system is not None
        return has_style(self._stream())

    def __getattr__(self, name: str):
        return getattr(self.real(), name)

    def __setattr__(self, name: str, value) -> None:
        setattr(self.real(), name, value)


class NoProgress:
    """The progress bar's interface doing nothing: stderr is not a terminal (a log, a pipe).

    rich's transient bar, stopped, still writes a newline there: every log began with a blank
    line (issue 28 item 11).
    """

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def add_task(self, *args, **kwargs) -> int:
        """A task id, as rich's Progress returns."""
        return 0

    def advance(self, *args, **kwargs) -> None:
        """Nothing to draw."""
        return None

    update = start = stop = advance
