"""Spark I/O on the lake: read a table with the store's column types, test and delete paths.

The bottom of the lake's Spark modules: :mod:`brainlab.lake.spark_ingest` and
:mod:`brainlab.lake.rollups` both read through :func:`read_table`, so neither imports the
other for it. pyspark is imported lazily (inside the functions).
"""

from __future__ import annotations

from brainlab.lake import layout

# store column type -> Spark SQL type
SPARK_TYPES = {"VARCHAR": "string", "BIGINT": "bigint", "INTEGER": "int",
               "BOOLEAN": "boolean", "DOUBLE": "double", "TIMESTAMP": "string",
               "DATE": "date"}


def read_table(spark, lake: str, table: str, columns: dict):
    """The lake's ``table`` as a DataFrame (store columns + partitions), None if it has no files."""
    uri = layout.table_uri(lake, table)
    if not path_exists(spark, uri):
        return None
    # mergeSchema: a lake holds files written before a column was added (issue 45's usage
    # columns) beside newer ones; one file's schema would drop the newer columns' values
    try:
        df = spark.read.option("basePath", uri).option("mergeSchema", "true").parquet(uri)
    except Exception as exc:  # noqa: BLE001 - Spark's AnalysisException, a Py4J error
        from brainlab.common.errors import LakeError

        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise LakeError(f"Spark cannot read the lake's {table} at {uri} ({first}): a file at"
                        " the wrong folder depth, or not Parquet? `brainlab attach` names each"
                        " bad file; move it out of the lake and run again") from None
    return typed(df, table, columns)


def typed(df, table: str, columns: dict):
    """``df`` (a table's files) with the store's columns and types, then its partitions."""
    from pyspark.sql import functions as F

    have = set(df.columns)  # a column no file has (an older lake): NULL, as attach reads it
    cols = [(F.col(c) if c in have else F.lit(None))
            .cast("timestamp_ntz" if t == "TIMESTAMP" else SPARK_TYPES.get(t, "string"))
            .alias(c) for c, t in columns[table]]
    names = {c for c, _ in columns[table]}
    return df.select(*cols, *[F.col(p).cast("string") for p in layout.partitions(table)
                              if p not in names])


def hadoop_path(spark, uri: str):
    """The Hadoop Path of ``uri`` and the file system it lives on."""
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    return path, path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())


def path_exists(spark, uri: str) -> bool:
    """True when ``uri`` exists on its file system."""
    path, fs = hadoop_path(spark, uri)
    return bool(fs.exists(path))


def delete_path(spark, uri: str) -> None:
    """Delete ``uri`` recursively when it exists."""
    path, fs = hadoop_path(spark, uri)
    if fs.exists(path):
        fs.delete(path, True)
