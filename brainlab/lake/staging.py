"""The Spark ingest's staging area and its commit protocol (issue 27).

The parse tasks write each raw table's new rows with pyarrow, in C++, straight into the run's
staging folder ``<lake>/_staging/<run_id>/<table>/user=<u>/machine=<m>[/source=<s>]/
part-<task>-<attempt id>.parquet`` (hive folders named as Spark names them); a task attempt
writes only under its own attempt id and returns one mark per file it wrote. The driver
collects the marks of the attempts Spark accepted and, only after that job succeeded,
commits: :func:`commit_files` moves those files into their tables (Hadoop ``FileSystem``
renames, so any Hadoop file system works), or the caller reads them as the new rows of a
rewritten partition (:func:`read_staged`), whose partitions are written whole beside the
lake and swapped in together by :func:`publish`. The staging folder is deleted once every
table is written (one run writes a lake at a time, :mod:`brainlab.lake.lock`); a failed
run's is left, and the next run rolls it back (or, published, forward) before it plans
(:func:`undo_unfinished`). Files of attempts not accepted are named by
no mark, so never moved nor read. pyspark is imported lazily; pyarrow writes where the JVM
reads (:func:`arrow_filesystem`: ``s3a://`` is ``s3://`` to pyarrow).
"""

from __future__ import annotations

import re
import uuid

from brainlab.common.errors import LakeError
from brainlab.lake import layout
from brainlab.lake.spark_io import delete_path, hadoop_path

STAGING = "_staging"  # at the lake's root: no table's folder holds it, no read meets it
# Hadoop scheme -> pyarrow's (FileSystem.from_uri); local paths have none
ARROW_SCHEMES = {"file": "file", "s3": "s3", "s3a": "s3", "s3n": "s3", "gs": "gs",
                 "gcs": "gs", "hdfs": "hdfs", "viewfs": "viewfs", "abfs": "abfs",
                 "abfss": "abfss"}
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")


def new_run(lake: str) -> str:
    """The URI of a new run's staging folder."""
    return f"{layout.normalize(lake)}/{STAGING}/{uuid.uuid4().hex[:16]}"


def clear(spark, lake: str) -> None:
    """Delete every staging folder of the lake (a failed run's leftovers: never data)."""
    delete_path(spark, f"{layout.normalize(lake)}/{STAGING}")


REWRITE = "_rewrite"  # <run>/_rewrite/<table>/user=/machine=/...: partitions written whole
PUBLISHED = "_published"  # <run>/_published: every partition of the run was swapped in
OLD = ".old-"  # <table>/user=<u>/machine=<m>.old-<run id>: a partition a run replaced


def rewrite_uri(run: str, table: str) -> str:
    """Where a run writes the partitions of ``table`` it rewrites whole."""
    return f"{run}/{REWRITE}/{table}"


def publish(spark, lake: str, run: str, rewrites: list[tuple[str, set]]) -> None:
    """Swap the rewritten partitions in: each old one aside, the staged one in, by rename.

    Then the mark ``<run>/_published`` and the old partitions removed. A run killed before
    the mark is rolled back by the next (:func:`undo_unfinished`), one killed after it is
    rolled forward.
    """
    lake = layout.normalize(lake)
    run_id = run.rsplit("/", 1)[1]
    _, fs = hadoop_path(spark, lake)
    aside = []
    for table, touched in rewrites:
        for values in sorted(touched):
            folder = layout.partition_path(layout.PARTITIONS, values)
            target, _ = hadoop_path(spark, f"{lake}/{table}/{folder}")
            old, _ = hadoop_path(spark, f"{lake}/{table}/{folder}{OLD}{run_id}")
            new, _ = hadoop_path(spark, f"{rewrite_uri(run, table)}/{folder}")
            if fs.exists(target):
                if not fs.rename(target, old):
                    raise LakeError(f"could not move {lake}/{table}/{folder} aside")
                aside.append(old)
            if fs.exists(new):
                fs.mkdirs(target.getParent())
                if not fs.rename(new, target):
                    raise LakeError(f"could not move {run}/{REWRITE}/{table}/{folder} into"
                                    " the lake")
    mark, _ = hadoop_path(spark, f"{run}/{PUBLISHED}")
    fs.create(mark, True).close()
    for old in aside:
        fs.delete(old, True)


def undo_unfinished(lake: str) -> list[str]:
    """Undo or finish what unfinished runs did to the lake, then remove their staging.

    A run's staging folder is deleted once all its raw tables are written: one still there is
    a run that failed or was killed while committing (issue 47 item 7: a failed run leaves no
    file behind). Before its ``_published`` mark, the run is rolled back: the files it moved
    into its tables (named by its run id, ``part-...-<run id>.parquet``, :func:`commit_files`)
    go, and each partition it had set aside (``...<.old-run id>``) comes back in place of the
    one it had moved in, so the manifest and the rows agree again. After the mark, only the
    partitions set aside are removed. With pyarrow, on the driver, before the run plans: a
    run with nothing new still starts no JVM. Returns the paths removed.
    """
    from pyarrow.fs import FileSelector, FileType

    fs, root = arrow_filesystem(layout.normalize(lake))
    stage = f"{root}/{STAGING}"
    runs = [i for i in fs.get_file_info(FileSelector(stage, allow_not_found=True))
            if i.type == FileType.Directory and re.fullmatch(r"[0-9a-f]+", i.base_name)]
    removed: list[str] = []
    if runs:
        listing = [i for i in fs.get_file_info(FileSelector(root, recursive=True))
                   if not i.path[len(root) + 1:].startswith(STAGING + "/")]
        for run in runs:
            run_id = run.base_name
            published = exists(fs, f"{run.path}/{PUBLISHED}")
            for info in listing:
                depth = info.path[len(root) + 1:].count("/")
                if (not published and info.type == FileType.File and depth in (3, 4)
                        and info.base_name.endswith(f"-{run_id}.parquet")
                        and exists(fs, info.path)):
                    fs.delete_file(info.path)  # <table>/user=/machine=[/source=]/<file>
                    removed.append(info.path)
                elif (info.type == FileType.Directory and depth == 2
                      and info.base_name.endswith(OLD + run_id)):
                    target = info.path[:-len(OLD + run_id)]
                    if not published:
                        if exists(fs, target):
                            fs.delete_dir(target)
                            removed.append(target)
                        fs.move(info.path, target)
                    else:
                        fs.delete_dir(info.path)
                        removed.append(info.path)
    if exists(fs, stage):
        fs.delete_dir(stage)
    return removed


def exists(fs, path: str) -> bool:
    """True when ``path`` (a file or a folder) exists on the pyarrow file system ``fs``."""
    from pyarrow.fs import FileType

    return fs.get_file_info(path).type != FileType.NotFound


def check_scheme(uri: str) -> str | None:
    """The pyarrow scheme of ``uri`` (None: a local path); :class:`LakeError` if it has none.

    Called on the driver before any work: no file system is opened (no network).
    """
    found = _SCHEME.match(uri)
    if not found:
        return None
    scheme = found.group(1).lower()
    if scheme not in ARROW_SCHEMES:
        raise LakeError(f"a lake at {scheme}:// cannot be written by the Spark ingest's parse"
                        " tasks (pyarrow writes " + ", ".join(
                            f"{s}://" for s in sorted(ARROW_SCHEMES)) + "): use one of those")
    return ARROW_SCHEMES[scheme]


def arrow_filesystem(uri: str):
    """(pyarrow file system, path) for ``uri``: where the JVM reads, pyarrow writes.

    ``s3a://bucket/p`` is ``s3://bucket/p`` to pyarrow, its credentials from the usual AWS
    chain (environment, ``~/.aws``, instance role). Called in each parse task.
    """
    from pyarrow import fs

    scheme = check_scheme(uri)
    if scheme is None:
        return fs.LocalFileSystem(), uri
    try:
        return fs.FileSystem.from_uri(scheme + uri[uri.index("://"):])
    except Exception as exc:  # no S3 support built in, no HDFS library, bad bucket...
        raise LakeError(f"pyarrow cannot open the lake at {uri} ({type(exc).__name__}:"
                        f" {exc})") from exc


# rows a task buffers (Arrow bytes, every table and partition together) before writing them
# as row groups: a row group per bin made the lake 25% larger (a dictionary per small group)
BUFFER_BYTES = 128 << 20


class Writers:
    """A parse task's Parquet writers: one file per table and partition, rows appended.

    Rows are buffered up to :data:`BUFFER_BYTES` in all, then each buffer becomes one row
    group of its file: a task's memory stays bounded and row groups stay large.
    """

    def __init__(self, run: str, task: int, attempt: str):
        self.fs, self.root = arrow_filesystem(run)
        self.name = f"part-{task:05d}-{attempt}.parquet"
        self.open: dict[tuple, list] = {}  # (table, values) -> [writer, relative path, rows]
        self.buffered: dict[tuple, list] = {}  # (table, values) -> Arrow tables not written
        self.size = 0  # their bytes

    def write(self, table: str, values: tuple, rows) -> None:
        """Append ``rows`` (Arrow, no partition column) to its partition's file.

        ``values``: the partition of ``table`` (user, machine[, source]).
        """
        self.buffered.setdefault((table, values), []).append(rows)
        self.size += rows.nbytes
        if self.size >= BUFFER_BYTES:
            self.flush()

    def flush(self) -> None:
        """Write every buffer as one row group of its file (opened on first use)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        for (table, values), frames in self.buffered.items():
            rows = pa.concat_tables(frames)
            entry = self.open.get((table, values))
            if entry is None:
                folder = f"{table}/{layout.partition_path(layout.partitions(table), values)}"
                self.fs.create_dir(f"{self.root}/{folder}", recursive=True)
                writer = pq.ParquetWriter(f"{self.root}/{folder}/{self.name}", rows.schema,
                                          filesystem=self.fs, compression="snappy")
                entry = self.open[table, values] = [writer, f"{folder}/{self.name}", 0]
            entry[0].write_table(rows, row_group_size=max(rows.num_rows, 1))
            entry[2] += rows.num_rows
        self.buffered.clear()
        self.size = 0

    def close(self) -> list[tuple[str, tuple, str, int]]:
        """Write what is buffered, close every file; (table, values, relative path, rows)."""
        self.flush()
        out = []
        for (table, values), (writer, relative, rows) in self.open.items():
            writer.close()
            out.append((table, values, relative, rows))
        self.open.clear()
        return out


def commit_files(spark, lake: str, run: str, relatives: list[str]) -> list[str]:
    """Move the staged files into their tables; return their URIs there.

    Each keeps its place relative to the lake, its name made unique to the run:
    ``part-<task>-<attempt>.parquet`` becomes ``part-<task>-<attempt>-<run id>.parquet``.
    Hadoop's rename, so a local disk or an object store alike.
    """
    run_id = run.rsplit("/", 1)[1]
    lake = layout.normalize(lake)
    moved = []
    for relative in relatives:
        source, fs = hadoop_path(spark, f"{run}/{relative}")
        uri = f"{lake}/{relative[:-len('.parquet')]}-{run_id}.parquet"
        target, _ = hadoop_path(spark, uri)
        fs.mkdirs(target.getParent())
        if not fs.rename(source, target):
            raise LakeError(f"could not move {run}/{relative} into the lake; the lake is"
                            " partly written: restore it before the next run (docs/lake.md)")
        moved.append(uri)
    return moved


def read_staged(spark, run: str, table: str, relatives: list[str]):
    """The staged files of ``table`` as a DataFrame (their partition columns from the paths)."""
    return (spark.read.option("basePath", f"{run}/{table}")
            .parquet(*[f"{run}/{r}" for r in relatives]))
