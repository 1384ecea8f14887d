"""Store the usage roll-up (issue 12): cc_usage_groups' rows into cc_usage_rollup.

The derivation stays a SQL view (views/15_claude.sql, SPEC §7 deduplication and cost); it
reads every request line, so `brainlab usage` would pay the global deduplication on each
call. The claude ingest stores its rows instead, once per run that changed anything. The
whole roll-up is rewritten: the deduplication is global (the "last line" of a call may move
to another day when any file adds or loses a line), and restricting it to some days cost
more than the whole (measured: 119 ms for 16 files against 98 ms for all, 1 GB store).

A ``brainlab_meta`` entry (``cc_usage_rollup``) holds the number of request lines the roll-up
was computed from; it is removed before a run writes and set again in the refresh's
transaction, so a reader uses the table only when it matches (:func:`is_current`): a run
killed half-way, a store attached to a lake, or rows written by other means fall back to
the views.
"""

from __future__ import annotations

import duckdb

META_KEY = "cc_usage_rollup"


def is_current(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether cc_usage_rollup holds cc_usage_groups for the request lines stored now."""
    try:
        stored = con.execute("SELECT value FROM brainlab_meta WHERE key = ?",
                             [META_KEY]).fetchone()
        if stored is None:
            return False
        return stored[0] == str(con.execute("SELECT count(*) FROM cc_request_lines"
                                            ).fetchone()[0])
    except duckdb.Error:  # a store made before the roll-up existed
        return False


def invalidate(con: duckdb.DuckDBPyConnection) -> None:
    """Mark the roll-up stale before a run writes (committed at once: a crash leaves it so)."""
    con.execute("DELETE FROM brainlab_meta WHERE key = ?", [META_KEY])


def refresh(con: duckdb.DuckDBPyConnection) -> None:
    """Rewrite cc_usage_rollup from cc_usage_groups and mark it current (one transaction)."""
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("DELETE FROM cc_usage_rollup")
        con.execute("INSERT INTO cc_usage_rollup BY NAME SELECT * FROM cc_usage_groups")
        lines = con.execute("SELECT count(*) FROM cc_request_lines").fetchone()[0]
        con.execute("INSERT OR REPLACE INTO brainlab_meta VALUES (?, ?)", [META_KEY, str(lines)])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
