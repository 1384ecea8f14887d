"""The Spark ingest's parse: few large tasks that write every raw table's Parquet themselves.

``parse_jobs`` packs the files to read into bins of ~``BIN_BYTES`` and runs one task per core
over them (``spark.range(bins).mapInArrow``, the bins in a broadcast); a task parses each of
its bins with brainlab's own parser (:mod:`brainlab.lake.parse`), types each table's rows as
the store types them (timestamps included: :func:`timestamps` reads the ISO text as Spark's
``try_cast(... AS TIMESTAMP_NTZ)`` did) and writes them with pyarrow into the run's staging
folder (:class:`brainlab.lake.staging.Writers`: one file per table and partition, rows
buffered into large row groups). It hands back only marks, the ``HEAD`` columns: the bookkeeping kinds
(``_unchanged``, ``_reset``, ``_clear_file_errors``, ``_warnings``, ``_read``: a file read,
its ``cc_files`` key) and one ``_file`` mark per file written (table, partition, path
relative to the staging folder, rows). No rows cross to the JVM: the JVM turning ~100k rows
per table and GB into rows, a columnar cache and then Parquet was most of the Spark ingest's
CPU (docs/scale.md).
"""

from __future__ import annotations

import datetime as dt
import functools
import heapq
import re
import uuid

import pyarrow as pa

from brainlab.lake import layout

BIN_BYTES = 128 << 20  # input bytes per bin: what a task's Python worker holds at once
MARKS = ("_unchanged", "_reset", "_clear_file_errors", "_warnings",  # bookkeeping kinds
         "_read",  # a file read: source_file is its cc_files key
         "_file")  # a file written: table, partition, path (in source_file), rows
ARROW_TYPES = {"VARCHAR": pa.string(), "BIGINT": pa.int64(), "INTEGER": pa.int32(),
               "BOOLEAN": pa.bool_(), "DOUBLE": pa.float64(), "DATE": pa.date32(),
               "TIMESTAMP": pa.timestamp("us")}  # TIMESTAMP_NTZ, as Spark wrote it
HEAD = (("kind", pa.string()), ("user", pa.string()), ("machine", pa.string()),
        ("source_file", pa.string()), ("rows", pa.int64()), ("table", pa.string()))
# Spark's cast of text to TIMESTAMP_NTZ, for what Arrow's own cast refuses: spaces around,
# 1-2 digit fields, 7-9 fraction digits (cut to microseconds), a zone (ignored)
_SPARK_TS = re.compile(r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2})(?:[T ](\d{1,2})(?::(\d{1,2})"
                       r"(?::(\d{1,2})(?:\.(\d*))?)?)?(?:Z|[+-]\d{1,2}(?::?\d{2})?)?)?)?)?")


def head_ddl() -> str:
    """The Spark schema of the parse's output: the marks' columns."""
    return ", ".join(f"`{name}` {'bigint' if typ == pa.int64() else 'string'}"
                     for name, typ in HEAD)


def pack(jobs: list[dict], bins: int) -> list[list[dict]]:
    """Jobs into ``bins`` lists of near-equal bytes (largest first, each to the lightest)."""
    heap = [(0, i) for i in range(bins)]
    out: list[list[dict]] = [[] for _ in range(bins)]
    for job in sorted(jobs, key=lambda j: -j["size"]):
        load, i = heapq.heappop(heap)
        out[i].append(job)
        heapq.heappush(heap, (load + job["size"], i))
    return [b for b in out if b]


def parse_jobs(spark, jobs: list[dict], tables: tuple[str, ...], columns: dict, run: str,
               fill: dict | None = None):
    """The marks of parsing ``jobs`` into the staging folder ``run``: one task per core.

    Bins of ~BIN_BYTES (at least one per core) travel in a broadcast made on the driver,
    state included (each file's manifest row as the plan read it), so a retried task parses
    the same bytes of the same files again, under its own attempt id. A task takes a range
    of bins and writes one file per table and partition (row groups of up to
    128 MB of rows, :data:`brainlab.lake.staging.BUFFER_BYTES`): a run adds
    at most cores x partitions files per table. Lazy: the caller's one action (the tally)
    runs it; nothing is cached. ``fill``: {(table, column): value} the driver decided (the
    price table version in force), written in every row.
    """
    total = sum(j["size"] for j in jobs)
    cores = max(spark.sparkContext.defaultParallelism, 1)
    bins = pack(jobs, max(min(len(jobs), max(cores, -(-total // BIN_BYTES))), 1))
    shared = spark.sparkContext.broadcast(bins)
    tasks = max(min(len(bins), cores), 1)
    work = spark.range(0, max(len(bins), 1), 1, tasks)
    parse = functools.partial(_parse_bins, shared, tables, {t: columns[t] for t in tables},
                              run, fill or {})
    return work.mapInArrow(parse, head_ddl())


def timestamps(text: pa.Array) -> pa.Array:
    """ISO text as timestamp[us] (no zone), as Spark's ``try_cast(... AS TIMESTAMP_NTZ)``.

    Null for text that is no timestamp. The parser writes ``YYYY-MM-DDTHH:MM:SS[.ffffff]`` (naive
    UTC), which Arrow casts in C++; anything else goes through :func:`_spark_ts` one by one.
    """
    try:
        return text.cast(pa.timestamp("us"))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return pa.array([_spark_ts(v) for v in text.to_pylist()], pa.timestamp("us"))


def _spark_ts(value: str | None) -> dt.datetime | None:
    """One text as Spark casts it to TIMESTAMP_NTZ (years past 9999: null), else None."""
    found = _SPARK_TS.fullmatch(value.strip()) if value else None
    if not found:
        return None
    y, mo, d, h, mi, s, frac = found.groups()
    micros = int(((frac or "") + "000000")[:6])
    try:
        return dt.datetime(int(y), int(mo or 1), int(d or 1), int(h or 0), int(mi or 0),
                           int(s or 0), micros)
    except ValueError:  # month 13, February 30, hour 24...
        return None


def _conform(arrow: pa.Table, columns: list[tuple[str, str]], fill: dict | None = None
             ) -> list[pa.Array]:
    """``arrow``'s columns in the store's order and types (a missing column: nulls).

    ``fill``: {column: value} written in every row (what a local store's column default
    gives: the price table version in force).
    """
    out = []
    for name, typ in columns:
        target = ARROW_TYPES.get(typ, pa.string())
        if fill and name in fill:
            out.append(pa.array([fill[name]] * arrow.num_rows, target))
            continue
        if name not in arrow.column_names:
            out.append(pa.nulls(arrow.num_rows, target))
            continue
        col = arrow.column(name).combine_chunks()
        if col.type != target:
            col = timestamps(col.cast(pa.string())) if typ == "TIMESTAMP" else col.cast(target)
        out.append(col)
    return out


def _write(writers, table: str, columns: list[tuple[str, str]], pieces: list) -> None:
    """Write one bin's rows of ``table`` (``pieces``: (columns, user, machine) per file)."""
    import pyarrow.compute as pc

    names = [c for c, _ in columns]
    parts = layout.partitions(table)
    by_home: dict[tuple, list] = {}
    for cols, user, machine in pieces:
        by_home.setdefault((user, machine), []).append(
            pa.Table.from_arrays(cols, names=names))
    for (user, machine), frames in by_home.items():
        rows = pa.concat_tables(frames)
        extra = [p for p in parts if p not in layout.PARTITIONS]
        keep = [c for c in names if c not in parts]
        if not extra:
            writers.write(table, (user, machine), rows.select(keep))
            continue
        values = rows.column(extra[0])  # ingest_errors, ingest_files: source=<s>
        for value in values.unique().to_pylist():
            mask = pc.is_null(values) if value is None else pc.equal(values, value)
            writers.write(table, (user, machine, value), rows.filter(mask).select(keep))


def _state(job: dict) -> tuple | None:
    """The manifest row of a job as :func:`brainlab.lake.parse.parse_transcript` reads it."""
    if job.get("bytes_done") is None:
        return None
    return (job["source_file"], job["bytes_done"], job["lines_done"], job["pending_bytes"],
            job["head_sha256"], job["runs"], job["rows_loaded"], job["errors"],
            job.get("tail_sha256"), job.get("mtime_ns"))


def _mark(marks: dict, kind: str, user: str, machine: str, source_file: str | None,
          rows: int | None, table: str | None = None) -> None:
    """Add one mark (the HEAD columns) to ``marks``."""
    for key, value in zip(("kind", "user", "machine", "source_file", "rows", "table"),
                          (kind, user, machine, source_file, rows, table), strict=True):
        marks[key].append(value)


def _parse_bins(shared, tables: tuple[str, ...], columns: dict, run: str, fill: dict,
                batches):
    """Executor side: parse each file of its bins, write the tables, yield the marks."""
    from pyspark import TaskContext

    from brainlab.lake.parse import parse_transcript
    from brainlab.lake.staging import Writers

    context = TaskContext.get()
    task, attempt = ((context.partitionId(), str(context.taskAttemptId())) if context
                     else (0, uuid.uuid4().hex[:8]))
    writers = Writers(run, task, attempt)
    marks: dict[str, list] = {name: [] for name, _ in HEAD}
    bins = shared.value
    for batch in batches:
        for i in batch.column("id").to_pylist():
            if i >= len(bins):
                continue
            pieces: dict[str, list] = {t: [] for t in tables}
            for job in bins[i]:
                def mark(kind, n=None, job=job, key=None):
                    _mark(marks, kind, job["user"], job["machine"], key or job["source_file"],
                          n)

                result = parse_transcript(job.get("real_file") or job["source_file"],
                                          job["size"], _state(job))
                if result is None:
                    mark("_unchanged")
                    continue
                plan, _, parsed = result
                if plan.reset:
                    mark("_reset")
                elif not plan.is_new and plan.errors_before:
                    mark("_clear_file_errors")  # the local writer's "line IS NULL" cleanup
                mark("_read", key=parsed["cc_files"].column("source_file")[0].as_py())
                for table, arrow in parsed.items():
                    if arrow.num_rows:
                        filled = {c: v for (t, c), v in fill.items() if t == table}
                        pieces[table].append((_conform(arrow, columns[table], filled),
                                              job["user"], job["machine"]))
                    if table == "ingest_errors" and "severity" in arrow.column_names:
                        mark("_warnings", arrow.column("severity").to_pylist().count(
                            "warning"))  # counted apart: a warning is not an error
            for table in tables:  # buffered by the writers, then row groups
                if pieces[table]:
                    _write(writers, table, columns[table], pieces[table])
    for table, values, relative, rows in writers.close():
        _mark(marks, "_file", values[0], values[1], relative, rows, table)
    if marks["kind"]:
        yield pa.RecordBatch.from_arrays([pa.array(marks[name], typ) for name, typ in HEAD],
                                         names=[name for name, _ in HEAD])
