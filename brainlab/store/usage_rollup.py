"""Store the usage roll-up (issue 12): cc_usage_groups' rows into cc_usage_rollup.

The derivation stays a SQL view (store/models/staging/cc_requests.sql and
marts/cc_usage_groups.sql, SPEC §7 deduplication and cost); it
reads every request line, so `brainlab usage` would pay the global deduplication on each
call. The claude ingest stores its rows instead, once per run that changed anything. Its
grain is the UTC 15-minute bucket (issue 24): any time zone's days and the 5-hour blocks are
sums of buckets (:mod:`brainlab.metrics.usage_time`), without touching the call rows.

A run that changed prices, or found the roll-up stale, rewrites it whole (:func:`refresh`).
Otherwise only the sessions its lines can change are recomputed (:func:`refresh_touched`):
the deduplication is global by (message.id, requestId), so a new line can move the kept
line of a call into another session or bucket, and a deleted line (a rewritten or removed
file) can hand it back; and a session's project is its latest working directory (views/
14_projects.sql), so any new line of a session can move all its groups to another project.
The touched lines (new, and about to be deleted: :func:`capture_deleted`) name the calls and
the sessions; every line of those calls names more sessions; the keys of every line of those
sessions are the calls to deduplicate again, through the same views, cut to those calls by
the variable ``cc_usage_keys`` (read by store/models/staging/cc_request_dedup.sql). The
deduplication of one call needs only that call's lines, so the groups of those sessions come
out exactly as a full rebuild's.

A ``brainlab_meta`` entry (``cc_usage_rollup``) holds the number of request lines the roll-up
was computed from; it is removed before a run writes and set again in the refresh's
transaction, so a reader uses the table only when it matches (:func:`is_current`): a run
killed half-way, a store attached to a lake, or rows written by other means fall back to
the views (and the next ingest rewrites it whole).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from brainlab.store.connection import engine

if TYPE_CHECKING:
    import duckdb

META_KEY = "cc_usage_rollup"
# the call a request line belongs to: cc_request_dedup partitions by it (SPEC §7), so the
# lines sharing it are deduplicated together, whatever their request_id
KEY = "coalesce(message_id, source_file || ':' || line)"
TOUCHED = "temp.cc_usage_touched"  # (session_id, key) of lines this run adds or deletes
_SAME_PAIR = "{a}.session_id IS NOT DISTINCT FROM {b}.session_id"
USAGE_BY = Path(__file__).parent / "models" / "marts" / "usage_by.sql"
_DIMENSION = re.compile(r"CASE WHEN list_contains\(dims, '(\w+)'\) THEN .+? END AS (\w+),")


@functools.cache
def dimensions() -> dict[str, str]:
    """The dimensions ``usage_by`` groups by (``--by DIM``), each with the column it outputs.

    Read from the macro's file, one line each (``CASE WHEN list_contains(dims, 'DIM') THEN
    expression END AS column``), so adding a grouping is that one line (issue 40 item 2).
    """
    return dict(_DIMENSION.findall(USAGE_BY.read_text(encoding="utf-8")))


def is_current(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether cc_usage_rollup holds cc_usage_groups for the request lines stored now."""
    try:  # two plain queries plan faster than one with two scalar subqueries (measured)
        stored = con.execute("SELECT value FROM brainlab_meta WHERE key = ?",
                             [META_KEY]).fetchone()
        if stored is None:
            return False
        return stored[0] == str(con.execute("SELECT count(*) FROM cc_request_lines"
                                            ).fetchone()[0])
    except engine().Error:  # a store made before the roll-up existed
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
        _mark_current(con)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute(f"DROP TABLE IF EXISTS {TOUCHED}")


def capture_deleted(con: duckdb.DuckDBPyConnection, files: Iterable[str]) -> None:
    """Note the request lines and sessions of ``files`` before a run deletes them.

    Their calls may have kept one of these lines, and their sessions may lose the line that
    named their project: :func:`refresh_touched` recomputes those sessions. Call it once per
    run, before any write (it starts the touched set).
    """
    files = sorted(set(files))
    con.execute(f"CREATE OR REPLACE TEMP TABLE cc_usage_touched AS SELECT session_id,"
                f" {KEY} AS key FROM cc_request_lines"
                " WHERE source_file IN (SELECT unnest(?::VARCHAR[]))", [files])
    con.execute(f"INSERT INTO {TOUCHED} SELECT DISTINCT session_id, NULL FROM cc_spans"
                " WHERE source_file IN (SELECT unnest(?::VARCHAR[]))", [files])


def refresh_touched(con: duckdb.DuckDBPyConnection, grown: Sequence[tuple[str, int]]) -> int:
    """Recompute the roll-up groups of the sessions a run can change; return how many.

    ``grown``: (file, lines before this run) of every file read: its lines after that number
    are new (0 for a new or rewritten file). Needs :func:`capture_deleted` earlier in the run
    and a roll-up that was current before it; the result equals :func:`refresh`'s.
    """
    files, lines = zip(*grown, strict=True) if grown else ((), ())
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(  # the new lines (a file's lines are numbered in order)
            f"INSERT INTO {TOUCHED} SELECT l.session_id, {KEY}"
            " FROM cc_request_lines l JOIN (SELECT unnest(?::VARCHAR[]) AS f,"
            " unnest(?::BIGINT[]) AS n) g ON l.source_file = g.f AND l.line > g.n",
            [list(files), list(lines)])
        con.execute(  # the sessions of every file read (a new cwd can change their project)
            f"INSERT INTO {TOUCHED} SELECT DISTINCT session_id, NULL FROM cc_spans"
            " WHERE source_file IN (SELECT unnest(?::VARCHAR[]))", [list(files)])
        # every session where a touched call has, or had, a line
        con.execute("CREATE OR REPLACE TEMP TABLE cc_usage_pairs AS"
                    f" SELECT DISTINCT session_id FROM {TOUCHED} UNION"
                    " SELECT session_id FROM cc_request_lines"
                    f" WHERE {KEY} IN (SELECT key FROM {TOUCHED} WHERE key IS NOT NULL)")
        # the calls with a line in those sessions: deduplicated again, whole (the view's scope)
        con.execute("SET VARIABLE cc_usage_keys = (SELECT coalesce(list(DISTINCT"
                    f" {KEY}), [])"
                    " FROM cc_request_lines l SEMI JOIN cc_usage_pairs p"
                    " ON l.session_id IS NOT DISTINCT FROM p.session_id)")
        con.execute("DELETE FROM cc_usage_rollup r WHERE EXISTS (SELECT 1 FROM cc_usage_pairs p"
                    " WHERE " + _SAME_PAIR.format(a="r", b="p") + ")")
        con.execute("INSERT INTO cc_usage_rollup BY NAME SELECT g.* FROM cc_usage_groups g"
                    " SEMI JOIN cc_usage_pairs p ON " + _SAME_PAIR.format(a="g", b="p"))
        groups = con.execute("SELECT count(*) FROM cc_usage_pairs").fetchone()[0]
        _mark_current(con)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        con.execute("RESET VARIABLE cc_usage_keys")
    con.execute(f"DROP TABLE IF EXISTS {TOUCHED}")
    con.execute("DROP TABLE IF EXISTS temp.cc_usage_pairs")
    return groups


def _mark_current(con: duckdb.DuckDBPyConnection) -> None:
    lines = con.execute("SELECT count(*) FROM cc_request_lines").fetchone()[0]
    con.execute("INSERT OR REPLACE INTO brainlab_meta VALUES (?, ?)", [META_KEY, str(lines)])
