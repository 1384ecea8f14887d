"""One transcript value as stored: ids, kept strings, timestamps, token counts, sizes.

Both decoders and the row builder (:mod:`brainlab.transcripts.build`) use these helpers, so a
value is checked one way whatever path its line took. Odd values (impossible timestamps,
token counts that are text, fractions, negative or past BIGINT) are warning rows, the value
kept when unambiguous, else NULL; numbers and timestamps outside the ranges of
:mod:`brainlab.spec.ranges` are error rows and NULL (issue 47 item 1); every string kept goes through
:func:`brainlab.sources.redact.redact_truncate`. The memo tables (:data:`IDENTS`,
:data:`DAYS`) are public so the builder can look a repeated value up inline: about 14
microseconds per line is all the budget there is.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Protocol

from brainlab.sources.redact import redact_truncate
from brainlab.sources.secret_rules import has_candidate
from brainlab.spec import ranges

SOURCE = "claude"
MAX_COST = ranges.COST_USD.high  # USD: a larger costUSD is not one API call's cost
MAX_TOKENS = ranges.TOKENS.high  # a larger count is an error row and NULL (spec/ranges.py)
FUTURE_DAYS = ranges.FUTURE_DAYS  # a later timestamp: an error row and NULL
EARLIEST_DAY = ranges.EARLIEST.date().isoformat()  # an earlier timestamp: the same
UNDATED = "usage line without a usable timestamp: counted in totals, left out of dated views"
# ...Z timestamps as Claude Code writes them, with a valid time of day (the date is checked
# apart, once per distinct day: see day_state)
UTC_TEXT = re.compile(
    r"\d{4}-\d\d-\d\dT(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,6})?Z").fullmatch
DAYS: dict[str, int] = {}  # "YYYY-MM-DD" -> 0 valid, 1 impossible date, 2 in the future,
# 3 before spec/ranges.py's EARLIEST
_TODAY = datetime.now(UTC).date().toordinal()
MEMO_MAX = 100_000  # entries of a memo table before it is cleared
MISSING = object()  # a memo's "not seen yet"


class Errors(Protocol):
    """What records a problem: :class:`brainlab.transcripts.build.Chunk`."""

    def error(self, file: str, line: int | None, reason: str, severity: str = "error") -> None:
        """Record one ``ingest_errors`` row."""


class Where(Protocol):
    """Where a line comes from: :class:`brainlab.transcripts.build.FileContext`."""

    path: str


def day_state(day: str) -> int:
    """0 valid, 1 impossible date, 2 past FUTURE_DAYS, 3 before EARLIEST_DAY (memoised)."""
    state = DAYS.get(day)
    if state is None:
        try:
            ordinal = datetime.strptime(day, "%Y-%m-%d").date().toordinal()
        except ValueError:
            state = 1
        else:
            state = 2 if ordinal > _TODAY + FUTURE_DAYS else 3 if day < EARLIEST_DAY else 0
        if len(DAYS) > MEMO_MAX:
            DAYS.clear()
        DAYS[day] = state
    return state


def to_utc(value) -> str | None:
    """ISO-8601 text to naive UTC text DuckDB casts to TIMESTAMP; None if unreadable.

    Claude Code writes ``...Z`` (UTC): kept as is without the Z, which is fast. Any other
    offset is converted to UTC first (DuckDB's own cast would drop the offset). Impossible
    dates (``2026-02-30``, month 13) are None: DuckDB would refuse them at commit.
    """
    if not isinstance(value, str) or not value:
        return None
    if UTC_TEXT(value):
        return value[:-1] if day_state(value[:10]) != 1 else None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is not None:
        try:
            moment = moment.astimezone(UTC).replace(tzinfo=None)
        except OverflowError:
            return None
    return moment.isoformat()


def checked_ts(value, ctx: Where, line_no: int, errors: Errors) -> str | None:
    """A line's ``timestamp`` as given when usable, else None; a warning row when it is not.

    Unreadable or impossible timestamps load as NULL with a warning; timestamps outside the
    window of spec/ranges.py (before 2020, more than FUTURE_DAYS after the run) are an error
    row and NULL: a year-9999 moment would break every read that turns it into a datetime.
    """
    if value is None:
        return None
    if type(value) is str and UTC_TEXT(value):
        state = day_state(value[:10])
        if state == 0:
            return value
    else:
        utc = to_utc(value)
        state = 1 if utc is None else 0
        if state == 0:
            if utc[:10] > datetime.fromordinal(_TODAY + FUTURE_DAYS).date().isoformat():
                state = 2
            elif utc[:10] < EARLIEST_DAY:
                state = 3
            else:
                return value
    if state == 1:
        errors.error(ctx.path, line_no, f"unreadable timestamp ({shown(value)}): NULL",
                     "warning")
        return None
    where = (f"more than {FUTURE_DAYS} days after the run" if state == 2
             else f"before {EARLIEST_DAY}")
    errors.error(ctx.path, line_no, f"timestamp {shown(value)} is {where} (spec/ranges.py):"
                 " not stored, the line counts as undated")
    return None


def shown(value) -> str:
    """A short, redacted rendering of a bad value for an error row."""
    if isinstance(value, (list, dict)):
        return f"a JSON {'array' if isinstance(value, list) else 'object'}"
    text = repr(value[:80] if isinstance(value, str) else value)
    return redact_truncate(text if len(text) <= 4300 else text[:60] + "...", 60)


def text(value) -> str | None:
    """``value`` when it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def string(value) -> str | None:
    """``value`` when it is a string (empty included), else None: a field typed ``str``."""
    return value if value.__class__ is str else None


_KEPT: dict[tuple, str | None] = {}  # (text, limit) -> redact_truncate(text, limit)


def kept(value, limit: int) -> str | None:
    """``redact_truncate(text(value), limit)``, memoised (cwd, model, names, paths repeat)."""
    key = (value, limit)
    try:
        return _KEPT[key]
    except KeyError:
        pass
    except TypeError:  # an unhashable value (list, dict) is not a string: None
        return None
    result = redact_truncate(text(value), limit)
    if len(_KEPT) >= MEMO_MAX:
        _KEPT.clear()
    _KEPT[key] = result
    return result


def memo(table: dict, value, limit: int):
    """``kept(value, limit)`` remembered in ``table`` (a model, a cwd: the same on most lines)."""
    result = table.get(value, MISSING)
    if result is MISSING:
        result = kept(value, limit)
        if len(table) >= MEMO_MAX:
            table.clear()
        table[value] = result
    return result


# Identifiers the API generates (message, request, tool-use ids): no secret has these shapes,
# and they are unique per line, so redacting each (a cache miss, every rule run) was a fifth
# of the parse time. Any other id goes through kept().
_ID_PREFIXES = ("msg_", "req_", "toolu_", "srvtoolu_")  # then 8-64 ASCII letters and digits
GENERATED_ID = re.compile(  # one C call (the builder tests it before calling ident())
    "(?:" + "|".join(_ID_PREFIXES) + ")[A-Za-z0-9]{8,64}").fullmatch
IDENTS: dict[str, str | None] = {}  # value -> ident(value), for ids that repeat (session, agent)


def ident(value) -> str | None:
    """An identifier as stored: as is when it has a generated id's shape, else kept(value)."""
    if type(value) is not str:
        return None  # kept() of anything but a string
    result = IDENTS.get(value, MISSING)  # a session id repeats on every line: one lookup
    if result is not MISSING:
        return result
    if GENERATED_ID(value):
        return value  # unique per call: not memoised
    if 0 < len(value) <= 200 and not has_candidate(value, value.lower()):
        result = value  # kept(value, 200) without its memo: no rule can apply, nothing cut
    else:
        result = kept(value, 200)
    if len(IDENTS) >= MEMO_MAX:
        IDENTS.clear()
    IDENTS[value] = result
    return result


def tokens(value, name: str, path: str, line_no: int, errors: Errors) -> int | None:
    """A token count that is not a plain int in range: the value when unambiguous, else NULL.

    Integral floats (``12.0``) load silently, as before; digits in a string (``"12"``) load
    with a warning; fractions, negatives, booleans, counts past BIGINT (2^63, ``1e25``) and
    anything else are NULL with a warning: never a silent 0, never a failed commit.
    """
    if value is None:
        return None
    if type(value) is int and 0 <= value <= MAX_TOKENS:
        return value
    if isinstance(value, float) and value.is_integer() and 0 <= value <= MAX_TOKENS:
        return int(value)
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 19:
        errors.error(path, line_no, f"{name} given as text ({shown(value)}): read as"
                     " a number", "warning")
        return int(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        problem = ranges.TOKENS.problem(value)
        if problem:  # a number, out of range: not stored (spec/ranges.py)
            errors.error(path, line_no, f"{name}: {problem} ({ranges.TOKENS.name},"
                         " spec/ranges.py): not stored, NULL")
            return None
    errors.error(path, line_no, f"{name} is {shown(value)}: not a token count, NULL",
                 "warning")
    return None


def size(content) -> int:
    """Bytes of a tool result's text (its size is kept, never its content)."""
    if isinstance(content, str):
        return _utf8_len(content)
    if isinstance(content, list):
        total = 0
        for item in content:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                total += _utf8_len(item["text"])
        return total
    return 0


def _utf8_len(value: str) -> int:
    return len(value) if value.isascii() else len(value.encode("utf-8", errors="replace"))
