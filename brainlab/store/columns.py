"""Column types of the store's tables, and inserts of rows given as one list per column.

Read once from DuckDB (``duckdb_columns()``), or from an in-memory copy of the schema while a
new store is being created. :func:`insert_columns` appends rows without Arrow (importing
pyarrow alone costs ~0.1 s, most of a small incremental run): used by the transcript writer
(:mod:`brainlab.transcripts.writer`) and the price table.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the package costs 40-55 ms to import; a small run uses the engine alone
    import duckdb


_TYPED: dict[str, list[tuple[str, str]]] = {}  # table -> (column, DuckDB type), in order
_SQL_TYPES: dict[str, dict[str, str]] = {}  # table -> column -> DuckDB type
_READ_FROM: list = [None]  # the connection they were last read from


def column_types(con: duckdb.DuckDBPyConnection, table: str | None = None
                  ) -> dict[str, str]:
    """``table``'s column types, for Arrow and for list inserts (all tables read at once).

    Without ``table``: (re)read every table's (the writer does so at each run), unless they
    were read from this very connection (a new store's price table was written just before:
    the query costs ~5 ms).
    """
    if (table is None and _READ_FROM[0] is not con) or (table is not None
                                                       and table not in _SQL_TYPES):
        cols: dict[str, list[tuple[str, str]]] = {}
        for name, column, data_type in con.execute(
                "SELECT table_name, column_name, data_type FROM duckdb_columns()"  # 3x faster
                " WHERE schema_name = 'main' AND database_name = current_database()"
                " ORDER BY table_name, column_index").fetchall():
            cols.setdefault(name, []).append((column, data_type))
        for name, typed in cols.items():
            _SQL_TYPES[name] = dict(typed)
            _TYPED[name] = typed
        _READ_FROM[0] = con
    return _SQL_TYPES.get(table, {}) if table else {}


def schema_types() -> None:
    """Every table's column types from the schema alone (an in-memory database, ~0.2 s)."""
    from brainlab.store.catalog import sql_files
    from brainlab.store.connection import StoreConfig, connect

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
    if not set(names) <= set(types):  # read for another store, or no such column
        _READ_FROM[0] = None
        column_types(con)
        types = column_types(con, table)

    def cast(name: str) -> str:  # a column the table lacks: DuckDB's own error names it
        kind = types.get(name)
        return "" if kind is None else f'::{"VARCHAR" if kind == "TIMESTAMP" else kind}[]'

    select = ", ".join(f'unnest(${i}{cast(n)}) AS "{n}"' for i, n in enumerate(names, 1))
    verb = "INSERT OR REPLACE" if replace else "INSERT"
    con.execute(f'{verb} INTO "{table}" BY NAME SELECT {select}', columns)


def typed(table: str) -> list[tuple[str, str]]:
    """``table``'s (column, DuckDB type) pairs in order, as last read by :func:`column_types`."""
    return _TYPED[table]
