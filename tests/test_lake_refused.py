"""A Spark run whose refused paths the lake holds already starts no JVM (issue 28.1, 29).

``stored_as_refused`` reads the lake's ``skipped:`` error rows with pyarrow (no JVM): only
when they are exactly this run's refused paths may the run skip rewriting them. Hive folders
are written here as Spark writes them (``layout.partition_path``); no Spark needed.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from brainlab.lake import layout
from brainlab.lake.refused import stored_as_refused
from brainlab.sources.redact import stored_path

COLUMNS = {"ingest_errors": [("file", "VARCHAR"), ("line", "BIGINT"), ("reason", "VARCHAR"),
                             ("source", "VARCHAR"), ("severity", "VARCHAR")]}


def write(lake, user, machine, source, rows):
    """One Parquet file of ingest_errors rows (file, line, reason, severity) in a partition."""
    folder = lake / "ingest_errors" / layout.partition_path(
        ("user", "machine", "source"), (user, machine, source))
    folder.mkdir(parents=True, exist_ok=True)
    names = ("file", "line", "reason", "severity")
    table = pa.table({n: pa.array([r[i] for r in rows],
                                  type=pa.int64() if n == "line" else pa.string())
                      for i, n in enumerate(names)})
    pq.write_table(table, folder / f"part-{len(list(folder.iterdir()))}.parquet")


def test_only_the_same_skipped_rows_let_a_run_skip_their_rewrite(tmp_path):
    lake, root = tmp_path / "lake", tmp_path / "team"
    prefix = stored_path(str(root)) + "/"
    bob = layout.Refused(str(root / "bob smith" / "box"), "skipped: user name 'bob smith'",
                         "_refused", "_refused")
    fifo = layout.Refused(str(root / "ada" / "box" / "projects" / "p" / "pipe.jsonl"),
                          "skipped: not a regular file", "ada", "box")
    assert stored_as_refused(str(lake), prefix, [], COLUMNS)  # no lake yet, nothing refused
    assert not stored_as_refused(str(lake), prefix, [bob], COLUMNS)
    write(lake, "_refused", "_refused", "claude", [(stored_path(bob.path), None, bob.reason,
                                                    "error")])
    write(lake, "ada", "box", "claude", [
        (stored_path(fifo.path), None, fifo.reason, "error"),
        (str(root / "ada" / "box" / "projects" / "p" / "w1.jsonl"), 3, "not json", "error")])
    write(lake, "ada", "box", "otel", [(stored_path(fifo.path), None, "skipped: x", "error")])
    write(lake, "eve", "box", "claude", [("/elsewhere/team/eve/box", None, "skipped: y",
                                          "error")])  # another root's row: not ours
    assert stored_as_refused(str(lake), prefix, [bob, fifo], COLUMNS)
    assert stored_as_refused(str(lake), prefix, [fifo, bob], COLUMNS)  # any order
    assert not stored_as_refused(str(lake), prefix, [bob], COLUMNS)  # fifo's row is stale
    assert not stored_as_refused(str(lake), prefix, [bob, fifo, fifo], COLUMNS)
    moved = fifo._replace(machine="desk")
    assert not stored_as_refused(str(lake), prefix, [bob, moved], COLUMNS)
    reworded = bob._replace(reason="skipped: user name of 251 characters")
    assert not stored_as_refused(str(lake), prefix, [reworded, fifo], COLUMNS)
