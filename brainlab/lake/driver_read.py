"""What the Spark ingest's driver reads of the lake without a JVM: a table's few columns.

With pyarrow, for what the driver decides before Spark starts (the manifest the plan joins,
the refused paths' rows): a run with nothing new starts no JVM. Apart from
:mod:`brainlab.lake.spark_io` so that the Spark modules' imports stay without a cycle (it
reads with :mod:`brainlab.lake.staging`'s filesystems and :mod:`brainlab.lake.spark_parse`'s
Arrow types, whose imports lead to ``spark_io``).
"""

from __future__ import annotations

from brainlab.lake import layout


def read_arrow(lake: str, table: str, columns: dict, names: list[str], where=None) -> list[dict]:
    """``names`` of the lake's ``table`` as dicts, read with pyarrow (no JVM); [] if no files.

    pyarrow reads every lake the parse tasks write (:func:`staging.check_scheme`), hive folders
    decoded as Spark names them; ``where``: a ``pyarrow.dataset`` filter expression.
    """
    import pyarrow as pa
    import pyarrow.dataset as ds

    from brainlab.common.errors import LakeError
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
