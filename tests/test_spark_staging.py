"""The Spark ingest's parse tasks write the raw tables' Parquet themselves (issue 27).

Each task attempt writes into the run's staging folder with pyarrow; the driver moves in only
the files named by the marks Spark accepted, after the job, then deletes the staging folder;
a failed run's staging folder is deleted by the next run and never read. The files are typed
as Spark typed them: timestamps read from text as ``try_cast(... AS TIMESTAMP_NTZ)`` did, hive
folders named as Spark names them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from brainlab.lake import layout, staging
from tests.conftest import CORPUS

pyspark = pytest.importorskip("pyspark")
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("spark")]

TEXTS = ["2025-09-03T10:00:00", "2025-09-03T10:00:00.1", "2025-09-03T10:00:00.123456",
         "2025-09-03T10:00:00.1234567", "2025-09-03 10:00:00", "2025-09-03", "2025-09-03T10:00",
         "2025-09-03T10", "2025-09-03T10:00:00Z", "2025-09-03T10:00:00+02:00",
         "0001-01-01T00:00:00", "9999-12-31T23:59:59.999999", "2024-02-29T00:00:00",
         "2026-02-30T00:00:00", "2025-13-01T00:00:00", "garbage", "", " 2025-09-03T10:00:00",
         "2025-09-03T10:00:00 ", "2025-9-3T10:00:00", "2025-09-03T24:00:00",
         "2025-09-03T10:60:00", "2025", "2025-09", "2025-09-03T10:00:00.", None]
# left out: years past 9999, which Spark keeps and a null here (Python's datetime stops at
# 9999); the parser writes naive UTC text through datetime, so never such a year


@pytest.fixture(scope="module")
def spark():
    from brainlab.lake.spark_ingest import spark_session

    session = spark_session("local[2]")
    session.sparkContext.setLogLevel("ERROR")
    yield session  # the session of test_spark.py when it runs first (getOrCreate)


def one_project(root: Path) -> Path:
    project = sorted(p for p in (CORPUS / "projects").iterdir() if p.is_dir())[0]
    shutil.copytree(project, root / "projects" / project.name)
    return root


def lake_rows(lake: Path, table: str, where: str = "true") -> int:
    return duckdb.connect().execute(
        f"SELECT count(*) FROM read_parquet('{lake}/{table}/**/*.parquet') WHERE {where}"
    ).fetchone()[0]


@pytest.fixture(scope="module")
def ada(spark, tmp_path_factory):
    """One corpus project as ada's on box and its lake after one ``brainlab spark
    ingest-claude`` run (CliRunner, this process's session): the first run of the CLI test and
    of the failed-run test, which each made one of their own (issue 28 item 1). Each test
    leaves the lake one the other can go on from: the failed run's staging folder removed,
    every file of the tree read."""
    from brainlab.cli import main

    base = tmp_path_factory.mktemp("ada")
    root = one_project(base / "claude")
    lake = base / "lake"
    args = ["spark", "ingest-claude", str(root), "--lake", str(lake), "--user", "ada",
            "--machine", "box"]
    return {"root": root, "lake": lake, "args": args, "first": CliRunner().invoke(main, args),
            "files": len(list(root.rglob("*.jsonl")))}


def test_timestamps_are_read_from_text_as_spark_cast_them(spark):
    """The parse types timestamps in Python now; the JVM's try_cast gave these values."""
    from brainlab.lake.spark_parse import timestamps

    frame = spark.createDataFrame([(t,) for t in TEXTS], "t string")
    want = [r.v for r in frame.selectExpr(  # microseconds since 1970, no zone
        "unix_micros(CAST(try_cast(t AS TIMESTAMP_NTZ) AS TIMESTAMP)) AS v").collect()]
    have = timestamps(pa.array(TEXTS, pa.string())).cast(pa.int64()).to_pylist()
    assert have == want
    assert want.count(None) == 7  # bad text is null, in both
    # the parser's own form takes Arrow's C++ cast (no Python per value): the same values
    parsed = ["2025-09-03T10:00:00", "2025-09-03T10:00:00.5", "2024-02-29T23:59:59.999999"]
    assert timestamps(pa.array(parsed)).type == pa.timestamp("us")


def test_partition_folders_are_named_as_spark_names_them(spark, tmp_path):
    values = ["plain", "a:b", "x=y", "50%", "q?", "h#", "s/l", "[b]", "c^{d}", "it's", "t\tab",
              'q"', "st*r", "back\\slash", "sp ace", "d@e.f+g-h_i"]
    frame = spark.createDataFrame([(v, 1) for v in values], "user string, n int")
    frame.write.partitionBy("user").parquet(str(tmp_path / "spark"))
    folders = {p.name for p in (tmp_path / "spark").iterdir() if p.name.startswith("user=")}
    assert folders == {layout.partition_path(("user",), (v,)) for v in values}
    assert layout.partition_path(("user", "machine"), ("a:b", None)) \
        == "user=a%3Ab/machine=__HIVE_DEFAULT_PARTITION__"


def test_a_failed_runs_staging_folder_is_removed_and_never_read(spark, ada):
    from brainlab.lake.spark_ingest import ingest_claude_spark

    root, lake = ada["root"], ada["lake"]
    assert ada["first"].exit_code == 0, ada["first"].output
    good = lake_rows(lake, "cc_request_lines")
    assert good > 0
    # a run that died after its tasks wrote: its staged file lies in the lake's _staging
    first = next((lake / "cc_request_lines").rglob("*.parquet"))
    ghost = pq.read_table(first).slice(0, 1).set_column(
        pq.read_schema(first).get_field_index("message_id"), "message_id",
        pa.array(["ghost"], pa.string()))
    leftover = (lake / staging.STAGING / "deadbeef" / "cc_request_lines" / "user=ada"
                / "machine=box" / "part-00000-7.parquet")
    leftover.parent.mkdir(parents=True)
    pq.write_table(ghost, leftover)
    # ... and it died while publishing (issue 47 item 7: a failed run leaves no file behind):
    # it had set this partition aside and moved its rewrite in, and moved one more file in
    part = first.parent
    aside = part.with_name(part.name + ".old-deadbeef")
    shutil.copytree(part, aside)
    for old in part.glob("*.parquet"):
        old.unlink()
    message = ghost.schema.get_field_index("message_id")
    pq.write_table(ghost.set_column(message, "message_id", pa.array(["swapped ghost"])),
                   part / "part-00000-0e7f.c000.snappy.parquet")
    moved = part / "part-00003-9-deadbeef.parquet"
    pq.write_table(ghost.set_column(message, "message_id", pa.array(["moved ghost"])), moved)
    grown = next(root.rglob("*.jsonl"))
    with open(grown, "ab") as handle:  # something new, so the next run writes and commits
        handle.write(grown.read_bytes().splitlines(keepends=True)[-1])
    summary = ingest_claude_spark(spark, root, lake, user="ada", machine="box")
    assert summary.read == 1
    assert not (lake / staging.STAGING).exists()
    assert lake_rows(lake, "cc_request_lines", "message_id LIKE '%ghost'") == 0
    assert not moved.exists() and not aside.exists()
    assert lake_rows(lake, "cc_request_lines") == good + summary.rows["cc_request_lines"]


def test_only_the_files_of_accepted_attempts_are_moved_in(spark, tmp_path):
    """A file of an attempt Spark did not accept (a failed or speculative one) lies beside
    the accepted one in staging: no mark names it, so the commit leaves it out."""
    from brainlab.lake.spark_ingest import WRITTEN, plan_jobs
    from brainlab.lake.spark_parse import parse_jobs

    root = one_project(tmp_path / "root")
    lake = str(tmp_path / "lake")
    columns = layout.store_columns()
    jobs, _, _ = plan_jobs(lake, root, layout.discover_team(root, "ada", "box"), columns)
    run = staging.new_run(lake)
    marks = [m for m in parse_jobs(spark, jobs, WRITTEN, columns, run).collect()
             if m["kind"] == "_file" and m["table"] == "cc_request_lines"]
    assert marks and {(m["user"], m["machine"]) for m in marks} == {("ada", "box")}
    accepted = Path(run) / marks[0]["source_file"]
    assert pq.read_metadata(accepted).num_rows == marks[0]["rows"]
    stray = accepted.with_name("part-00000-999999.parquet")
    shutil.copy(accepted, stray)
    moved = staging.commit_files(spark, lake, run, [m["source_file"] for m in marks])
    assert stray.exists() and not accepted.exists()
    in_lake = sorted(str(p) for p in (Path(lake) / "cc_request_lines").rglob("*.parquet"))
    assert in_lake == sorted(moved)
    assert lake_rows(Path(lake), "cc_request_lines") == sum(m["rows"] for m in marks)


def test_a_lake_scheme_pyarrow_cannot_write_is_refused_before_any_work(tmp_path):
    from brainlab.cli import main

    root = one_project(tmp_path / "root")
    result = CliRunner().invoke(main, ["spark", "ingest-claude", str(root), "--lake",
                                       "ftp://host/lake", "--user", "ada", "--machine", "box"])
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error:") and "ftp://" in lines[0], lines
    assert "Traceback" not in result.output
    assert staging.check_scheme("s3a://bucket/lake") == "s3"
    assert staging.check_scheme("/data/lake") is None


def test_cli_spark_ingest_of_a_plain_projects_tree(ada, monkeypatch):
    """The second run has nothing new (issue 28.1): decided from the listing and the manifest
    read with pyarrow before any session is asked for, it prints what a run with a JVM
    printed, leaves the lake's files as they were and still deletes a failed run's staging
    folder. (Moved from test_spark.py: its first run is the module's, issue 28 item 1.)"""
    from brainlab.cli import main
    from brainlab.common.errors import LakeError
    from brainlab.lake import spark_ingest

    lake, args, result, files = ada["lake"], ada["args"], ada["first"], ada["files"]
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"claude {files} read, 0 unchanged")
    assert (lake / "cc_files" / "user=ada" / "machine=box").is_dir()

    def lake_files():
        return {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in lake.rglob("*")
                if p.is_file()}

    before = lake_files()
    leftover = lake / "_staging" / "0123" / "cc_files" / "part-0.parquet"
    leftover.parent.mkdir(parents=True)
    leftover.write_bytes(b"a failed run's file")
    asked = []

    def no_jvm(*given, **_kwargs):
        asked.append(given)
        raise LakeError("no Spark session for a run with nothing new")

    monkeypatch.setattr(spark_ingest, "spark_session", no_jvm)
    again = CliRunner().invoke(main, args)
    assert (again.exit_code, asked) == (0, []), again.output
    assert again.output == (f"claude 0 read, {files} unchanged, 0 reset, 0 removed, 0 errors,"
                            " 0 warnings; 0 request rows in touched partitions\n")
    assert not (lake / "_staging").exists()
    assert lake_files() == before
