"""Spark I/O on the lake: read a table with the store's column types, test and delete paths.

:func:`read_arrow` reads a table's few columns with pyarrow instead, for what the driver
decides before Spark starts (a run with nothing new starts no JVM).

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
    return typed(spark.read.option("basePath", uri).parquet(uri), table, columns)


def typed(df, table: str, columns: dict):
    """``df`` (a table's files) with the store's columns and types, then its partitions."""
    from pyspark.sql import functions as F

    cols = [F.col(c).cast("timestamp_ntz" if t == "TIMESTAMP" else SPARK_TYPES.get(t, "string"))
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


def read_arrow(lake: str, table: str, columns: dict, names: list[str], where=None) -> list[dict]:
    """``names`` of the lake's ``table`` as dicts, read with pyarrow (no JVM); [] if no files.

    pyarrow reads every lake the parse tasks write (:func:`staging.check_scheme`), hive folders
    decoded as Spark names them; ``where``: a ``pyarrow.dataset`` filter expression.
    """
    import pyarrow as pa
    import pyarrow.dataset as ds

    from brainlab.errors import LakeError
    from brainlab.lake.spark_parse import ARROW_TYPES
    from brainlab.lake.staging import arrow_filesystem, exists

    uri = layout.table_uri(lake, table)
    fs, path = arrow_filesystem(uri)
    if not exists(fs, path):
        return []
    parts = pa.schema([(p, pa.string()) for p in layout.partitions(table)])
    types = dict(columns[table])
    schema = pa.schema([(c, ARROW_TYPES.get(types[c], pa.string())) for c in names
                        if c not in parts.names] + list(parts))
    try:
        data = ds.dataset(path, schema=schema, format="parquet", filesystem=fs,
                          partitioning=ds.partitioning(parts, flavor="hive"))
        return data.to_table(columns=names, filter=where).to_pylist()
    except (OSError, pa.ArrowException) as exc:  # no access, a damaged file
        raise LakeError(f"the lake's {table} at {uri} cannot be read ({type(exc).__name__}:"
                        f" {exc})") from exc
