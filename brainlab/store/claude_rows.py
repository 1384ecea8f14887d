"""Typed rows of the transcript tables: column types, Arrow or column-list form, inserts.

A worker sends its rows as Arrow tables (buffers, cheap to pickle); a small run in one process
keeps them as column lists (building Arrow arrays from Python objects makes pyarrow import
pandas, and importing pyarrow alone costs ~0.1 s, most of a small incremental run), so
pyarrow is imported only when Arrow is used. Column types are the store's own, read once from
DuckDB (or from an in-memory copy of the schema while a new store is being created).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the package costs 40-55 ms to import; a small run uses the engine alone
    import duckdb


@dataclass
class Columns:
    """One table's rows as column lists: the in-process path, written without Arrow."""

    names: tuple[str, ...]
    values: list[list]

    @property
    def num_rows(self) -> int:
        """How many rows (the length of every column)."""
        return len(self.values[0]) if self.values else 0


_TYPED: dict[str, list[tuple[str, str]]] = {}  # table -> (column, DuckDB type), in order
_SQL_TYPES: dict[str, dict[str, str]] = {}  # table -> column -> DuckDB type


def column_types(con: duckdb.DuckDBPyConnection, table: str | None = None
                  ) -> dict[str, str]:
    """``table``'s column types, for Arrow and for list inserts (all tables read at once).

    Without ``table``: (re)read every table's (the writer does so at each run).
    """
    if table is None or table not in _SQL_TYPES:
        cols: dict[str, list[tuple[str, str]]] = {}
        for name, column, data_type in con.execute(
                "SELECT table_name, column_name, data_type FROM duckdb_columns()"  # 3x faster
                " WHERE schema_name = 'main' AND database_name = current_database()"
                " ORDER BY table_name, column_index").fetchall():
            cols.setdefault(name, []).append((column, data_type))
        for name, typed in cols.items():
            _SQL_TYPES[name] = dict(typed)
            _TYPED[name] = typed
    return _SQL_TYPES.get(table, {}) if table else {}


def schema_types() -> None:
    """Every table's column types from the schema alone (an in-memory database, ~0.2 s)."""
    from brainlab.store.connection import StoreConfig, connect
    from brainlab.store.schema import sql_files

    mem = connect(StoreConfig(path=Path(":memory:"), read_only=False))
    try:
        for _, sql in sql_files("schema"):
            mem.execute(sql)
        column_types(mem)
    finally:
        mem.close()


def insert_columns(con: duckdb.DuckDBPyConnection, table: str, names, columns: list[list],
                   replace: bool = False) -> None:
    """Append rows given as one list per column (``names``) to ``table``, without Arrow.

    The lists are query parameters unnested side by side; TIMESTAMP columns receive ISO text
    (as in the Arrow path) and DuckDB casts it on insert. ``replace``: INSERT OR REPLACE.
    """
    if not columns or not columns[0]:
        return
    types = column_types(con, table)
    select = ", ".join(
        f'unnest(${i}::{"VARCHAR" if types[n] == "TIMESTAMP" else types[n]}[]) AS "{n}"'
        for i, n in enumerate(names, 1))
    verb = "INSERT OR REPLACE" if replace else "INSERT"
    con.execute(f'{verb} INTO "{table}" BY NAME SELECT {select}', columns)


def to_columns(table: str, rows: list) -> Columns:
    """Rows (dicts, or tuples in the order of tuple_columns()[table]) as column lists."""
    if isinstance(rows[0], tuple):
        return Columns(tuple_columns()[table], [list(c) for c in zip(*rows, strict=True)])
    names = tuple(c for c, _ in _TYPED[table])
    return Columns(names, [[r.get(c) for r in rows] for c in names])


def to_arrow(table: str, rows: list):
    """Rows (dicts, or tuples in the order of tuple_columns()[table]) as a typed Arrow table."""
    import pyarrow as pa

    arrow = {"VARCHAR": pa.string(), "BIGINT": pa.int64(), "INTEGER": pa.int32(),
             "BOOLEAN": pa.bool_(), "DOUBLE": pa.float64(), "TIMESTAMP": pa.string()}
    typed = _TYPED[table]
    if isinstance(rows[0], tuple):
        types = dict(typed)
        columns = zip(*rows, strict=True)
        return pa.table({c: pa.array(v, type=arrow.get(types[c], pa.string()))
                         for c, v in zip(tuple_columns()[table], columns, strict=True)})
    return pa.table({c: pa.array([r.get(c) for r in rows], type=arrow.get(t, pa.string()))
                     for c, t in typed})


@lru_cache(maxsize=1)
def tuple_columns() -> dict[str, tuple[str, ...]]:
    """The column order of the rows the parsers give as tuples, per table.

    Read from the parsers' modules on first use: writing prices or error rows (a run with
    nothing new to parse) uses :func:`insert_columns` without importing them (issue 12).
    """
    from brainlab.sources import claude_code as cc
    from brainlab.sources import claude_marks

    return {"cc_request_lines": cc.REQUEST_COLUMNS, "cc_tool_call_lines": cc.TOOL_CALL_COLUMNS,
            "cc_tool_results": cc.TOOL_RESULT_COLUMNS, "cc_marks": claude_marks.MARK_COLUMNS}
