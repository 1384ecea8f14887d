"""Error rows in the lake for the folders and files a Spark run left out (issue 29, 27.3).

A user or machine folder whose name cannot be a partition (``bob smith``, 251 characters)
and a file the local discovery refuses (a FIFO, a link outside the tree, an unreadable file)
become ``ingest_errors`` rows (file, no line, reason ``skipped: ...``, source ``claude``,
severity ``error``), as a local ingest records them. A refused file's row goes to its own
user and machine; a refused folder's to ``user=_refused/machine=_refused`` (its name is not a
partition). Each run replaces the ``skipped:`` rows of the paths under its root, so a rerun
does not add them twice and a folder renamed since loses its old row; a run whose refused
paths are those the lake holds already rewrites nothing (:func:`stored_as_refused`, no JVM).
pyspark is imported lazily (inside the function).
"""

from __future__ import annotations

from brainlab.lake import layout
from brainlab.lake.driver_read import read_arrow
from brainlab.lake.spark_io import SPARK_TYPES, delete_path, read_table

TABLE = "ingest_errors"
SOURCE = "claude"


def stored_as_refused(lake: str, prefix: str, refused: list[layout.Refused],
                      columns: dict) -> bool:
    """True when the lake's ``skipped:`` rows under ``prefix`` are exactly this run's.

    :func:`write_refused` would then write the same rows again: read with pyarrow, so a run
    with nothing else to do starts no JVM.
    """
    import pyarrow.dataset as ds

    from brainlab.sources.redact import stored_path  # the form every stored path takes

    names = ["file", "line", "reason", "severity", "user", "machine"]
    rows = read_arrow(lake, TABLE, columns, names,
                      where=(ds.field("source") == SOURCE) & ds.field("line").is_null())
    old = sorted((r["file"], r["reason"], r["severity"], r["user"], r["machine"]) for r in rows
                 if r["reason"].startswith("skipped:") and r["file"].startswith(prefix))
    new = sorted((stored_path(r.path), r.reason, "error", r.user, r.machine) for r in refused)
    return old == new


def write_refused(spark, lake: str, prefix: str, refused: list[layout.Refused],
                  columns: list[tuple[str, str]]) -> int:
    """Replace the ``skipped:`` error rows under ``prefix`` by this run's; return rows written.

    Only the partitions holding old such rows or getting new ones are rewritten; a run with
    none of either reads one small table and writes nothing.
    """
    from pyspark.sql import functions as F

    from brainlab.sources.redact import stored_path  # the form every stored path takes

    uri = layout.table_uri(lake, TABLE)
    old = read_table(spark, lake, TABLE, {TABLE: columns})
    stale = None
    parts: set[tuple[str, str]] = {(r.user, r.machine) for r in refused}
    if old is not None:
        old = old.filter(F.col("source") == SOURCE)
        stale = (F.col("line").isNull() & F.col("reason").startswith("skipped:")
                 & F.col("file").startswith(prefix))
        parts |= {(r["user"], r["machine"]) for r in
                  old.filter(stale).select("user", "machine").distinct().collect()}
    if not parts:
        return 0
    rows = [(stored_path(r.path), None, r.reason, SOURCE, "error", r.user, r.machine)
            for r in refused]
    schema = ", ".join(f"`{c}` {SPARK_TYPES[t]}" for c, t in columns)
    new = spark.createDataFrame(rows, f"{schema}, user string, machine string")
    new = new.select(*[c for c, _ in columns], "user", "machine")
    out = new
    if old is not None:
        inside = None
        for user, machine in parts:
            cond = (F.col("user") == user) & (F.col("machine") == machine)
            inside = cond if inside is None else inside | cond
        kept = old.filter(inside & ~stale).select(*[c for c, _ in columns], "user", "machine")
        out = kept.unionByName(new)
    out = out.withColumn("source", F.lit(SOURCE)).localCheckpoint(eager=True)  # read first
    left = {(r["user"], r["machine"]) for r in out.select("user", "machine").distinct()
            .collect()}
    for user, machine in parts - left:  # a partition left empty: its old files must go
        folder = layout.partition_path(layout.partitions(TABLE), (user, machine, SOURCE))
        delete_path(spark, f"{uri}/{folder}")
    if left:
        (out.write.mode("overwrite").partitionBy(*layout.partitions(TABLE)).parquet(uri))
    return len(rows)
