"""Typed rows of the transcript tables: in Arrow or column-list form, typed as the store's.

A worker sends its rows as Arrow tables (buffers, cheap to pickle); a small run in one process
keeps them as column lists (building Arrow arrays from Python objects makes pyarrow import
pandas, and importing pyarrow alone costs ~0.1 s, most of a small incremental run), so
pyarrow is imported only when Arrow is used. Column types are the store's own
(:mod:`brainlab.store.columns`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from brainlab.store.columns import typed


@dataclass
class Columns:
    """One table's rows as column lists: the in-process path, written without Arrow."""

    names: tuple[str, ...]
    values: list[list]

    @property
    def num_rows(self) -> int:
        """How many rows (the length of every column)."""
        return len(self.values[0]) if self.values else 0


def to_columns(table: str, rows: list) -> Columns:
    """Rows (dicts, or tuples in the order of tuple_columns()[table]) as column lists."""
    if isinstance(rows[0], tuple):
        return Columns(tuple_columns()[table], [list(c) for c in zip(*rows, strict=True)])
    names = tuple(c for c, _ in typed(table))
    return Columns(names, [[r.get(c) for r in rows] for c in names])


def to_arrow(table: str, rows: list):
    """Rows (dicts, or tuples in the order of tuple_columns()[table]) as a typed Arrow table."""
    import pyarrow as pa

    arrow = {"VARCHAR": pa.string(), "BIGINT": pa.int64(), "INTEGER": pa.int32(),
             "BOOLEAN": pa.bool_(), "DOUBLE": pa.float64(), "TIMESTAMP": pa.string()}
    typed_columns = typed(table)
    if isinstance(rows[0], tuple):
        types = dict(typed_columns)
        columns = zip(*rows, strict=True)
        return pa.table({c: pa.array(v, type=arrow.get(types[c], pa.string()))
                         for c, v in zip(tuple_columns()[table], columns, strict=True)})
    return pa.table({c: pa.array([r.get(c) for r in rows], type=arrow.get(t, pa.string()))
                     for c, t in typed_columns})


@lru_cache(maxsize=1)
def tuple_columns() -> dict[str, tuple[str, ...]]:
    """The column order of the rows the parsers give as tuples, per table.

    Read from the parsers' modules on first use: writing prices or error rows (a run with
    nothing new to parse) uses :mod:`brainlab.store.columns` without importing them.
    """
    from brainlab.transcripts import build, marks

    return {"cc_request_lines": build.REQUEST_COLUMNS, "cc_tool_call_lines": build.TOOL_CALL_COLUMNS,
            "cc_tool_results": build.TOOL_RESULT_COLUMNS, "cc_marks": marks.MARK_COLUMNS}
