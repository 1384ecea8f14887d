"""tables.render_text prints exactly what rich prints for the same table (issue 12).

`brainlab usage` writes its table without rich when no cell needs wrapping (rich's layout
was a fifth of the command's time); every usage view of the real corpus, at several widths,
in a terminal (bold header and totals) and not, must come out character for character as
rich renders :func:`brainlab.common.tables.render`'s Table.
"""

from __future__ import annotations

import io
from datetime import date

import pytest
from rich.console import Console

from brainlab.common import tables
from brainlab.metrics.usage import VIEWS, usage_table


def rich_text(names, rows, width, columns, terminal):
    console = Console(file=io.StringIO(), width=width, soft_wrap=True, force_terminal=terminal,
                      color_system="truecolor" if terminal else None)
    table, hidden = tables.render(names, rows, width=width, columns=columns, totals=True)
    console.print(table)
    return console.file.getvalue(), hidden


@pytest.fixture(scope="module")
def usage_tables(corpus_store) -> dict:
    """Each usage view's table on the corpus, read once per module (each of the ten
    renderings below read the same store again: ~0.5 CPU-s each, issue 28 item 1)."""
    return {view: usage_table(corpus_store, view) for view in VIEWS}


@pytest.mark.parametrize("terminal", [False, True])
@pytest.mark.parametrize("width", [40, 60, 80, 120, 200])
def test_usage_tables_match_rich(usage_tables, width, terminal):
    shown = 0
    for view in VIEWS:
        found = usage_tables[view]
        rows = tables.usage_rows(view, found.columns, found.rows)
        columns = found.table_columns or tables.USAGE_COLUMNS[view]  # as print_usage does
        text, hidden = tables.render_text(found.columns, rows, width=width, columns=columns,
                                          totals=True, bold=terminal)
        expected, expected_hidden = rich_text(found.columns, rows, width, columns, terminal)
        assert hidden == expected_hidden, view
        if text is not None:
            assert text == expected, (view, width)
            shown += 1
    if width >= 80:
        assert shown >= 3  # daily, weekly, monthly at least take the fast path
    if width >= 200:  # sessions (times hold one colon), models and the groupings too; one
        assert shown >= len(VIEWS) - 1  # grouping's non-ASCII missing marker may need rich


def test_cells_rich_would_read_as_markup_are_left_to_rich():
    names = ["model", "cost_usd"]
    for odd in ("claude-[/x]", "[link=https://x]y", "a:smile:b", "é"):
        text, _ = tables.render_text(names, [(odd, 1.0)], width=80, totals=True)
        assert text is None, odd
    text, _ = tables.render_text(names, [("claude-opus-4-5", 1.0)], width=80, totals=True)
    assert text == rich_text(names, [("claude-opus-4-5", 1.0)], 80, None, False)[0]
    narrow, _ = tables.render_text(["day", "note"], [(date(2026, 1, 1), "x" * 70)], width=40)
    assert narrow is None  # a cell that must wrap: rich lays it out


def test_a_query_s_usage_numbers_keep_the_usage_views_headings():
    """usage-who and usage-check print their rows through plain_columns: the same headings
    as `brainlab usage` (issue 28.9: one formatting module, one style), not snake_case."""
    from brainlab.common.tables import plain_columns

    labels = [c.header for c in plain_columns(["user", "requests", "total_tokens", "cost_usd"])]
    assert labels == ["user", "calls", "total tokens", "cost"]
