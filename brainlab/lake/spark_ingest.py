"""``brainlab spark ingest-claude``: transcripts of many users and machines into the lake, on Spark.

The driver lists the files (``<root>/<user>/<machine>/projects/...``) and joins them with the
lake's manifest (``cc_files``: path, size, head hash, offsets); executors plan and parse each
file with brainlab's own parser (:mod:`brainlab.lake.parse`) and write every raw table's
Parquet themselves, with pyarrow, into the run's staging folder (:mod:`brainlab.lake.spark_parse`);
after that job the driver commits the files of the attempts Spark accepted
(:mod:`brainlab.lake.staging`): moved in as new rows, or the touched ``user/machine``
partitions of a table rewritten (old rows of re-read files dropped); then the SPEC §7
deduplication re-ranks the days the run touched and the usage roll-ups are updated
(:mod:`brainlab.lake.rollups`). pyspark is imported lazily.
"""

from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import dataclass, field

from brainlab.common.errors import LakeError
from brainlab.lake import layout, rollups, staging
from brainlab.lake.driver_read import read_arrow
from brainlab.lake.lock import locked
from brainlab.lake.refused import stored_as_refused, write_refused
from brainlab.lake.spark_io import SPARK_TYPES, path_exists, read_table, typed
from brainlab.lake.spark_parse import parse_jobs
from brainlab.transcripts import broker as claude_broker

TRANSCRIPT_TABLES = ("cc_request_lines", "cc_tool_call_lines", "cc_tool_results",
                     "cc_agent_links", "cc_compactions", "cc_spans",
                     "cc_marks") + claude_broker.TABLES
WRITTEN = TRANSCRIPT_TABLES + ("ingest_errors", "ingest_files", "cc_files")  # manifest last
# measured at 5 GB (docs/scale.md, section 1): a short batch job, most of its JIT work is
# never repaid: C1 only cut the JVM's compiler threads from 48 to 3.5 CPU-s for +6.5 in the
# tasks; partitioned writes without a sort first (one open writer per partition of a task,
# at most 16, then Spark sorts the rest); a 1 GB heap spent 15.6 CPU-s in GC, 3 GB 3.0.
# C1 only shrinks the JIT's code cache to 48 MB (the tiered default is 240 MB): Spark's
# generated classes fill it, and the sweeper then flushes code that C1 compiles again
# (the Spark tests' session JVM: sweeper 4.6 and C1 8.3 CPU-s -> 0.0 and 4.3; stop 26 of
# docs/testing.md); the cache is reserved, not committed, until code fills it
JIT = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
RUN_SETTINGS = {"spark.driver.extraJavaOptions": JIT, "spark.executor.extraJavaOptions": JIT,
                "spark.sql.optimizer.plannedWrite.enabled": "false",
                "spark.sql.maxConcurrentOutputFileWriters": "16",
                # 64 MB row groups: the open writers' buffers fit the heap (no "Scaling row
                # group sizes" warning); a run's files per partition are smaller anyway
                "spark.hadoop.parquet.block.size": str(64 << 20)}
LOCAL_HEAP = "3g"


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

    def lines(self) -> list[str]:
        """What the run did, as ``brainlab spark ingest-claude`` prints it."""
        from brainlab.common.plaintext import visible

        out = [f"claude {self.read} read, {self.unchanged} unchanged, {self.reset} reset,"
               f" {self.removed} removed, {self.errors} errors, {self.warnings} warnings;"
               f" {self.rows.get('cc_request_lines', 0)} request rows in touched partitions"]
        out += [visible(f"{refused.path}: {refused.reason}")  # a bad user folder: its files
                for refused in self.refused]
        if self.gone > self.removed:
            out.append(f"{self.gone} file(s) gone from ROOT, their rows kept (--prune removes"
                       " them)")
        return out


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
    settings.update(_not_given(RUN_SETTINGS) if master is None else RUN_SETTINGS)
    if (master or "").startswith("local"):  # few cores: few shuffle tasks
        settings["spark.sql.shuffle.partitions"] = "4"
        settings["spark.driver.memory"] = LOCAL_HEAP  # the driver is the executor
    settings.update(conf or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        return builder.getOrCreate()
    except Exception as exc:  # no Java runtime: py4j cannot start the gateway
        raise LakeError(f"Spark could not start ({type(exc).__name__}: {exc}); is a Java 17"
                        " runtime installed (openjdk-17-jre-headless)?") from exc


def _not_given(settings: dict) -> dict:
    """Under ``spark-submit`` (no master given), the settings its options did not set."""
    from pyspark import SparkConf

    given = SparkConf()  # spark-submit's --conf options, from the JVM it started
    return {k: v for k, v in settings.items() if not given.contains(k)}


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
    (Claude Code deletes old transcripts); ``prune`` removes them. ``spark`` is a SparkSession
    or a function making one, called only when the run has work: the plan reads the manifest
    with pyarrow, so a run with nothing new starts no JVM (~1 s instead of ~10).
    """
    lake = layout.check_lake(layout.normalize(lake))
    staging.check_scheme(lake)  # the parse tasks write with pyarrow: refuse what it cannot
    if layout.is_remote(lake):  # no lock on an object store: runs serialised by their scheduler
        return _ingest(spark, root, lake, user, machine, prices, prune)
    with locked(lake, 0.0, "Spark run"):  # before anything is written (issue 47 item 7)
        return _ingest(spark, root, lake, user, machine, prices, prune)


def _ingest(spark, root, lake: str, user, machine, prices, prune) -> LakeSummary:
    """:func:`ingest_claude_spark` once the lake is checked and locked."""
    from brainlab.sources.redact import stored_path  # the manifest's key (issue 29)
    from brainlab.transcripts.ingest import load_prices

    clock = time.perf_counter()
    staging.undo_unfinished(lake)  # a failed run's files and partitions: before the plan
    refused: list[layout.Refused] = []
    files = layout.discover_team(root, user, machine, refused)
    summary = LakeSummary(files=len(files), refused=refused)
    columns = layout.store_columns()
    price_rows, _ = load_prices(prices)
    jobs, unchanged, gone = plan_jobs(lake, root, files, columns)
    summary.gone = len(gone)
    removed = gone if prune else []
    rollup = staging.arrow_filesystem(layout.table_uri(lake, layout.ROLLUPS[0]))
    prefix = stored_path(layout.normalize(root)) + os.sep
    if not jobs and not removed and prices is None and staging.exists(*rollup) and (
            not refused or stored_as_refused(lake, prefix, refused, columns)) and not (
            rollups.pending(lake)):
        summary.unchanged = unchanged  # decided on the driver: no JVM, no write
        summary.errors = len(refused)  # their rows already in the lake, as this run's
        summary.seconds["plan+parse"] = time.perf_counter() - clock
        return summary
    if not hasattr(spark, "sparkContext"):  # a function making the session: work to do
        spark = spark()
    run = staging.new_run(lake)
    try:
        return _commit(spark, lake, run, jobs, removed, refused, unchanged, prefix, columns,
                       price_rows, prices, summary, clock)
    except BaseException:  # the files this run moved in go with its staging: none is left
        staging.undo_unfinished(lake)
        raise


def _commit(spark, lake, run, jobs, removed, refused, unchanged, prefix, columns, price_rows,
            prices, summary, clock) -> LakeSummary:
    """Parse into ``run``'s staging, commit every raw table, then the roll-ups."""
    from pyspark.sql import functions as F

    stale = rollups.pending(lake)  # a former run failed before its roll-ups were written

    # the one job: the tasks parse and write the staged files; the marks of the attempts
    # Spark accepted come back (a failed or duplicate attempt's files are never named)
    version, new_prices = price_version(lake, price_rows, columns)
    fill = {("cc_request_lines", VERSION): version}  # the prices in force at this run
    marks = parse_jobs(spark, jobs, WRITTEN, columns, run, fill).collect() if jobs else []
    tally = Tally.of(marks, removed)
    summary.unchanged = unchanged + tally.counts.get("_unchanged", 0)
    summary.read = len(tally.read)
    summary.reset = len(tally.reset)
    summary.removed = len(removed)
    summary.warnings = tally.rows.get("_warnings", 0)
    summary.errors = tally.rows.get("ingest_errors", 0) - summary.warnings + len(refused)
    summary.seconds["plan+parse"] = time.perf_counter() - clock
    new_lines = None  # this run's new cc_request_lines rows: the days the dedup re-ranks
    if tally.touched:
        def keys(names):
            return F.broadcast(spark.createDataFrame([(n,) for n in names],
                                                     "source_file string"))

        drop_all = keys(tally.reset + [r["source_file"] for r in removed]) \
            if tally.reset or removed else None
        replaced = keys(tally.read)
        cleared = keys(tally.cleared) if tally.cleared else None
        rewrites: list[tuple[str, set]] = []  # tables whose partitions were staged whole
        for table in WRITTEN:
            drops = {"all": drop_all,
                     "file": replaced if table in ("cc_files", "ingest_files") else None,
                     "null_line": cleared if table == "ingest_errors" else None}
            summary.rows[table] = tally.rows.get(table, 0)
            if not tally.rows.get(table) and all(drops[k] is None for k in ("all", "null_line")):
                continue  # nothing new and nothing to drop: the table is untouched
            moved = _write_table(spark, lake, table, columns, run, tally.files.get(table, []),
                                 tally.touched, drops, rewrites)
            if table == "cc_request_lines" and moved:  # appended: the dedup reads them
                uri = layout.table_uri(lake, table)
                new_lines = typed(spark.read.option("basePath", uri).parquet(*moved), table,
                                  columns)
        staging.publish(spark, lake, run, rewrites)  # every raw table's partitions at once
    write_refused(spark, lake, prefix, refused, columns["ingest_errors"])  # issue 29: rows
    write_prices(spark, lake, price_rows, columns["cc_prices"], version, new_prices)
    redo = (tally.touched or prices is not None or stale
            or not path_exists(spark, layout.table_uri(lake, layout.ROLLUPS[0])))
    if redo:
        rollups.mark_pending(lake, True)  # until they are written: a failure there is redone
    staging.clear(spark, lake)  # committed: the staged files are in their tables
    summary.seconds["write"] = time.perf_counter() - clock - summary.seconds["plan+parse"]
    if redo:
        summary.rollups = rollups.write_rollups(
            spark, lake, columns, new_lines,  # rows gone or prices changed: re-rank all
            full=bool(summary.reset or removed or prices is not None or stale))
        rollups.mark_pending(lake, False)
    summary.seconds["rollups"] = time.perf_counter() - clock - sum(summary.seconds.values())
    return summary


@dataclass
class Tally:
    """The parse's marks, summed on the driver: what each table and partition received."""

    counts: dict[str, int] = field(default_factory=dict)  # marks of each kind
    rows: dict[str, int] = field(default_factory=dict)  # a table's rows; "_warnings"
    files: dict[str, list[str]] = field(default_factory=dict)  # a table's staged files
    read: list[str] = field(default_factory=list)  # cc_files keys of the files read
    reset: list[str] = field(default_factory=list)  # files read again from the start
    cleared: list[str] = field(default_factory=list)  # files whose line-less errors go
    touched: set[tuple[str, str]] = field(default_factory=set)  # (user, machine)

    @classmethod
    def of(cls, marks: list, removed: list[dict]) -> Tally:
        """Sum the collected marks; ``removed``: manifest rows of the files pruned."""
        out = cls(touched={(r["user"], r["machine"]) for r in removed})
        lists = {"_read": out.read, "_reset": out.reset, "_clear_file_errors": out.cleared}
        for m in marks:
            kind = m["kind"]
            out.counts[kind] = out.counts.get(kind, 0) + 1
            if kind == "_file":
                out.rows[m["table"]] = out.rows.get(m["table"], 0) + m["rows"]
                out.files.setdefault(m["table"], []).append(m["source_file"])
            elif kind == "_warnings":
                out.rows[kind] = out.rows.get(kind, 0) + (m["rows"] or 0)
            elif kind in lists:
                lists[kind].append(m["source_file"])
            if kind != "_unchanged":
                out.touched.add((m["user"], m["machine"]))
        return out


STATE = ("source_file", "bytes_done", "lines_done", "pending_bytes", "head_sha256", "runs",
         "rows_loaded", "errors", "tail_sha256", "mtime_ns")  # a manifest row, as plan_file reads it


def plan_jobs(lake: str, root, files: list, columns: dict):
    """On the driver: (jobs to parse, unchanged count, gone manifest rows).

    The manifest's few columns are read once (with pyarrow: no JVM) and joined in
    memory with the listing; each listed file is planned as the local ingest plans it (size,
    mtime, head hash), so an unchanged file costs no Python worker and no read beyond its head.
    """
    from brainlab.lake.parse import is_unchanged
    from brainlab.sources.redact import stored_path  # the manifest's key (issue 29)

    states: dict[str, tuple] = {}
    gone = []
    prefix = stored_path(layout.normalize(root)) + os.sep
    listed = {stored_path(f.path): f for f in files}
    for r in read_arrow(lake, "cc_files", columns, [*STATE, "user", "machine"]):
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


VERSION = "price_version"


def price_version(lake: str, rows: list[dict], columns: dict) -> tuple[int, bool]:
    """(the price table version this run's lines are priced with, whether it is new).

    As a local store keeps it (:func:`brainlab.store.prices.write_prices`, issue 45): the
    lake's latest version when its rows are this run's prices, else the next one. Read on
    the driver with pyarrow; a lake written before versions (rows without one) starts at 1.
    """
    names = [c for c, _ in columns["cc_prices"]]
    stored = read_arrow(lake, "cc_prices", columns, names)
    versions = [r[VERSION] for r in stored if r[VERSION] is not None]
    latest = max(versions) if versions else None
    if latest is None:
        return 1, True

    def key(row: dict) -> tuple:
        return tuple((row.get(n) is None, str(row.get(n))) for n in names if n != VERSION)

    kept = sorted(key(r) for r in stored if r[VERSION] == latest)
    return (latest, False) if kept == sorted(key(r) for r in rows) else (latest + 1, True)


def write_prices(spark, lake: str, rows: list[dict], columns: list[tuple[str, str]],
                 version: int = 1, new: bool = True) -> None:
    """Add this run's price table as version ``version`` to the team-wide ones, when ``new``.

    Earlier versions stay: the lines name the version in force at their run (issue 45); a
    lake written before versions has its unversioned rows replaced by version 1.
    """
    if not new:
        return
    from pyspark.sql import functions as F

    schema = ", ".join(f"{c} {SPARK_TYPES[t]}" for c, t in columns)
    data = [tuple(version if c == VERSION else row.get(c) for c, _ in columns) for row in rows]
    out = spark.createDataFrame(data, schema)
    old = read_table(spark, lake, "cc_prices", {"cc_prices": columns})
    if old is not None and version > 1:
        out = old.filter(F.col(VERSION).isNotNull()).unionByName(out)
    (out.localCheckpoint(eager=True).coalesce(1).write.mode("overwrite")  # read first
     .parquet(layout.table_uri(lake, "cc_prices")))


def _write_table(spark, lake: str, table: str, columns: dict, run: str, staged: list[str],
                 touched: set, drops: dict, rewrites: list) -> list[str]:
    """Commit ``table``'s staged files: moved in, or its touched partitions rewritten.

    Moved in when no old row goes (new files, new tails): the files' URIs in the table are
    returned. Else the touched partitions are written whole, from the kept old rows and the
    staged rows, into the run's staging (``<run>/_rewrite/<table>``) and ``(table, touched)``
    added to ``rewrites``: :func:`staging.publish` swaps them in with every other table's
    (issue 47 item 7: a failed run leaves the lake as it was); returns [].
    """
    from pyspark.sql import functions as F

    parts = layout.partitions(table)
    rewrite = any(d is not None for d in drops.values())
    old = read_table(spark, lake, table, columns) if rewrite else None
    if old is None:  # first write, or only new rows: move them in (the usual incremental run)
        return staging.commit_files(spark, lake, run, staged)
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
    out = old
    if staged:
        out = out.unionByName(typed(staging.read_staged(spark, run, table, staged), table,
                                    columns))
    # written beside the lake: a touched partition left without rows is staged as none,
    # so the publish removes it
    out.write.mode("overwrite").partitionBy(*parts).parquet(staging.rewrite_uri(run, table))
    rewrites.append((table, set(touched)))
    return []
