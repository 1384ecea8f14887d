"""Upgrade a store to a new schema without losing its recorded rows (issue 24, DESIGN).

A store is the record: Claude Code deletes transcripts after 30 days, so rows parsed from
files that are gone can never be read again. When the table definitions change (another
``schema`` fingerprint in ``brainlab_meta``), :func:`schema.apply` calls this module inside
its one transaction, so a kill at any point leaves the store as it was:

1. :func:`move_aside`: views are dropped; every *derived* table (:data:`DERIVED`, computed
   from other tables and rewritten by an ingest) is dropped and its ``brainlab_meta`` mark
   (a key named like the table, e.g. ``cc_usage_rollup``) removed; every other table is
   *recorded* and renamed ``_upgrade_old_<name>``. Everything is recorded unless declared
   derived here.
2. the new schema is created (schema/*.sql), then :func:`carry_over` copies each recorded
   table's rows into its new version: the columns both share, CAST to the new type; a
   column only in the new table gets its default (or NULL); a column only in the old one
   is dropped and counted. A table the new schema no longer has is kept as it was. Rows
   that do not fit (a failed cast, a new NOT NULL column without default, a new primary
   key the old rows break) stop the upgrade with one :class:`StoreError` naming the table:
   the transaction is rolled back and nothing is lost.
3. every file's "already read" mark (:data:`REREAD`) is cleared, so the next ingest reads
   each file still on disk again from its start, with the new parser, replacing its rows;
   rows of files that no longer exist stay as they were carried.

``BRAINLAB_TEST_UPGRADE_KILL=<point>`` kills the process with SIGKILL at that point (the
tests' way to prove the transaction holds: ``moved``, ``copied``, ``commit``).
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from brainlab.common.errors import StoreError
from brainlab.store.catalog import LOOKUP_TABLES
from brainlab.store.connection import engine

if TYPE_CHECKING:
    import duckdb

# tables computed from other tables: dropped on an upgrade, recomputed by the next ingest
# (the usage roll-up and measures by claude_ingest._finish, prices by write_prices, the
# protocol lookups by schema._write_lookups). Every other table holds recorded rows.
DERIVED = frozenset({"cc_usage_rollup", "cc_session_measures", "cc_prices"}) | frozenset(
    LOOKUP_TABLES)  # the spec's lookup tables: written anew by every apply
# the bookkeeping that makes an ingest skip a file it has read: (table, column, value that
# matches no file), so every file still on disk is read again whole after an upgrade
REREAD = (("cc_files", "head_sha256", "upgraded"), ("ingest_files", "sha256", "upgraded"))
PREFIX = "_upgrade_old_"
KILL_ENV = "BRAINLAB_TEST_UPGRADE_KILL"


@dataclass
class UpgradeSummary:
    """What an upgrade did, for the one line an ingest prints."""

    old_schema: str
    tables_kept: int = 0
    rows_carried: int = 0
    derived: list[str] = field(default_factory=list)
    columns_dropped: list[str] = field(default_factory=list)  # "table.column"
    left_as_is: list[str] = field(default_factory=list)  # tables the new schema lacks

    def line(self) -> str:
        """The line an ingest prints after upgrading the store."""
        text = (f"store upgraded from schema {self.old_schema}: {self.tables_kept} tables kept,"
                f" {self.rows_carried:,} rows carried, {len(self.derived)} derived tables to"
                " recompute")
        if self.columns_dropped:
            text += f", {len(self.columns_dropped)} old columns dropped"
        if self.left_as_is:
            text += f", {len(self.left_as_is)} tables no longer in the schema left as they were"
        return text


DONE: list[UpgradeSummary] = []  # upgrades committed in this process, for the CLI to print


def kill_point(name: str) -> None:
    """Die here (SIGKILL) when the tests ask for it: the upgrade must leave no trace."""
    if os.environ.get(KILL_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


def _tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [row[0] for row in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
        " AND schema_name = 'main' AND NOT temporary AND table_name <> 'brainlab_meta'"
        " ORDER BY table_name").fetchall()]


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> dict[str, str]:
    return dict(con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name ="
        " current_database() AND schema_name = 'main' AND table_name = ?"
        " ORDER BY column_index", [table]).fetchall())


def move_aside(con: duckdb.DuckDBPyConnection, old_schema: str) -> tuple[UpgradeSummary,
                                                                           list[str]]:
    """Drop views and derived tables, rename recorded tables aside (in the caller's transaction)."""
    summary = UpgradeSummary(old_schema)
    for (name,) in con.execute(
        "SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'"
        " AND database_name = current_database()").fetchall():
        con.execute(f'DROP VIEW IF EXISTS "{name}"')
    moved = []
    for name in _tables(con):
        if name in DERIVED:
            con.execute(f'DROP TABLE "{name}"')
            summary.derived.append(name)
        elif not name.startswith(PREFIX):
            con.execute(f'ALTER TABLE "{name}" RENAME TO "{PREFIX}{name}"')
            moved.append(name)
    con.execute("DELETE FROM brainlab_meta WHERE key IN (SELECT unnest(?::VARCHAR[]))",
                [sorted(DERIVED)])
    kill_point("moved")
    return summary, moved


def carry_over(con: duckdb.DuckDBPyConnection, summary: UpgradeSummary, moved: list[str],
               store: str) -> UpgradeSummary:
    """Copy each moved table's rows into the new schema's table; mark every file to re-read."""
    for name in moved:
        old = PREFIX + name
        new_columns = _columns(con, name)
        if not new_columns:  # no longer in the schema: kept as it was
            con.execute(f'ALTER TABLE "{old}" RENAME TO "{name}"')
            summary.left_as_is.append(name)
            continue
        old_columns = _columns(con, old)
        shared = [c for c in new_columns if c in old_columns]
        summary.columns_dropped += [f"{name}.{c}" for c in old_columns if c not in new_columns]
        values = ", ".join(f'"{c}"' if old_columns[c] == new_columns[c]
                           else f'CAST("{c}" AS {new_columns[c]})' for c in shared)
        names = ", ".join(f'"{c}"' for c in shared)
        try:
            if shared:
                con.execute(f'INSERT INTO "{name}" ({names}) SELECT {values} FROM "{old}"')
            summary.rows_carried += con.execute(f'SELECT count(*) FROM "{old}"').fetchone()[0]
        except engine().Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise StoreError(
                f"cannot upgrade {store}: the rows of table {name} do not fit its new"
                f" definition ({first}); the store is unchanged: keep using the brainlab"
                " version that wrote it, or move the file aside and ingest into a new store"
                " (rows of deleted transcripts then stay only in the old file)") from exc
        con.execute(f'DROP TABLE "{old}"')
        summary.tables_kept += 1
        if summary.tables_kept == 1:
            kill_point("copied")
    for table, column, value in REREAD:
        if column in _columns(con, table):
            con.execute(f'UPDATE "{table}" SET "{column}" = ?', [value])
    return summary


__all__ = ["DERIVED", "DONE", "REREAD", "UpgradeSummary", "carry_over", "kill_point",
           "move_aside"]
