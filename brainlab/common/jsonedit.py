"""Edit a JSON text in place: parse it with every value's span, splice members and elements.

A settings file is the user's (issue 46 item 6): brainlab adds or removes its own entries
and leaves every other byte as written: formatting, key order, a number spelled ``1e400``
or ``1.0E+2``, a ``\\ud800`` escape. :func:`parse` reads strict JSON (RFC 8259: no comments,
no trailing commas, no ``NaN``; a UTF-8 BOM is skipped and kept) into :class:`Node` values
that know where they stand in the text; :func:`removal` and :func:`addition` make the
:class:`Edit` s that :func:`splice` applies, new values laid out in the style of their
neighbours (the indentation unit, the key separator, one-line
containers, CRLF). Anything else is a :class:`JSONTextError` naming the line and column.

The parser refuses what readers disagree on: a key twice in one object (``JSON.parse``
keeps the last, others the first), values nested deeper than :data:`MAX_DEPTH`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

MAX_DEPTH = 200  # levels of nesting; a settings file has four

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"')
_LITERALS = {"true": True, "false": False, "null": None}
_BRACKET = re.compile(r"[\[\]{}]")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class JSONTextError(ValueError):
    """The text is not JSON brainlab can edit; ``str()`` says where and why."""


class Number(str):
    """A JSON number as written (``1e400`` stays ``1e400``; never a float)."""

    def __repr__(self) -> str:
        return str(self)


@dataclass
class Node:
    """One JSON value and its span ``text[start:end]``.

    ``items``: an array's elements, or an object's members as :class:`Member`; ``value``:
    a scalar's Python value (a :class:`Number` for numbers).
    """

    kind: str  # object, array, string, number, literal
    start: int
    end: int
    items: list = field(default_factory=list)
    value: Any = None
    raw: bool = False  # read whole (``value`` holds it, ``items`` is empty)

    def plain(self) -> Any:
        """The value as dicts, lists, strings, :class:`Number`, bools and None."""
        if self.raw:
            return self.value
        if self.kind == "object":
            return {m.key: m.value.plain() for m in self.items}
        if self.kind == "array":
            return [item.plain() for item in self.items]
        return self.value

    def member(self, key: str) -> tuple[int, Member] | tuple[None, None]:
        """The index and member of ``key`` in an object (``None, None`` when absent)."""
        for index, m in enumerate(self.items):
            if m.key == key:
                return index, m
        return None, None


@dataclass
class Member:
    """``"key": value`` in an object; its span runs from the key's quote to the value's end."""

    key: str
    start: int
    key_end: int
    value: Node

    @property
    def end(self) -> int:
        """Where the member's value ends."""
        return self.value.end


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    return f"line {line} column {pos - (text.rfind(chr(10), 0, pos) + 1) + 1}"


def _no_constant(name: str):
    raise ValueError(f"{name} (not JSON)")


def _pairs(pairs: list) -> dict:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        twice = next(key for key in keys if keys.count(key) > 1)
        raise ValueError(f"the key {twice!r} appears twice in one object (readers disagree on"
                         " which one counts)")
    return dict(pairs)


# The C reader for values brainlab only keeps: numbers as written, no NaN, no duplicate keys.
_RAW = json.JSONDecoder(parse_float=Number, parse_int=Number, parse_constant=_no_constant,
                        object_pairs_hook=_pairs)


class _Parser:
    def __init__(self, text: str, structural: Callable[[tuple], bool] | None) -> None:
        self.text = text
        self.structural = structural

    def fail(self, pos: int, what: str) -> JSONTextError:
        return JSONTextError(f"{_where(self.text, pos)}: {what}")

    def ws(self, pos: int) -> int:
        return _WS.match(self.text, pos).end()

    def expected(self, pos: int, what: str) -> JSONTextError:
        if pos >= len(self.text):
            return self.fail(pos, f"the text ends where {what} should be")
        if self.text[pos] in "]}" and self.text[:pos].rstrip(" \t\r\n").endswith(","):
            return self.fail(pos, "a trailing comma (not JSON)")
        if self.text.startswith(("//", "/*"), pos):
            return self.fail(pos, "a comment (comments are not JSON, and Claude Code reads"
                                  " its settings as JSON)")
        return self.fail(pos, f"{what} expected, found {self.text[pos]!r}")

    def raw(self, pos: int, depth: int) -> Node:
        """A value read whole by the C reader: its span and Python value, no inner spans."""
        try:
            value, end = _RAW.raw_decode(self.text, pos)
        except json.JSONDecodeError as exc:
            raise self._decode_error(exc) from None
        except RecursionError:
            raise self.fail(pos, f"values nested more than {MAX_DEPTH} levels deep") from None
        except ValueError as exc:  # NaN or Infinity, a key twice
            raise self.fail(pos, f"in the value here, {exc}") from None
        brackets = _BRACKET.findall(_STRING.sub("", self.text[pos:end]))
        if depth + max(accumulate(_STEP[b] for b in brackets)) - 1 > MAX_DEPTH:
            raise self.fail(pos, f"values nested more than {MAX_DEPTH} levels deep")
        kind = "object" if isinstance(value, dict) else "array"
        return Node(kind, pos, end, value=value, raw=True)

    def _decode_error(self, exc: json.JSONDecodeError) -> JSONTextError:
        message = exc.msg
        if message.startswith("Expecting "):
            what = message.removeprefix("Expecting ").replace(" delimiter", "")
            return self.expected(exc.pos, {"property name enclosed in double quotes":
                                           "a key in double quotes"}.get(what, what))
        if message.startswith("Unterminated string"):
            return self.fail(exc.pos, "a string that never ends")
        if message.startswith(("Invalid control character", "Invalid \\")):
            return self.fail(exc.pos, "a string with a raw control character or a bad escape")
        return self.fail(exc.pos, message)

    def value(self, pos: int, depth: int, path: tuple = ()) -> Node:
        text = self.text
        if depth > MAX_DEPTH:
            raise self.fail(pos, f"values nested more than {MAX_DEPTH} levels deep")
        char = text[pos:pos + 1]
        if char in ("{", "[") and self.structural is not None and not self.structural(path):
            return self.raw(pos, depth)
        if char == "{":
            return self.container(pos, depth, "object", "}", path)
        if char == "[":
            return self.container(pos, depth, "array", "]", path)
        if char == '"':
            return self.string(pos)
        match = _NUMBER.match(text, pos)
        if match:
            return Node("number", pos, match.end(), value=Number(match.group()))
        for word, literal in _LITERALS.items():
            if text.startswith(word, pos):
                return Node("literal", pos, pos + len(word), value=literal)
        raise self.expected(pos, "a value")

    def string(self, pos: int) -> Node:
        match = _STRING.match(self.text, pos)
        if not match:
            end = self.text.find('"', pos + 1)
            raise self.fail(pos, "a string that never ends" if end < 0 else
                            "a string with a raw control character or a bad escape")
        return Node("string", pos, match.end(), value=json.loads(match.group()))

    def container(self, start: int, depth: int, kind: str, close: str, path: tuple) -> Node:
        node = Node(kind, start, start)
        pos = self.ws(start + 1)
        if self.text.startswith(close, pos):
            node.end = pos + 1
            return node
        seen: set[str] = set()
        while True:
            if kind == "object":
                if not self.text.startswith('"', pos):
                    raise self.expected(pos, "a key in double quotes")
                key = self.string(pos)
                if key.value in seen:
                    raise self.fail(pos, f"the key {key.value!r} appears twice in one object"
                                         " (readers disagree on which one counts)")
                seen.add(key.value)
                colon = self.ws(key.end)
                if not self.text.startswith(":", colon):
                    raise self.expected(colon, "':'")
                item = self.value(self.ws(colon + 1), depth + 1, (*path, key.value))
                node.items.append(Member(key.value, key.start, key.end, item))
            else:
                item = self.value(pos, depth + 1, (*path, "*"))
                node.items.append(item)
            pos = self.ws(item.end)
            if self.text.startswith(close, pos):
                node.end = pos + 1
                return node
            if not self.text.startswith(",", pos):
                raise self.expected(pos, f"',' or '{close}'")
            pos = self.ws(pos + 1)
            if self.text.startswith(close, pos):
                raise self.fail(pos, "a trailing comma (not JSON)")


def parse(text: str, structural: Callable[[tuple], bool] | None = None) -> Node | None:
    """The text's value with spans; None when the text is empty or only white space.

    ``structural(path)`` (a path is the keys from the top, ``"*"`` for an array's element)
    says which objects and arrays get spans for their items; the others are read whole by
    Python's C reader, as fast as ``json.loads`` (default: all get spans).
    """
    parser = _Parser(text, structural)
    pos = parser.ws(1 if text.startswith("\ufeff") else 0)
    if pos == len(text):
        return None
    node = parser.value(pos, 0)
    rest = parser.ws(node.end)
    if rest != len(text):
        raise parser.expected(rest, "the end of the text")
    return node


# --- splicing ---------------------------------------------------------------------------------
def _lead(text: str, start: int) -> str:
    """The white space before the item at ``start`` (after its ',' or opening bracket)."""
    begin = start
    while begin > 0 and text[begin - 1] in " \t\r\n":
        begin -= 1
    return text[begin:start]


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def indent_unit(text: str, root: Node | None) -> str:
    """The file's indentation step: its first member's indentation, else two spaces."""
    if root is not None and root.kind == "object" and root.items:
        lead = _lead(text, root.items[0].start)
        if "\n" in lead:
            unit = lead.rsplit("\n", 1)[1]
            line = text.rfind("\n", 0, root.start) + 1
            outer = re.match(r"[ \t]*", text[line:]).group()
            if unit.startswith(outer) and len(unit) > len(outer):
                return unit[len(outer):]
    return "  "


def render(value: Any, unit: str, indent: str | None, newline: str = "\n") -> str:
    """``value`` as JSON: laid out under ``indent`` with ``unit`` steps, or on one line."""
    if indent is None:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    text = json.dumps(value, ensure_ascii=False, indent=unit)
    return text.replace("\n", newline + indent)


def _line_indent(text: str, pos: int) -> str:
    line = text.rfind("\n", 0, pos) + 1
    return re.match(r"[ \t]*", text[line:]).group()


@dataclass
class Edit:
    """Replace ``text[start:end]`` with ``new``."""

    start: int
    end: int
    new: str = ""


def splice(text: str, edits: list[Edit]) -> str:
    """``text`` with ``edits`` (which must not overlap) made, the last first."""
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        text = text[:edit.start] + edit.new + text[edit.end:]
    return text


def removal(container: Node, indices: set[int]) -> list[Edit]:
    """Edits that drop items ``indices`` of ``container`` and the commas that went with them.

    An item followed by a kept one goes with the white space up to that one (which takes its
    place); the items after the last kept one go with the comma after it.
    """
    items = container.items
    if not indices:
        return []
    if len(indices) == len(items):
        return [Edit(container.start + 1, container.end - 1)]
    kept = [i for i in range(len(items)) if i not in indices]
    edits = [Edit(items[i].start, items[i + 1].start) for i in sorted(indices) if i < kept[-1]]
    if kept[-1] < len(items) - 1:
        edits.append(Edit(items[kept[-1]].end, items[-1].end))
    return edits


def addition(text: str, container: Node, entries: list, unit: str) -> Edit:
    """The edit that appends ``entries`` (values, or ``(key, value)`` pairs) to ``container``.

    They are laid out like the container's last item (its indentation and, for members, its
    key separator), or one step in from the container's line when it is empty.
    """
    newline = _newline(text)
    separator = ": "
    if container.kind == "object" and container.items:
        last = container.items[-1]
        separator = text[last.key_end:last.value.start]

    def piece(entry, indent: str | None) -> str:
        if container.kind == "object":
            key, value = entry
            return (json.dumps(key, ensure_ascii=False) + separator
                    + render(value, unit, indent, newline))
        return render(entry, unit, indent, newline)

    if container.items:
        last = container.items[-1]
        lead = _lead(text, last.start)
        indent = lead.rsplit("\n", 1)[1] if "\n" in lead else None
        return Edit(last.end, last.end, "".join("," + lead + piece(e, indent) for e in entries))
    outer = _line_indent(text, container.start)
    inner = outer + unit
    body = ("," + newline + inner).join(piece(e, inner) for e in entries)
    return Edit(container.start + 1, container.end - 1, newline + inner + body + newline + outer)
