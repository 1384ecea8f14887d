"""The Spark ingest types every raw table of the lake as the store types it (issue 27).

The parse's Python workers hand back each table as a typed struct (brainlab.lake.spark_parse);
the Parquet files Spark writes must hold the store's columns, in the store's order, with the
Parquet types of the store's DuckDB types (VARCHAR string, BIGINT int64, INTEGER int32, ...,
TIMESTAMP a timestamp in microseconds), whatever the parser's own Arrow types are.
"""

from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from brainlab.lake import layout
from tests.conftest import CORPUS

pyspark = pytest.importorskip("pyspark")
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("spark")]

PARQUET = {"VARCHAR": pa.string(), "BIGINT": pa.int64(), "INTEGER": pa.int32(),
           "BOOLEAN": pa.bool_(), "DOUBLE": pa.float64(), "TIMESTAMP": pa.timestamp("us"),
           "DATE": pa.date32()}


@pytest.fixture(scope="module")
def spark():
    from brainlab.lake.spark_ingest import spark_session

    session = spark_session("local[2]")
    session.sparkContext.setLogLevel("ERROR")
    yield session  # the session of test_spark.py when it runs first (getOrCreate)


def test_every_raw_table_of_the_lake_has_the_store_columns_and_types(spark, tmp_path):
    from brainlab.lake.spark_ingest import WRITTEN, ingest_claude_spark

    root = tmp_path / "root"
    projects = sorted(p for p in (CORPUS / "projects").iterdir() if p.is_dir())
    for project in projects[:3]:
        shutil.copytree(project, root / "projects" / project.name)
    bad = root / "projects" / "-home-ada-broken" / "broken.jsonl"  # ingest_errors rows
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b'{"type":"assistant"\nnot json\n')
    lake = tmp_path / "lake"
    summary = ingest_claude_spark(spark, root, lake, user="ada", machine="box")
    assert summary.errors >= 1 and summary.rows["cc_request_lines"] > 0
    columns = layout.store_columns()
    checked = []
    for table in WRITTEN:
        files = sorted((lake / table).rglob("*.parquet"))
        if not summary.rows.get(table):
            continue
        assert files, table
        parts = layout.partitions(table)  # in the path, not in the file (source=...)
        want = pa.schema([(c, PARQUET[t]) for c, t in columns[table] if c not in parts])
        for file in files:
            have = pq.read_schema(file)
            assert have.names == want.names, (table, file)
            for name in want.names:
                assert have.field(name).type == want.field(name).type, (table, name)
        checked.append(table)
    # the tables the corpus fills, at least: every type of the store among them
    assert {"cc_request_lines", "cc_tool_call_lines", "cc_files", "ingest_errors",
            "ingest_files"} <= set(checked), checked
    kinds = {t for table in checked for _, t in columns[table]}
    assert {"VARCHAR", "BIGINT", "BOOLEAN", "DOUBLE", "TIMESTAMP", "INTEGER"} <= kinds, kinds
