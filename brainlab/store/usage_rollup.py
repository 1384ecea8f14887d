"""Store the usage roll-up (issue 12): cc_usage_groups' rows into cc_usage_rollup.

The derivation stays a SQL view (views/15_claude.sql, SPEC §7 deduplication and cost); it
reads every request line, so `brainlab usage` would pay it on each call. The claude ingest
stores its rows instead, refreshing only the UTC days its files touched: the days of the
lines it wrote or deleted, and the days of every other line of the same API calls (the SPEC §7
"last line" of a call may move from one day to another when a file adds or loses a line).

A ``brainlab_meta`` entry (``cc_usage_rollup``) holds the number of request lines the roll-up
was computed from; it is removed while a run writes and set again in the refresh's
transaction, so a reader uses the table only when it matches (:func:`is_current`): a run
killed half-way, a store attached to a lake, or rows written by other means fall back to
the views.
"""

from __future__ import annotations

import duckdb

META_KEY = "cc_usage_rollup"
def _key(alias: str = "") -> str:
    """The SPEC §7 deduplication key of a request line (views/15_claude.sql)."""
    return f"coalesce({alias}message_id, {alias}source_file || ':' || {alias}line)"



_IN_DAYS = ("(day IN (SELECT day FROM _cc_usage_days) OR (day IS NULL AND EXISTS"
            " (SELECT 1 FROM _cc_usage_days WHERE day IS NULL)))")


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


def remember(con: duckdb.DuckDBPyConnection, files: list[str]) -> None:
    """Note the calls and days of ``files``' request lines (before they are deleted or grow)."""
    con.execute("CREATE TEMP TABLE IF NOT EXISTS _cc_usage_touched"
                " (k VARCHAR, request_id VARCHAR, day DATE)")
    if files:
        con.execute(f"INSERT INTO _cc_usage_touched SELECT DISTINCT {_key()}, request_id,"
                    " CAST(ts AS DATE) FROM cc_request_lines"
                    " WHERE source_file IN (SELECT unnest(?::VARCHAR[]))", [files])


def refresh(con: duckdb.DuckDBPyConnection, files: list[str] | None) -> None:
    """Rewrite cc_usage_rollup (one transaction): everything, or the days ``files`` touched.

    ``files``: the files this run wrote or deleted rows of (after :func:`remember` was called
    with those whose rows it deleted); None: the whole roll-up.
    """
    con.execute("BEGIN TRANSACTION")
    try:
        if files is None:
            con.execute("DELETE FROM cc_usage_rollup")
            con.execute("INSERT INTO cc_usage_rollup BY NAME SELECT * FROM cc_usage_groups")
        else:
            remember(con, files)
            # the days of the touched calls' lines, wherever those lines are
            con.execute(
                "CREATE OR REPLACE TEMP TABLE _cc_usage_days AS"
                " SELECT day FROM _cc_usage_touched UNION"
                f" SELECT CAST(l.ts AS DATE) FROM cc_request_lines l SEMI JOIN"
                f" (SELECT DISTINCT k, request_id FROM _cc_usage_touched) t"
                f" ON {_key('l.')} = t.k"
                " AND l.request_id IS NOT DISTINCT FROM t.request_id")
            con.execute(f"DELETE FROM cc_usage_rollup WHERE {_IN_DAYS}")
            con.execute("INSERT INTO cc_usage_rollup BY NAME SELECT * FROM cc_usage_groups"
                        f" WHERE {_IN_DAYS}")
        lines = con.execute("SELECT count(*) FROM cc_request_lines").fetchone()[0]
        con.execute("INSERT OR REPLACE INTO brainlab_meta VALUES (?, ?)", [META_KEY, str(lines)])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        con.execute("DROP TABLE IF EXISTS _cc_usage_touched")
        con.execute("DROP TABLE IF EXISTS _cc_usage_days")
