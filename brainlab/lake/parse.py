"""The thin adapter between the Spark job and brainlab's own transcript parser.

Spark executors call :func:`parse_transcript`, which plans and parses one file with exactly
the functions the local ingest uses (:func:`brainlab.transcripts.ingest.plan_file` and
:func:`brainlab.transcripts.scan.parse_file` behind the same crash guard) and writes the
bookkeeping rows with the local writer's own row helpers, so the lake and a local store hold
the same rows.
When the parser's entry point changes, only this module follows it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa

from brainlab.store.columns import column_types
from brainlab.store.schema import empty_store
from brainlab.transcripts import ingest as ci
from brainlab.transcripts import scan, writer
from brainlab.transcripts.rows import to_arrow

_TYPES_READY = False


def _ensure_types() -> None:
    """Load the store's column types once per worker process (the parser's Arrow types)."""
    global _TYPES_READY
    if not _TYPES_READY:
        with empty_store() as con:  # the cached empty store: no catalogue to build
            column_types(con)  # what the local writer does before its workers fork
        _TYPES_READY = True


def _table(name: str, columns: tuple[str, ...], rows: list[tuple]) -> pa.Table:
    """Rows the writer's helpers made, as the Arrow table the writer would insert."""
    return to_arrow(name, [dict(zip(columns, row, strict=True)) for row in rows])


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
    rows made by the local writer's own row helpers (:func:`writer.file_row`...).
    """
    _ensure_types()
    job = ci.plan_file(Path(path), state)
    if job is None:
        return None
    if job.size != size:  # the file grew since it was listed: read what the driver saw
        job = dataclasses.replace(job, size=size)
    read = scan.parse_safely(job, arrow=True)  # the local ingest's own guarded parse
    tables = dict(read.rows)
    if read.errors:
        tables["ingest_errors"] = _table(
            "ingest_errors", writer.ERROR_COLUMNS,
            list(zip(*writer.error_columns(read.errors), strict=True)))
    requests = read.rows.get("cc_request_lines")
    file = writer.file_row(job, read, requests.num_rows if requests is not None else 0)
    files = _table("cc_files", writer.FILE_COLUMNS, [file])
    # gone_at is always NULL here; typed as a timestamp, as the lake has always written it
    tables["cc_files"] = files.set_column(files.schema.get_field_index("gone_at"), "gone_at",
                                          pa.array([None], pa.timestamp("us")))
    tables["ingest_files"] = _table("ingest_files", writer.LOG_COLUMNS, [writer.log_row(file)])
    return job, read, tables
