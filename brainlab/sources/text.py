"""Small parsers shared by the brain's markdown and YAML sources: tables, frontmatter, values.

Value parsers return ``(value, problem)``: ``problem`` is None when the text was understood
(including the protocol's explicit "not measured" markers, which mean NULL).
"""

from __future__ import annotations

import math
import re
from datetime import datetime

import yaml

from brainlab.sources.safeyaml import load_yaml

# SPEC §3.1: explicit markers for "no value".
NULL_MARKERS = {"", "n/a", "na", "<non mesuré>", "<non mesure>", "non mesuré", "<insuffisant>",
                "insuffisant", "—", "-", "null", "none", "~"}
_KEY_NAME = re.compile(r"[A-Za-z_][\w ]*")
_NUMBER = re.compile(r"^~?\s*([-+]?\d+(?:[.,]\d+)?)\s*([kKmM])?\s*(?:tokens?)?$")


def strip_markup(text: str) -> str:
    """Remove bold/italic/code markers and surrounding blanks: ``**2.51**`` -> ``2.51``."""
    text = text.strip()
    for marker in ("**", "__", "`"):
        if text.startswith(marker) and text.endswith(marker) and len(text) >= 2 * len(marker):
            text = text[len(marker):-len(marker)].strip()
    return text.strip()


def is_null(text: str) -> bool:
    """True for the protocol's explicit no-value markers (N/A, <non mesuré>, <insuffisant>)."""
    return strip_markup(text).lower() in NULL_MARKERS


def parse_number(text: str) -> tuple[float | None, str | None]:
    """``45k`` -> 45000, ``~8.4k`` -> 8400, ``1.2M`` -> 1.2e6, ``3`` -> 3; N/A -> None."""
    raw = strip_markup(text)
    if is_null(raw):
        return None, None
    cleaned = raw.replace("\u202f", "").replace("\u00a0", "").replace(" ", "")
    cleaned = cleaned.split("(")[0].strip()
    spaced = " ".join(raw.split("(")[0].split())  # one blank per run: the match stays linear
    match = _NUMBER.match(cleaned) or _NUMBER.match(spaced)
    if not match:
        return None, f"not a number: {raw!r}"
    value = float(match.group(1).replace(",", "."))
    unit = (match.group(2) or "").lower()
    value *= {"k": 1_000, "m": 1_000_000}.get(unit, 1)
    return value, None


def parse_percent(text: str) -> tuple[float | None, str | None]:
    """``31%`` -> 31.0, ``31`` -> 31.0; N/A -> None."""
    raw = strip_markup(text)
    if is_null(raw):
        return None, None
    try:
        return float(raw.rstrip("%").strip().replace(",", ".")), None
    except ValueError:
        return None, f"not a percentage: {raw!r}"


def parse_int(text: str) -> tuple[int | None, str | None]:
    """A whole count (accepts ``3``, ``3.0``, ``~3``); anything else is a problem."""
    value, problem = parse_number(text)
    if value is None:
        return None, problem
    problem = int_range_problem(value, text)
    if problem:
        return None, problem
    if value != int(value):
        return None, f"not a whole number: {strip_markup(text)!r}"
    return int(value), None


INT_MAX = 2**63 - 1  # the largest count a BIGINT column holds


def int_range_problem(value: float, text: str) -> str | None:
    """Why ``value`` cannot be stored as a whole count (too large, infinite), or None."""
    if not math.isfinite(value) or abs(value) > INT_MAX:
        return f"number too large to store: {strip_markup(text)[:40]!r}"
    return None


def parse_bool(text: str) -> tuple[bool | None, str | None]:
    """true/false (also yes/no, oui/non, ✅/❌); N/A -> None."""
    raw = strip_markup(text).lower()
    if is_null(raw):
        return None, None
    if raw in {"true", "yes", "oui", "✅", "1", "pass"}:
        return True, None
    if raw in {"false", "no", "non", "❌", "0", "fail"}:
        return False, None
    return None, f"not a boolean: {raw!r}"


def parse_text(text: str) -> tuple[str | None, str | None]:
    """A free-text value with markup stripped; N/A -> None."""
    raw = strip_markup(text)
    return (None if is_null(raw) else raw), None


def parse_timestamp(value) -> tuple[datetime | None, str | None]:
    """``2026-03-22T14:00``, ``2026-03-22 14:00``, ``2026-03-22``, or a YAML datetime."""
    if value is None:
        return None, None
    if isinstance(value, datetime):
        return value.replace(tzinfo=None), None
    raw = str(value).strip().strip('"').strip("'")
    if is_null(raw):
        return None, None
    for fmt in ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M",
                "%Y-%m-%d"):
        try:
            return datetime.strptime(raw.rstrip("Z"), fmt), None
        except ValueError:
            continue
    return None, f"not a timestamp: {raw!r}"


def split_key_value(line: str) -> tuple[str, str] | None:
    """``- **Key** : value`` -> (``Key``, ``value``); None when the line is not such a pair.

    String operations, not a backtracking regex: linear on any line (issue 10 §7).
    """
    head, sep, value = line.partition(":")
    if not sep:
        return None
    key = head.strip()
    if key[:1] in ("-", "*") and not key.startswith("**"):
        key = key[1:].lstrip()
    key = key.removeprefix("**").removesuffix("**").rstrip()
    if not _KEY_NAME.fullmatch(key):
        return None
    return key, value.strip()


def split_table_row(line: str) -> list[str] | None:
    """Cells of a markdown table row ``| a | b |``; None when the line is not a table row."""
    stripped = line.strip()
    if not stripped.startswith("|"):
        return None
    body = stripped[1:]
    if body.endswith("|"):
        body = body[:-1]
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", body)]


def is_separator_row(cells: list[str]) -> bool:
    """True for the ``|---|---|`` line under a table header."""
    return bool(cells) and all(re.fullmatch(r":?-{2,}:?", c.strip()) for c in cells if c.strip())


def split_frontmatter(text: str) -> tuple[dict | None, str, str | None]:
    """Split ``---\\nyaml\\n---`` from a markdown file: (mapping or None, body, problem)."""
    if not text.startswith("---"):
        return None, text, None
    parts = text.split("\n")
    for index in range(1, len(parts)):
        if parts[index].strip() == "---":
            header = "\n".join(parts[1:index])
            body = "\n".join(parts[index + 1:])
            try:
                data = load_yaml(header) or {}
            except yaml.YAMLError as exc:
                return None, body, f"invalid YAML frontmatter: {_yaml_reason(exc)}"
            if not isinstance(data, dict):
                return None, body, "frontmatter is not a mapping"
            return data, body, None
    return None, text, "frontmatter opened with --- but never closed"


def _yaml_reason(exc: yaml.YAMLError) -> str:
    return yaml_reason(exc)


def yaml_reason(exc: yaml.YAMLError) -> str:
    """PyYAML's message in one line: the problem first, then what it was parsing and where.

    ``expected <block end>, but found '?' (while parsing a block collection from line 28)``
    rather than PyYAML's first line alone (``while parsing a block collection``), which says
    what was being read but not what is wrong.
    """
    problem = getattr(exc, "problem", None)
    if not problem:
        return " ".join(str(exc).split())[:200]
    context = getattr(exc, "context", None)
    mark = getattr(exc, "context_mark", None)
    if context:
        where = f" from line {mark.line + 1}" if mark is not None else ""
        problem = f"{problem} ({context}{where})"
    return " ".join(problem.split())[:200]


def yaml_error_line(exc: yaml.YAMLError) -> int | None:
    """The 1-based line of a YAML error, when PyYAML knows it."""
    mark = getattr(exc, "problem_mark", None)
    return mark.line + 1 if mark is not None else None
