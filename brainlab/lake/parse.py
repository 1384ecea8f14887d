"""The thin adapter between the Spark job and brainlab's own transcript parser.

Spark executors call :func:`parse_transcript`, which plans and parses one file with exactly
the functions the local ingest uses (:func:`brainlab.store.claude_ingest.plan_file` and
:func:`brainlab.store.claude_read.parse_file` behind the same crash guard), so the lake and a
local store hold the same rows.
When the parser's entry point changes, only this module follows it.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from brainlab.sources import claude_code as cc
from brainlab.store import claude_ingest as ci
from brainlab.store import claude_read, claude_rows
from brainlab.store.schema import empty_store

_TYPES_READY = False


def _ensure_types() -> None:
    """Load the store's column types once per worker process (the parser's Arrow types)."""
    global _TYPES_READY
    if not _TYPES_READY:
        with empty_store() as con:  # the cached empty store: no catalogue to build
            claude_rows.column_types(con)  # what the local writer does before its workers fork
        _TYPES_READY = True


def is_unchanged(path: str, state: tuple) -> bool:
    """True when the local ingest would read nothing of ``path`` (its plan, on the driver)."""
    try:
        return ci.plan_file(Path(path), state) is None
    except OSError:  # vanished or unreadable: an executor makes its error row
        return False


def parse_transcript(path: str, size: int, state: tuple | None):
    """Plan and parse one transcript as the local ingest would; None when nothing is new.

    ``state`` is the file's manifest row (the store's ``cc_files`` columns from
    ``source_file`` to ``errors``, then ``tail_sha256`` and ``mtime_ns``) or None for a new
    file. Returns (job, read, tables): the plan, the parse result and its rows as Arrow
    tables by lake table name, including ``ingest_errors``, ``cc_files`` and ``ingest_files``
    rows as the local writer makes them.
    """
    _ensure_types()
    job = ci.plan_file(Path(path), state)
    if job is None:
        return None
    if job.size != size:  # the file grew since it was listed: read what the driver saw
        job = claude_read.FileJob(job.path, job.offset, job.lines_done, size, job.reset, job.is_new,
                         job.runs, job.rows_before, job.errors_before, job.mtime_ns, job.real)
    read = claude_read.parse_safely(job, arrow=True)  # the local ingest's own guarded parse
    tables = dict(read.rows)
    if read.errors:
        names = ("file", "line", "reason", "source", "severity")
        tables["ingest_errors"] = pa.table(
            {n: pa.array([e[n] for e in read.errors],
                         type=pa.int64() if n == "line" else pa.string()) for n in names})
    requests = read.rows.get("cc_request_lines")
    rows_total = job.rows_before + (requests.num_rows if requests is not None else 0)
    errors_total = job.errors_before + len(read.errors)
    tables["cc_files"] = pa.table({
        "source_file": [job.path], "layout": [read.layout],
        "bytes_done": pa.array([read.bytes_done], pa.int64()),
        "lines_done": pa.array([read.lines_done], pa.int64()),
        "pending_bytes": pa.array([read.pending], pa.int64()), "head_sha256": [read.head],
        "size_seen": pa.array([job.size], pa.int64()), "runs": pa.array([job.runs + 1], pa.int32()),
        "rows_loaded": pa.array([rows_total], pa.int64()),
        "errors": pa.array([errors_total], pa.int64()), "tail_sha256": [read.tail],
        "mtime_ns": pa.array([job.mtime_ns], pa.int64()),
        "gone_at": pa.array([None], pa.timestamp("us"))})
    tables["ingest_files"] = pa.table({
        "file": [job.path], "source": [cc.SOURCE], "sha256": [f"tail:{read.bytes_done}"],
        "bytes": pa.array([read.bytes_done], pa.int64()),
        "rows_loaded": pa.array([rows_total], pa.int64()),
        "errors": pa.array([errors_total], pa.int64())})
    return job, read, tables
