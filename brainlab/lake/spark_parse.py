"""The Spark ingest's parse: few large tasks that hand back every raw table typed, in one pass.

``parse_jobs`` packs the files to read into bins of ~``BIN_BYTES``; task ``i`` of
``spark.range`` parses bin ``i`` with brainlab's own parser (:mod:`brainlab.lake.parse`) and
yields Arrow batches (``mapInArrow``) of ONE wide schema: ``kind, user, machine,
source_file, rows`` and one struct column per raw table, typed as the store types it
(:func:`struct_ddl`). A batch holds the rows of one table (its struct set, the others null)
or the bookkeeping marks (``_unchanged``, ``_reset``..., and ``_rows``: how many rows of a
table a partition received, so the run's tally reads marks only). A table's new rows are then
``table_rows``: a filter on ``kind`` and a select of its struct's fields, in the JVM; no
second trip through Python, no Arrow IPC bytes to decode.

The result is persisted (columnar, memory then disk): every table reads only its own struct
column and ``kind``, and the cached batches of other kinds are skipped by their ``kind``
statistics (a bin yields each table's rows together, so batches are nearly of one kind).
"""

from __future__ import annotations

import functools
import heapq

import pyarrow as pa

from brainlab.lake.spark_io import SPARK_TYPES

BIN_BYTES = 128 << 20  # input bytes per parse task: few large tasks, as many as cores at least
BATCH_ROWS = 32768  # rows per Arrow batch handed to the JVM
MARKS = ("_unchanged", "_reset", "_clear_file_errors", "_warnings",  # bookkeeping kinds
         "_rows")  # a table's rows in one partition: source_file holds the table's name
ARROW_TYPES = {"VARCHAR": pa.string(), "BIGINT": pa.int64(), "INTEGER": pa.int32(),
               "BOOLEAN": pa.bool_(), "DOUBLE": pa.float64(), "DATE": pa.date32(),
               "TIMESTAMP": pa.string()}  # ISO text: cast in the JVM as the lake always has
HEAD = (("kind", pa.string()), ("user", pa.string()), ("machine", pa.string()),
        ("source_file", pa.string()), ("rows", pa.int64()))


def struct_type(columns: list[tuple[str, str]]) -> pa.StructType:
    """A table's rows as one Arrow struct, each column typed as the store types it."""
    return pa.struct([(c, ARROW_TYPES.get(t, pa.string())) for c, t in columns])


def struct_ddl(tables: tuple[str, ...], columns: dict) -> str:
    """The Spark schema of the parse's output (the head columns, one struct per table)."""
    head = ", ".join(f"{name} {'bigint' if typ == pa.int64() else 'string'}"
                     for name, typ in HEAD)
    def fields(table):
        return ", ".join(f"`{c}`: {SPARK_TYPES.get(k, 'string')}" for c, k in columns[table])
    structs = ", ".join(f"`{t}` struct<{fields(t)}>" for t in tables)
    return f"{head}, {structs}"


def pack(jobs: list[dict], bins: int) -> list[list[dict]]:
    """Jobs into ``bins`` lists of near-equal bytes (largest first, each to the lightest)."""
    heap = [(0, i) for i in range(bins)]
    out: list[list[dict]] = [[] for _ in range(bins)]
    for job in sorted(jobs, key=lambda j: -j["size"]):
        load, i = heapq.heappop(heap)
        out[i].append(job)
        heapq.heappush(heap, (load + job["size"], i))
    return [b for b in out if b]


def parse_jobs(spark, jobs: list[dict], tables: tuple[str, ...], columns: dict):
    """Parse the jobs in few large tasks: one per bin of ~BIN_BYTES (at least one per core).

    The bins travel in a broadcast made on the driver, state included (each file's manifest
    row as the plan read it), so a recomputed partition (a lost cache block, a lost executor)
    parses the same bytes of the same files again: the lineage may stay, and the result is
    persisted rather than checkpointed. It is materialized by the caller's first action.
    """
    from pyspark import StorageLevel

    total = sum(j["size"] for j in jobs)
    n = min(len(jobs), max(spark.sparkContext.defaultParallelism, -(-total // BIN_BYTES)))
    bins = pack(jobs, max(n, 1))
    shared = spark.sparkContext.broadcast(bins)
    work = spark.range(0, max(len(bins), 1), 1, max(len(bins), 1))
    parse = functools.partial(_parse_bins, shared, tables, {t: columns[t] for t in tables})
    return work.mapInArrow(parse, struct_ddl(tables, columns)).persist(
        StorageLevel.MEMORY_AND_DISK)


def table_rows(parsed, table: str, columns: list[tuple[str, str]]):
    """``table``'s new rows from the parse, typed as the store types them, with partitions."""
    from pyspark.sql import functions as F

    typed = [F.expr(f"try_cast(`{table}`.`{c}` AS TIMESTAMP_NTZ)").alias(c) if t == "TIMESTAMP"
             else F.col(f"`{table}`.`{c}`").alias(c) for c, t in columns]
    cores = parsed.sparkSession.sparkContext.defaultParallelism
    return (parsed.filter(F.col("kind") == table).select(*typed, "user", "machine")
            .coalesce(max(cores, 1)))  # one writer per core and partition, not per bin


def _state(job: dict) -> tuple | None:
    """The manifest row of a job as :func:`brainlab.lake.parse.parse_transcript` reads it."""
    if job.get("bytes_done") is None:
        return None
    return (job["source_file"], job["bytes_done"], job["lines_done"], job["pending_bytes"],
            job["head_sha256"], job["runs"], job["rows_loaded"], job["errors"],
            job.get("tail_sha256"), job.get("mtime_ns"))


def _conform(arrow: pa.Table, columns: list[tuple[str, str]]) -> list[pa.ChunkedArray]:
    """``arrow``'s columns in the store's order and types (a missing column: nulls)."""
    out = []
    for name, typ in columns:
        target = ARROW_TYPES.get(typ, pa.string())
        if name in arrow.column_names:
            col = arrow.column(name)
            out.append(col if col.type == target else col.cast(target))
        else:
            out.append(pa.chunked_array([pa.nulls(arrow.num_rows, target)], target))
    return out


def _batches(kind: str, pieces: list, tables: tuple[str, ...], schema: pa.Schema):
    """One table's rows of a bin as output batches: its struct set, the other structs null.

    ``pieces``: (Arrow columns in store order, user, machine) per file.
    """
    fields = list(schema.field(kind).type) if kind in tables else []
    n = sum(len(cols[0]) if cols else 0 for cols, _, _ in pieces)
    users = pa.chunked_array([pa.repeat(u, len(c[0])) for c, u, _ in pieces], pa.string())
    machines = pa.chunked_array([pa.repeat(m, len(c[0])) for c, _, m in pieces], pa.string())
    values = [pa.chunked_array([c for cols, _, _ in pieces for c in cols[i].chunks],
                               f.type).combine_chunks() for i, f in enumerate(fields)]
    struct = pa.StructArray.from_arrays(values, fields=fields)
    users, machines = users.combine_chunks(), machines.combine_chunks()
    for start in range(0, n, BATCH_ROWS):
        size = min(BATCH_ROWS, n - start)
        arrays = [pa.repeat(kind, size), users.slice(start, size), machines.slice(start, size),
                  pa.nulls(size, pa.string()), pa.nulls(size, pa.int64())]
        arrays += [struct.slice(start, size) if t == kind
                   else pa.nulls(size, schema.field(t).type) for t in tables]
        yield pa.RecordBatch.from_arrays(arrays, schema=schema)


def _mark(marks: dict, kind: str, user: str, machine: str, source_file: str,
          rows: int | None) -> None:
    """Add one bookkeeping row (the HEAD columns) to ``marks``."""
    for key, value in zip(("kind", "user", "machine", "source_file", "rows"),
                          (kind, user, machine, source_file, rows), strict=True):
        marks[key].append(value)


def _parse_bins(shared, tables: tuple[str, ...], columns: dict, batches):
    """Executor side: parse each file of its bins; yield each table's rows, then the marks."""
    from brainlab.lake.parse import parse_transcript

    schema = pa.schema([*HEAD, *((t, struct_type(columns[t])) for t in tables)])
    bins = shared.value
    for batch in batches:
        for i in batch.column("id").to_pylist():
            if i >= len(bins):
                continue
            marks = {"kind": [], "user": [], "machine": [], "source_file": [], "rows": []}
            pieces: dict[str, list] = {t: [] for t in tables}
            for job in bins[i]:
                def mark(kind, n=None, job=job, marks=marks):
                    _mark(marks, kind, job["user"], job["machine"], job["source_file"], n)

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
                for table, arrow in parsed.items():
                    if arrow.num_rows:
                        pieces[table].append((_conform(arrow, columns[table]), job["user"],
                                              job["machine"]))
                    if table == "ingest_errors" and "severity" in arrow.column_names:
                        mark("_warnings", arrow.column("severity").to_pylist().count(
                            "warning"))  # counted apart: a warning is not an error
            for table in tables:  # each table's rows together: cached batches of one kind
                if pieces[table]:
                    yield from _batches(table, pieces[table], tables, schema)
                    counts: dict[tuple, int] = {}
                    for cols, user, machine in pieces[table]:
                        counts[user, machine] = counts.get((user, machine), 0) + len(cols[0])
                    for (user, machine), n in counts.items():  # the tally reads marks only
                        _mark(marks, "_rows", user, machine, table, n)
            if marks["kind"]:
                n = len(marks["kind"])
                yield pa.RecordBatch.from_arrays(
                    [pa.array(marks[name], typ) for name, typ in HEAD]
                    + [pa.nulls(n, schema.field(t).type) for t in tables], schema=schema)
