"""How numbers read: one cell format for terminal and report tables; terminal-fitted tables.

Kept free of pandas and numpy so read commands start fast (issue 12). The kind of a column
(money, count, share, percent, date, week) follows its name's suffix (the dbt convention of
docs/schema.md: ``*_usd``, ``*_tokens``, ``*_share``, ``*_pct``) and its values, so any
section's or view's columns format the same way without a per-table list.
"""

from __future__ import annotations

import csv
import io
import json
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

# MISSING: the one missing-value marker of every table (terminal and HTML), the status line's
from brainlab.common.plaintext import MISSING, json_safe, visible

COUNT_WORDS = ("tokens", "requests", "sessions", "loads", "count", "calls", "tickets",
               "wakeups", "stops", "decisions", "rows", "files", "triggers", "loaded")
# Percent columns whose name lacks the _pct suffix (SPEC §3.1 field names): shown as 21%, like
# context_peak_pct beside them, not 21.40 (issue 28 item 9).
PERCENT_NAMES = ("context_at_close",)


def is_missing(value: object) -> bool:
    """True for None, NaN, NaT and pandas.NA (without importing pandas)."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except TypeError:  # pandas.NA: its comparisons are NA, whose truth value raises
        return True


def column_kind(name: str, values: Sequence[object] = ()) -> str:
    """One of money, int, share, pct, datetime, date, bool, float, text for column ``name``."""
    low = str(name).lower()
    present = [v for v in values if not is_missing(v)]
    if low.endswith("_usd") or low in ("cost", "usd"):
        return "money"
    if low.endswith("share") or low.endswith("_rate") or low.startswith("share_"):
        return "share" if all(isinstance(v, numbers.Real) for v in present) else "text"
    if low.endswith("_pct") or low in PERCENT_NAMES:
        return "pct"
    if present and all(isinstance(v, bool) for v in present):
        return "bool"
    if present and all(isinstance(v, datetime) for v in present):
        return "datetime" if any(_has_time(v) for v in present) else "date"
    if present and all(isinstance(v, date) for v in present):
        return "date"
    if present and all(isinstance(v, numbers.Integral) for v in present):
        return "int"
    if present and all(isinstance(v, numbers.Real) for v in present):
        whole = all(float(v).is_integer() for v in present)
        if whole and any(w in low for w in COUNT_WORDS) or whole and low == "line":
            return "int"
        return "float"
    return "text"


def _has_time(value: datetime) -> bool:
    return (value.hour, value.minute, value.second, value.microsecond) != (0, 0, 0, 0)


def format_cell(value: object, kind: str) -> str:
    """``value`` as a reader should see it: separators, $ and 2 decimals, %, dates, MISSING."""
    if is_missing(value):
        return MISSING
    try:
        if kind == "money":
            return f"${float(value):,.2f}"
        if kind == "int":
            return f"{int(value):,}"
        if kind == "share":
            return f"{float(value) * 100:.1f}%"
        if kind == "pct":
            return f"{float(value):.0f}%"
        if kind == "float":
            return f"{float(value):,.2f}"
        if kind == "bool":
            return "yes" if value else "no"
        if kind == "datetime":
            return value.strftime("%Y-%m-%d %H:%M")
        if kind == "date":
            return value.strftime("%Y-%m-%d")
    except (TypeError, ValueError, AttributeError):
        pass
    return visible(value)


def week_label(day: date) -> str:
    """The ISO week label of ``day``: ``2026-W05``."""
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


NUMERIC = ("money", "int", "share", "pct", "float", "figure")  # figure: formatted by the caller
TEXT_MIN = 12  # a text column may wrap down to this width before columns are hidden
# Identifiers (a model, a project, a session id: text without spaces) never wrap: a table too
# narrow for them hides columns instead, and says which (issue 28 item 9).


@dataclass(frozen=True)
class Column:
    """A column of a terminal table: source name, header, kind, and when it may be dropped."""

    name: str
    header: str = ""
    kind: str = ""  # "" = inferred from name and values
    drop_rank: int = 0  # 0: always shown; higher ranks are hidden first on a narrow terminal
    total: bool | None = None  # sum in the totals row (None: money and int columns)


def plain_columns(names: Sequence[str]) -> list[Column]:
    """Columns named after a query's own names; the usage views' numbers keep their headings."""
    known = {c.name: c for c in _USAGE_NUMBERS}  # the usage views' headings, everywhere
    return [known.get(n) or Column(n, visible(n)) for n in names]


def _resolve(columns: Sequence[Column], names: Sequence[str], rows: Sequence[Sequence]):
    index = {n: i for i, n in enumerate(names)}
    out = []
    for col in columns:
        if col.name not in index:
            continue
        values = [r[index[col.name]] for r in rows]
        kind = col.kind or column_kind(col.name, values)
        total = col.total if col.total is not None else kind in ("money", "int")
        out.append((col, kind, total, values))
    return out


def render(names: Sequence[str], rows: Sequence[Sequence], *, width: int,
           columns: Sequence[Column] | None = None, totals: bool = False,
           title: str | None = None, records_if_too_wide: bool = False):
    """A rich Table of ``rows`` fitted into ``width`` characters, and the headers left out.

    Columns are hidden by ``drop_rank`` (highest first) until the widest cells fit; text
    columns wrap. When the table still cannot fit and ``records_if_too_wide``, the rows come
    back as one "column: value" block each instead (psql's expanded display).
    A totals row sums money and count columns.
    """
    from rich import box
    from rich.table import Table

    resolved, cells, sums, shown, hidden, fits, room = _layout(names, rows, width, columns,
                                                                 totals)

    def needed(i: int) -> int:
        return max([len(resolved[i][0].header or resolved[i][0].name), *map(len, cells[i]),
                    len(sums[i])])

    if records_if_too_wide and not fits():
        return _records([resolved[i][0].header or resolved[i][0].name for i in shown],
                        [[cells[i][r] for i in shown] for r in range(len(rows))]), hidden
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, title=title, title_justify="left",
                  show_footer=False)
    for i in shown:
        col, kind, *_ = resolved[i]
        numeric = kind in NUMERIC
        whole = room(i) == needed(i)  # never cut a number, a date or an identifier
        table.add_column(col.header or col.name, justify="right" if numeric else "left",
                         no_wrap=whole, overflow="fold",
                         min_width=room(i))
    for r in range(len(rows)):
        table.add_row(*(cells[i][r] for i in shown), end_section=totals and r == len(rows) - 1)
    if totals and rows:
        first = True
        row = []
        for i in shown:
            row.append(sums[i] or ("total" if first else ""))
            first = False
        table.add_row(*row, style="bold")
    return table, hidden


def render_text(names: Sequence[str], rows: Sequence[Sequence], *, width: int,
                columns: Sequence[Column] | None = None, totals: bool = False,
                bold: bool = False) -> tuple[str | None, list[str]]:
    """What :func:`render`'s table prints, as text, when no cell needs wrapping (else None).

    rich measures and lays out every cell (45 ms for 132 rows, a fifth of `brainlab usage
    daily`); a table whose cells all fit is a few string joins. Same characters as rich's
    SIMPLE_HEAD box without edge padding, header and totals row in bold when ``bold`` (a
    terminal); cells holding ``[`` or two ``:`` (rich markup or an emoji code), or anything but
    printable ASCII, are left to rich. tests/test_tables_text.py compares both.
    """
    resolved, cells, sums, shown, hidden, _fits, _room = _layout(names, rows, width, columns,
                                                                  totals)
    heads = [resolved[i][0].header or resolved[i][0].name for i in shown]
    body = [[cells[i][r] for i in shown] for r in range(len(rows))]
    if totals and rows:
        body.append([sums[i] or ("total" if n == 0 else "") for n, i in enumerate(shown)])
    widths = [max(len(t) for t in [h, *(row[n] for row in body)]) for n, h in enumerate(heads)]
    widths = [max(w, _room(i)) for w, i in zip(widths, shown, strict=True)]
    inner = sum(widths) + 3 * (len(widths) - 1)
    if not shown or inner + 2 > width:
        return None, hidden
    for text in [*heads, *(c for row in body for c in row)]:
        if not (text.isascii() and text.isprintable()) or "[" in text or text.count(":") > 1:
            return None, hidden
    right = [resolved[i][1] in NUMERIC for i in shown]

    def line(row: list[str], strong: bool) -> str:
        parts = []
        last = len(row) - 1
        for n, text in enumerate(row):
            cell = text.rjust(widths[n]) if right[n] else text.ljust(widths[n])
            if strong:
                cell = (_BOLD + " " + _RESET if n else "") + _BOLD + cell + _RESET + (
                    _BOLD + " " + _RESET if n < last else "")
            else:
                cell = (" " if n else "") + cell + (" " if n < last else "")
            parts.append(cell)
        return " " + " ".join(parts) + " "

    blank = " " * (inner + 2)
    out = [blank, line(heads, bold), " " + "─" * inner + " "]
    data = body[:-1] if totals and rows else body
    out += [line(row, False) for row in data]
    if totals and rows:
        out += [blank, line(body[-1], bold)]
    out.append(blank)
    return "\n".join(out) + "\n", hidden


_BOLD, _RESET = "\x1b[1m", "\x1b[0m"


def _layout(names, rows, width, columns, totals):
    """Cells, totals and the columns shown at ``width`` (hidden by drop_rank until fit)."""
    resolved = _resolve(columns or plain_columns(names), names, rows)
    cells = [[format_cell(v, kind) for v in values] for _c, kind, _t, values in resolved]
    sums = []
    for (_col, kind, total, values) in resolved:
        present = [v for v in values if not is_missing(v)]
        sums.append(format_cell(sum(present), kind) if totals and total and present else "")
    needed = [max([len(col.header or col.name), *(len(c) for c in cs), len(s)])
              for (col, *_), cs, s in zip(resolved, cells, sums, strict=True)]
    shown = list(range(len(resolved)))
    hidden: list[str] = []

    identifier = [kind == "text" and all(not any(ch.isspace() for ch in c) for c in cs)
                  for (_c, kind, *_), cs in zip(resolved, cells, strict=True)]

    def room(i: int) -> int:  # prose wraps down to TEXT_MIN; numbers, dates, identifiers never
        whole = resolved[i][1] in (*NUMERIC, "date", "datetime") or identifier[i]
        return needed[i] if whole else min(needed[i], TEXT_MIN)

    def fits() -> bool:
        return sum(room(i) for i in shown) + 3 * len(shown) <= width  # padding + rule

    def hide(i: int) -> None:
        shown.remove(i)
        hidden.append(resolved[i][0].header or resolved[i][0].name)

    for rank in sorted({c.drop_rank for c, *_ in resolved if c.drop_rank}, reverse=True):
        if fits():
            break
        for i in [i for i in shown if resolved[i][0].drop_rank == rank]:
            hide(i)
    while columns is not None and not fits() and len(shown) > 1:
        hide(shown[-1])  # a command's own table: the rightmost column goes, and is named
    return resolved, cells, sums, shown, hidden, fits, room


def _records(headers: list[str], rows: list[list[str]]):
    """Rows as blocks of ``header  value`` lines, for tables wider than the terminal."""
    from rich.text import Text

    pad = max(len(h) for h in headers)
    lines = []
    for n, row in enumerate(rows, 1):
        lines.append(f"-[ row {n} ]" + "-" * max(0, pad - 6))
        lines += [f"{h:<{pad}}  {v}" for h, v in zip(headers, row, strict=True)]
    return Text("\n".join(lines))


def _plain(value: object) -> object:
    if is_missing(value):
        return None
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    return value


def _json_value(value: object) -> object:
    """A float at 12 significant digits: ``89.4012045``, not ``89.40120450000002``."""
    value = _plain(value)
    if isinstance(value, float) and value == value and value not in (float("inf"), -float("inf")):
        return float(f"{value:.12g}")
    return value


def to_json(names: Sequence[str], rows: Sequence[Sequence]) -> str:
    """JSON records (dates ISO 8601, missing values null, no float noise) for machines."""
    return json_safe(json.dumps([{n: _json_value(v) for n, v in zip(names, row, strict=True)}
                                 for row in rows], indent=1, ensure_ascii=False))


def text_table(names: Sequence[str], rows: Sequence[Sequence], *, width: int,
               columns: Sequence[Column] | None = None, totals: bool = False,
               see: str = "--json or --csv") -> str:
    """A command's table as plain text fitted into ``width``, then the columns it hid.

    The one way commands print a table (usage, simulate broker): separators, units and the
    missing marker of :func:`format_cell`; identifiers whole; hidden columns named.
    """
    text, hidden = render_text(names, rows, width=width,
                               columns=columns or plain_columns(names), totals=totals)
    if text is None:  # a cell needs rich's layout (non-ASCII, wrapped prose)
        from rich.console import Console

        table, hidden = render(names, rows, width=width,
                               columns=columns or plain_columns(names), totals=totals)
        buffer = io.StringIO()
        Console(file=buffer, width=width, color_system=None, soft_wrap=False).print(table)
        text = buffer.getvalue()
    if hidden:
        text += hidden_note(hidden, width, see) + "\n"
    return text


def hidden_note(hidden: Sequence[str], width: int, see: str = "--json or --csv") -> str:
    """``(not shown at 80 columns: a, b; see --json or --csv)``, wrapped at ``width``."""
    import textwrap

    return textwrap.fill(f"(not shown at {width} columns: {', '.join(hidden)}; see {see})",
                         width=width, break_long_words=False,
                         break_on_hyphens=False)


def to_csv(names: Sequence[str], rows: Sequence[Sequence]) -> str:
    """CSV with a header row (dates ISO 8601, missing values empty) for machines."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(names)
    for row in rows:
        writer.writerow(["" if is_missing(v) else _plain(v) for v in row])
    return buffer.getvalue()


# The usage_* views as terminal columns (``brainlab usage``, ``ingest claude --daily``): short
# headers; on a narrow terminal the cache columns go first, then input/output, then the rest.
_USAGE_NUMBERS = [
    Column("input_tokens", "input", drop_rank=2), Column("output_tokens", "output", drop_rank=2),
    Column("cache_creation_tokens", "cache write", drop_rank=3),
    Column("cache_read_tokens", "cache read", drop_rank=3),
    Column("total_tokens", "total tokens"), Column("cost_usd", "cost"),
    Column("requests", "calls", drop_rank=1),
]
USAGE_COLUMNS = {
    "daily": [Column("day", "day"), *_USAGE_NUMBERS,
              Column("unpriced_requests", "unpriced", drop_rank=4)],
    "weekly": [Column("week", "week"), *_USAGE_NUMBERS,
               Column("unpriced_requests", "unpriced", drop_rank=4)],
    "monthly": [Column("month", "month"), *_USAGE_NUMBERS,
                Column("unpriced_requests", "unpriced", drop_rank=4)],
    "sessions": [Column("session_id", "session"), Column("project", "project", drop_rank=1),
                 Column("first_ts", "started"), Column("last_ts", "last call", drop_rank=5),
                 *_USAGE_NUMBERS,
                 Column("subagent_requests", "subagent calls", drop_rank=4),
                 Column("subagent_cost_usd", "subagent cost", drop_rank=4)],
    "models": [Column("model", "model"), Column("priced_as", "priced as", drop_rank=4),
               *_USAGE_NUMBERS],
}
SHORT_ID = 8  # session ids shown by their first characters, as git shows commits


def usage_rows(view: str, names: Sequence[str], rows: Sequence[Sequence]) -> list[tuple]:
    """Rows of a usage view ready to render (JSON/CSV keep the values as they are).

    Session ids are shortened; a fast-mode model's ``<model>-fast`` reads ``<model> (fast)``.
    """
    if view == "models" and "model" in names:
        at = list(names).index("model")
        return [tuple(f"{v[:-5]} (fast)" if i == at and isinstance(v, str)
                      and v.endswith("-fast") else v for i, v in enumerate(r)) for r in rows]
    if view != "sessions" or "session_id" not in names:
        return list(rows)
    at = list(names).index("session_id")
    return [tuple(v[:SHORT_ID] if i == at and isinstance(v, str) else v
                  for i, v in enumerate(r)) for r in rows]
