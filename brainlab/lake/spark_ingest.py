"""``brainlab spark ingest-claude``: transcripts of many users and machines into the lake, on Spark.

The driver lists the files (``<root>/<user>/<machine>/projects/...``) and joins them with the
lake's manifest (``cc_files``: path, size, head hash, offsets); executors plan and parse each
file with brainlab's own parser (:mod:`brainlab.lake.parse`) and hand back Arrow tables; the
touched ``user/machine`` partitions of each raw table are rewritten (old rows of re-read files
dropped, new rows added); then the SPEC §7 deduplication runs across the whole lake and the
usage roll-ups are rewritten (:mod:`brainlab.lake.rollups`). pyspark is imported lazily.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import time
from dataclasses import dataclass, field

import pyarrow as pa

from brainlab.errors import LakeError
from brainlab.lake import layout, rollups
from brainlab.lake.refused import write_refused
from brainlab.lake.spark_io import SPARK_TYPES, delete_path, path_exists, read_table
from brainlab.transcripts import broker as claude_broker

TRANSCRIPT_TABLES = ("cc_request_lines", "cc_tool_call_lines", "cc_tool_results",
                     "cc_agent_links", "cc_compactions", "cc_spans",
                     "cc_marks") + claude_broker.TABLES
WRITTEN = TRANSCRIPT_TABLES + ("ingest_errors", "ingest_files", "cc_files")  # manifest last
PAYLOAD = ("kind string, source_file string, user string, machine string, rows long,"
           " payload binary")
@dataclass
class LakeSummary:
    """What one Spark run did: files read / unchanged / reset / gone / removed, rows, errors."""

    files: int = 0
    read: int = 0
    unchanged: int = 0
    reset: int = 0
    removed: int = 0  # gone files whose rows ``prune`` removed
    gone: int = 0  # files of the manifest no longer on disk: their rows kept (issue 24)
    rows: dict[str, int] = field(default_factory=dict)
    errors: int = 0  # ingest_errors rows of severity error (input not loaded)
    warnings: int = 0  # and of severity warning (loaded, flagged)
    rollups: list[str] = field(default_factory=list)
    refused: list[layout.Refused] = field(default_factory=list)  # issue 29: error rows
    seconds: dict[str, float] = field(default_factory=dict)  # wall per phase (the benchmark's)


def spark_session(master: str | None = "local[2]", conf: dict | None = None):
    """A SparkSession set up for the lake (UTC, dynamic partition overwrite, no UI)."""
    _quiet_pandas_warning()
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise LakeError("Spark is not installed: pip install 'brainlab[spark]' (and a Java 17"
                        " runtime, e.g. apt-get install openjdk-17-jre-headless)") from None
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName("brainlab-lake")
    if master:
        builder = builder.master(master)
    settings = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
                "spark.sql.session.timeZone": "UTC",
                "spark.sql.sources.partitionOverwriteMode": "dynamic",
                "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
                "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
                "spark.sql.execution.arrow.pyspark.enabled": "true"}
    if (master or "").startswith("local"):  # few cores: few shuffle tasks
        settings["spark.sql.shuffle.partitions"] = "4"
    settings.update(conf or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        return builder.getOrCreate()
    except Exception as exc:  # no Java runtime: py4j cannot start the gateway
        raise LakeError(f"Spark could not start ({type(exc).__name__}: {exc}); is a Java 17"
                        " runtime installed (openjdk-17-jre-headless)?") from exc


# pyspark 4.x warns on every import under pandas 3 (in the driver and in each Python worker);
# the lake's Arrow path (mapInArrow, no pandas UDF) does not use what it warns about.
# docs/lake.md says so once, instead of every run.
_PANDAS_WARNING = "PySpark does not yet fully support pandas >= 3.0.0"


def _quiet_pandas_warning() -> None:
    """Filter pyspark's pandas-3 FutureWarning here and in the workers Spark starts."""
    import warnings

    warnings.filterwarnings("ignore", message=re.escape(_PANDAS_WARNING), category=FutureWarning)
    rule = f"ignore:{_PANDAS_WARNING}:FutureWarning"
    current = os.environ.get("PYTHONWARNINGS", "")
    if rule not in current:  # workers inherit the environment of the JVM, started after this
        os.environ["PYTHONWARNINGS"] = f"{current},{rule}" if current else rule


def ingest_claude_spark(spark, root, lake, user: str | None = None, machine: str | None = None,
                        prices=None, prune: bool = False) -> LakeSummary:
    """Ingest the transcripts under ``root`` into ``lake`` (only what is new since the last run).

    Files of the lake's manifest gone from ``root`` keep their rows, as in a local store
    (Claude Code deletes old transcripts); ``prune`` removes them.
    """
    from pyspark.sql import functions as F

    from brainlab.sources.redact import stored_path  # the manifest's key (issue 29)
    from brainlab.transcripts.ingest import load_prices

    clock = time.perf_counter()
    lake = layout.normalize(lake)
    refused: list[layout.Refused] = []
    files = layout.discover_team(root, user, machine, refused)
    summary = LakeSummary(files=len(files), refused=refused)
    columns = layout.store_columns()
    price_rows, _ = load_prices(prices)
    jobs, unchanged, gone = plan_jobs(spark, lake, root, files, columns)
    summary.gone = len(gone)
    removed = gone if prune else []
    if not jobs and not removed and not refused and prices is None \
            and path_exists(spark, layout.table_uri(lake, layout.ROLLUPS[0])):
        summary.unchanged = unchanged  # decided on the driver: no Python worker, no write
        summary.seconds["plan+parse"] = time.perf_counter() - clock
        return summary
    parsed = parse_jobs(spark, jobs)
    new_lines = None  # this run's new cc_request_lines rows: the days the dedup re-ranks
    try:
        # one job: parses every file (cached) and says what each partition received
        tally = parsed.groupBy("kind", "user", "machine").agg(F.sum("rows").alias("rows"),
                                                               F.count("*").alias("n")).collect()
        counts: dict[str, int] = {}
        rows: dict[str, int] = {}
        touched = {(r["user"], r["machine"]) for r in removed}
        for r in tally:
            counts[r["kind"]] = counts.get(r["kind"], 0) + r["n"]
            rows[r["kind"]] = rows.get(r["kind"], 0) + (r["rows"] or 0)
            if r["kind"] != "_unchanged":
                touched.add((r["user"], r["machine"]))
        summary.unchanged = unchanged + counts.get("_unchanged", 0)
        summary.read = counts.get("cc_files", 0)
        summary.reset = counts.get("_reset", 0)
        summary.removed = len(removed)
        summary.warnings = rows.get("_warnings", 0)
        summary.errors = rows.get("ingest_errors", 0) - summary.warnings + len(refused)
        summary.seconds["plan+parse"] = time.perf_counter() - clock
        if touched:
            drop_all = None
            if summary.reset or removed:
                drop_all = F.broadcast(
                    parsed.filter(F.col("kind") == "_reset").select("source_file")
                    .union(spark.createDataFrame([(r["source_file"],) for r in removed],
                                                 "source_file string")))
            replaced = F.broadcast(parsed.filter(F.col("kind") == "cc_files")
                                   .select("source_file"))
            cleared = None
            if counts.get("_clear_file_errors"):
                cleared = F.broadcast(parsed.filter(F.col("kind") == "_clear_file_errors")
                                      .select("source_file"))
            for table in WRITTEN:
                drops = {"all": drop_all,
                         "file": replaced if table in ("cc_files", "ingest_files") else None,
                         "null_line": cleared if table == "ingest_errors" else None}
                summary.rows[table] = rows.get(table, 0)
                if not rows.get(table) and all(drops[k] is None for k in ("all", "null_line")):
                    continue  # nothing new and nothing to drop: the table is untouched
                new = _decode(parsed, table, columns[table])
                if table == "cc_request_lines" and rows.get(table):
                    new = new_lines = new.localCheckpoint(eager=True)  # the dedup reads it too
                _write_table(spark, lake, table, columns[table], new, rows.get(table, 0),
                             touched, drops)
        write_refused(spark, lake, stored_path(layout.normalize(root)) + os.sep, refused,
                      columns["ingest_errors"])  # issue 29: refused paths are error rows
        write_prices(spark, lake, price_rows, columns["cc_prices"])
        summary.seconds["write"] = time.perf_counter() - clock - summary.seconds["plan+parse"]
        if (touched or prices is not None
                or not path_exists(spark, layout.table_uri(lake, layout.ROLLUPS[0]))):
            summary.rollups = rollups.write_rollups(
                spark, lake, columns, new_lines,  # rows gone or prices changed: re-rank all
                full=bool(summary.reset or removed or prices is not None))
        summary.seconds["rollups"] = time.perf_counter() - clock - sum(summary.seconds.values())
    finally:
        parsed.unpersist()
    return summary


STATE = ("source_file", "bytes_done", "lines_done", "pending_bytes", "head_sha256", "runs",
         "rows_loaded", "errors", "tail_sha256", "mtime_ns")  # a manifest row, as plan_file reads it
BIN_BYTES = 128 << 20  # input bytes per parse task: few large tasks, as many as cores at least


def plan_jobs(spark, lake: str, root, files: list, columns: dict):
    """On the driver: (jobs to parse, unchanged count, gone manifest rows).

    The manifest's few columns are read once and joined in memory with the listing; each
    listed file is planned as the local ingest plans it (size, mtime, head hash), so an
    unchanged file costs no Python worker and no read beyond its head.
    """
    from brainlab.lake.parse import is_unchanged
    from brainlab.sources.redact import stored_path  # the manifest's key (issue 29)

    manifest = read_table(spark, lake, "cc_files", columns)
    states: dict[str, tuple] = {}
    gone = []
    prefix = stored_path(layout.normalize(root)) + os.sep
    listed = {stored_path(f.path): f for f in files}
    if manifest is not None:
        for r in manifest.select(*STATE, "user", "machine").collect():
            states[r["source_file"]] = tuple(r[c] for c in STATE)
            if r["source_file"] not in listed and r["source_file"].startswith(prefix):
                gone.append({"source_file": r["source_file"], "user": r["user"],
                             "machine": r["machine"]})
    jobs, unchanged = [], 0
    for key, f in listed.items():
        state = states.get(key)
        if state is not None and is_unchanged(f.path, state):
            unchanged += 1
            continue
        job = dict(zip(STATE, state or (key,) + (None,) * (len(STATE) - 1), strict=True))
        job.update(real_file=f.path, user=f.user, machine=f.machine, size=f.size)
        jobs.append(job)
    return jobs, unchanged, gone


def pack(jobs: list[dict], bins: int) -> list[list[dict]]:
    """Jobs into ``bins`` lists of near-equal bytes (largest first, each to the lightest)."""
    import heapq

    heap = [(0, i) for i in range(bins)]
    out: list[list[dict]] = [[] for _ in range(bins)]
    for job in sorted(jobs, key=lambda j: -j["size"]):
        load, i = heapq.heappop(heap)
        out[i].append(job)
        heapq.heappush(heap, (load + job["size"], i))
    return [b for b in out if b]


def parse_jobs(spark, jobs: list[dict]):
    """Parse the jobs in few large tasks: one per bin of ~BIN_BYTES (at least one per core).

    The bins travel in a broadcast; task ``i`` of ``spark.range`` parses bin ``i`` and hands
    back Arrow batches (``mapInArrow``): no per-file task, no per-file round trip. The result
    is checkpointed: a recomputed parse would read the manifest this run has already
    rewritten and see nothing new (the lineage must end here).
    """
    total = sum(j["size"] for j in jobs)
    n = min(len(jobs), max(spark.sparkContext.defaultParallelism, -(-total // BIN_BYTES)))
    bins = pack(jobs, max(n, 1))
    shared = spark.sparkContext.broadcast(bins)
    work = spark.range(0, max(len(bins), 1), 1, max(len(bins), 1))
    return work.mapInArrow(functools.partial(_parse_bins, shared), PAYLOAD).localCheckpoint(
        eager=True)


def write_prices(spark, lake: str, rows: list[dict], columns: list[tuple[str, str]]) -> None:
    """Replace the team-wide price table (the package's prices, or the file given)."""
    schema = ", ".join(f"{c} {SPARK_TYPES[t]}" for c, t in columns)
    data = [tuple(row.get(c) for c, _ in columns) for row in rows]
    (spark.createDataFrame(data, schema).coalesce(1).write.mode("overwrite")
     .parquet(layout.table_uri(lake, "cc_prices")))


def _parse_bins(shared, batches):
    """Executor side: plan and parse each file of its bins; yield payload rows (Arrow IPC)."""
    from brainlab.lake.parse import parse_transcript

    bins = shared.value
    for batch in batches:
        for row in (job for i in batch.column("id").to_pylist()
                    if i < len(bins) for job in bins[i]):
            state = None
            if row.get("bytes_done") is not None:
                state = (row["source_file"], row["bytes_done"], row["lines_done"],
                         row["pending_bytes"], row["head_sha256"], row["runs"],
                         row["rows_loaded"], row["errors"], row.get("tail_sha256"),
                         row.get("mtime_ns"))
            out = {"kind": [], "source_file": [], "user": [], "machine": [], "rows": [],
                   "payload": []}

            def emit(kind, payload=b"", n=0, row=row, out=out):
                out["kind"].append(kind)
                out["rows"].append(n)
                out["source_file"].append(row["source_file"])
                out["user"].append(row["user"])
                out["machine"].append(row["machine"])
                out["payload"].append(payload)

            result = parse_transcript(row.get("real_file") or row["source_file"], row["size"],
                                      state)
            if result is None:
                emit("_unchanged")
            else:
                job, read, tables = result
                if job.reset:
                    emit("_reset")
                elif not job.is_new and job.errors_before:
                    emit("_clear_file_errors")  # the local writer's "line IS NULL" cleanup
                for table, arrow in tables.items():
                    emit(table, _ipc(arrow), arrow.num_rows)
                    if table == "ingest_errors" and "severity" in arrow.column_names:
                        emit("_warnings", n=arrow.column("severity").to_pylist().count(
                            "warning"))  # counted apart: a warning is not an error
            yield pa.RecordBatch.from_pydict(out, schema=pa.schema([
                ("kind", pa.string()), ("source_file", pa.string()), ("user", pa.string()),
                ("machine", pa.string()), ("rows", pa.int64()), ("payload", pa.binary())]))


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _decode(parsed, table: str, columns: list[tuple[str, str]]):
    """One table's new rows from the payloads, typed as the store types them, with partitions."""
    from pyspark.sql import functions as F

    names = [c for c, _ in columns]
    arrow_schema = ", ".join(f"`{c}` {SPARK_TYPES[t]}" for c, t in columns)

    def decode(batches):
        for batch in batches:
            for row in batch.to_pylist():
                t = pa.ipc.open_stream(row["payload"]).read_all()
                data = {}
                for name, typ in columns:
                    col = t.column(name) if name in t.column_names else pa.nulls(t.num_rows)
                    target = {"BIGINT": pa.int64(), "INTEGER": pa.int32(),
                              "BOOLEAN": pa.bool_(), "DOUBLE": pa.float64()}.get(typ, pa.string())
                    data[name] = col.cast(target)
                data["user"] = pa.array([row["user"]] * t.num_rows, pa.string())
                data["machine"] = pa.array([row["machine"]] * t.num_rows, pa.string())
                yield from pa.table(data).to_batches()

    decoded = (parsed.filter(F.col("kind") == table)
               .mapInArrow(decode, arrow_schema + ", user string, machine string"))
    typed = [F.expr(f"try_cast(`{c}` AS TIMESTAMP_NTZ)").alias(c) if t == "TIMESTAMP"
             else F.col(c) for c, t in columns]
    return decoded.select(*typed, "user", "machine").select(*names, "user", "machine")


def _write_table(spark, lake: str, table: str, columns, new, new_rows: int, touched: set,
                 drops: dict) -> None:
    """Write ``table``'s new rows: appended, or its touched partitions rewritten.

    Appended when no old row goes (new files, new tails); else the touched partitions are
    rewritten from the kept old rows and the new rows (dynamic partition overwrite).
    """
    from pyspark.sql import functions as F

    uri = layout.table_uri(lake, table)
    parts = layout.partitions(table)
    rewrite = any(d is not None for d in drops.values())
    old = read_table(spark, lake, table, {table: columns}) if rewrite else None
    if old is None:  # first write, or only new rows: append them (the usual incremental run)
        if new_rows:
            new.write.mode("append").partitionBy(*parts).parquet(uri)
        return
    key = "file" if table in ("ingest_errors", "ingest_files") else "source_file"
    cond = None
    for u, m in touched:
        c = (F.col("user") == u) & (F.col("machine") == m)
        cond = c if cond is None else cond | c
    old = old.filter(cond)
    if "source" in parts:  # only the transcripts' rows are ours; exported brain rows stay
        other, old = old.filter(F.col("source") != "claude"), old.filter(F.col("source") == "claude")
    for name in ("all", "file"):
        if drops[name] is not None:
            old = old.join(drops[name].withColumnRenamed("source_file", key), key, "left_anti")
    if drops["null_line"] is not None:
        gone = drops["null_line"].withColumnRenamed("source_file", key).withColumn(
            "_gone", F.lit(True))
        old = (old.join(gone, key, "left")
               .filter(F.col("_gone").isNull() | F.col("line").isNotNull()).drop("_gone"))
    if "source" in parts:
        old = old.unionByName(other)
    out = old.unionByName(new).localCheckpoint(eager=True)  # read fully before overwriting
    if drops["all"] is not None:  # a partition may be left empty: its old files must go
        kept = {(r["user"], r["machine"]) for r in out.select("user", "machine").distinct()
                .collect()}
        for u, m in touched - kept:
            delete_path(spark, f"{uri}/user={u}/machine={m}")
    out.write.mode("overwrite").partitionBy(*parts).parquet(uri)
