"""Messages brainlab writes: its own words, and the user's data quoted inside them (issue 47).

An error row, a warning, a ``check`` finding or an ``Error:`` line is brainlab's sentence with
parts of a file in it (a value, a name, a line). Only those parts can hold a secret or be
huge, so only they are redacted and cut: :func:`said` formats a template with
:func:`quoted` parts and returns a :class:`Message`, which the store keeps as it is (the
redactor never rewrites brainlab's own words: ``key : value lines`` stays). A reason that is
a plain ``str`` (not made by :func:`said`) is still redacted whole when a brain file's rows
are stored (:func:`brainlab.store.ingest._redact_rows`): the safe default.

:func:`quoted` cuts a part past :data:`QUOTE_MAX_CHARS` characters and says how many bytes it
had: ``xxxx…(2,097,152 bytes)``. :func:`bounded` does the same for a text made elsewhere
(a ``check`` message built in SQL from a rule's rows): each blank-free run past
:data:`QUOTE_MAX_CHARS` is cut, then the whole past :data:`MESSAGE_MAX_CHARS`.
"""

from __future__ import annotations

import re
from typing import Any

QUOTE_MAX_CHARS = 200  # a quoted part of a message: a value, a name, a path, a line
MESSAGE_MAX_CHARS = 2_000  # a whole message made from data (a check finding)
_LONG_RUN = re.compile(rf"\S{{{QUOTE_MAX_CHARS + 1},}}")


class Message(str):
    """A message brainlab wrote (:func:`said`): its quoted parts are already redacted and cut."""

    __slots__ = ()


def cut(text: str, limit: int = QUOTE_MAX_CHARS) -> str:
    """``text`` cut to ``limit`` characters, then ``…(N bytes)`` (its UTF-8 size) when longer."""
    if len(text) <= limit:
        return text
    size = len(text.encode("utf-8", errors="surrogatepass"))
    return f"{text[:limit]}…({size:,} bytes)"


def quoted(value: Any, limit: int = QUOTE_MAX_CHARS, as_repr: bool = False) -> str:
    """One part of a message taken from data: redacted, then cut (:func:`cut`).

    ``as_repr`` quotes it as Python's ``repr`` does (``'Europe/Paris'``, ``nan``), cut inside.
    A very long text is cut to a generous prefix before redacting (the redactor is linear, but
    a 100 MB value should not cost a second to show 200 characters of it); its byte count is
    that of the whole value.
    """
    from brainlab.sources.redact import redact

    if isinstance(value, str):
        text = value
    elif as_repr:
        text = _short_repr(value)
    else:
        text = str(value)
    size = len(text.encode("utf-8", errors="surrogatepass"))
    head = text if len(text) <= 64 * limit else text[:64 * limit]
    safe = redact(head) or ""
    if len(safe) > limit or len(head) < len(text):
        safe = f"{safe[:limit]}…({size:,} bytes)"
    return repr(safe) if as_repr and isinstance(value, str) else safe


def _short_repr(value: Any) -> str:
    """``repr(value)`` without building a huge or deeply nested one in full."""
    if isinstance(value, dict | list | tuple):
        return f"a {type(value).__name__} of {len(value)} item(s)"  # a TOML table or array
    text = repr(value)
    return text


def said(template: str, *parts: Any, **named: Any) -> Message:
    """``template`` formatted with each part :func:`quoted` (``{}`` / ``{name}``; ``{!r}`` quotes).

    Only the parts are redacted and cut; the template is brainlab's own text and stays.
    """
    args = [_Part(p) for p in parts]
    kwargs = {k: _Part(v) for k, v in named.items()}
    return Message(template.format(*args, **kwargs))


class Verbatim(str):
    """A part of a :func:`said` message that is brainlab's own text (a fixed phrase): kept."""

    __slots__ = ()


class _Part:
    """A data part in :func:`said`: ``{}`` gives it quoted, ``{!r}`` quoted as a repr."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __format__(self, spec: str) -> str:
        if isinstance(self.value, Verbatim):
            return format(str(self.value), spec)
        if spec and not isinstance(self.value, str) and isinstance(self.value, int | float):
            return format(self.value, spec)  # a number brainlab counted: `{:,}`
        return format(quoted(self.value), spec)

    def __str__(self) -> str:
        return quoted(self.value)

    def __repr__(self) -> str:
        return quoted(self.value, as_repr=True)


def bounded(text: str | None, limit: int = MESSAGE_MAX_CHARS) -> str | None:
    """A text made from data elsewhere, each long blank-free run and the whole cut (:func:`cut`)."""
    if not text or len(text) <= QUOTE_MAX_CHARS:
        return text
    text = _LONG_RUN.sub(lambda m: cut(m.group(0)), text)
    return cut(text, limit)


def bounded_data(value: Any) -> Any:
    """Every string inside a JSON value (a finding's evidence) :func:`bounded`."""
    if isinstance(value, str):
        return bounded(value)
    if isinstance(value, list):
        return [bounded_data(v) for v in value]
    if isinstance(value, dict):
        return {k: bounded_data(v) for k, v in value.items()}
    return value
