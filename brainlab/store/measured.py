"""Store the measured metabolism (issue 13): cc_measured's rows into cc_session_measures.

The derivation stays a SQL view (store/models/marts/cc_measured.sql, SPEC §7 mapping); deriving it reads
every transcript line table, so the claude ingest stores its result once per run and the
matching, the audit and the basis-aware metrics read that small table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb


def refresh_measures(con: duckdb.DuckDBPyConnection, sessions: list[str] | None = None) -> int:
    """Rewrite cc_session_measures from cc_measured (one transaction); return its rows.

    ``sessions``: only these sessions (those whose files an incremental run read or removed);
    cc_measured then reads only their rows (the variable cc_measure_sessions, set for this
    refresh); None: all of them.
    """
    where = ("" if sessions is None else
             " WHERE transcript_session IN (SELECT unnest(?::VARCHAR[]))")
    params = [] if sessions is None else [list(sessions)]
    con.execute("BEGIN TRANSACTION")
    try:
        if sessions is not None:  # cc_measured cuts its raw rows to these (cc_in_measure_scope)
            con.execute("SET VARIABLE cc_measure_sessions = ?::VARCHAR[]", params)
        con.execute("DELETE FROM cc_session_measures" + where, params)
        con.execute("INSERT INTO cc_session_measures BY NAME SELECT * FROM cc_measured" + where,
                    params)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        con.execute("RESET VARIABLE cc_measure_sessions")
    return con.execute("SELECT count(*) FROM cc_session_measures").fetchone()[0]
