"""``brainlab sql``: run ONE read-only statement, errors as one line, empty results explained.

DuckDB's errors become one-line BrainlabErrors; an empty result says what the store lacks
and which command adds it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from brainlab.common.errors import StoreError
from brainlab.store.connection import engine, has_schema, query_error, reader

if TYPE_CHECKING:
    import duckdb

# What a store can lack, the table that shows it, and the command that fills it.
CONTENTS = (
    ("metabolism_sessions", "metabolism logs", "brainlab ingest brain PATH"),
    ("cc_requests", "Claude Code transcripts", "brainlab ingest claude [PATH]"),
    ("sprints", "sprints", "brainlab ingest sprints PATH"),
    ("circuit_events", "ticket circuit journals", "brainlab ingest circuits PATH"),
)


def _one_line(exc: Exception) -> str:
    """DuckDB's message on one line, with its hints.

    ``Did you mean "cc_sessions"?`` and ``Candidate bindings: ...`` are kept; the echoed
    statement (``LINE 1: ...`` and its caret line) is left out: one line cannot lay it out.
    """
    text = str(exc).strip().split("\n\nLINE ")[0].splitlines()
    first = " ".join(line.strip() for line in text if line.strip()) or type(exc).__name__
    if "read-only mode" in first or "read only" in first.lower():
        return (f"{first} (brainlab sql is read-only: only `brainlab ingest ...` writes the"
                " store)")
    return first


def missing_contents(con: duckdb.DuckDBPyConnection) -> list[str]:
    """What the store holds no row of, each with the command that adds it."""
    present = {name for (name,) in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' UNION ALL "
        "SELECT view_name FROM duckdb_views() WHERE schema_name = 'main'").fetchall()}
    out = []
    for table, what, command in CONTENTS:
        if table not in present or not con.execute(
                f'SELECT EXISTS (SELECT 1 FROM "{table}")').fetchone()[0]:
            out.append(f"no {what} (add them: {command})")
    return out


def run_sql(db: str | os.PathLike, statement: str) -> tuple[list[str], list[tuple], str]:
    """Run one statement read-only: (column names, rows, the empty-result message).

    Parsed and run on the store's connection, opened with DuckDB's engine module alone
    (the package's module-level parser opened a second, in-memory database: 25 ms more).
    """
    error = engine().Error
    with reader(db, engine_only=True) as con:
        try:
            statements = con.extract_statements(statement)
        except error as exc:
            raise StoreError(f"SQL: {_one_line(exc)}") from None
        if len(statements) != 1:
            raise StoreError(f"brainlab sql runs exactly one statement; got {len(statements)}:"
                             " run them one at a time")
        try:
            cursor = con.execute(statement)
        except error as exc:
            if not has_schema(con):  # an ingest killed before its schema: say so
                raise query_error(con, db, exc) from None
            raise StoreError(f"SQL: {_one_line(exc)}") from None
        if cursor.description is None:
            return [], [], "The statement returned no result set."
        names = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
        message = ""
        if not rows:
            gaps = missing_contents(con)
            message = f"No rows (columns: {', '.join(names)})."
            if gaps:
                message += " This store holds " + "; ".join(gaps) + "."
    return names, rows, message


def result_text(names: list[str], rows: list[tuple], *, width: int, styled: bool
                ) -> tuple[object, bool]:
    """``brainlab sql``'s result as it prints: (the table, whether rich must lay it out).

    Plain text when every cell fits ``width`` (a few joins); else a rich table, or one
    "column: value" block per row when even that is too wide. The row count follows
    (:func:`rows_line`).
    """
    from brainlab.common import tables

    text, _hidden = tables.render_text(names, rows, width=width, bold=styled)
    if text is not None:
        return text, False
    table, _hidden = tables.render(names, rows, width=width, records_if_too_wide=True)
    return table, True


def rows_line(count: int) -> str:
    """The line after a result: how many rows it has."""
    return f"{count:,} row(s)"
