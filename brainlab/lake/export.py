"""``brainlab export``: write a store's raw tables into the lake, one user and machine at a time.

Idempotent: each table's ``user=<u>/machine=<m>`` partition is written to a staging folder
and swapped in whole, so a second export of the same store leaves the same files and an
export of a store that lost rows removes them. Rows are written sorted (``ORDER BY ALL``),
which makes the bytes repeatable and the Parquet row-group statistics useful.
"""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from brainlab.errors import LakeError, StoreMissingError
from brainlab.lake import layout
from brainlab.store import reader


@dataclass
class ExportSummary:
    """What an export wrote: rows per table, under which user and machine."""

    lake: str
    user: str
    machine: str
    rows: dict[str, int] = field(default_factory=dict)


def export_store(db: str | os.PathLike, lake: str | os.PathLike, user: str | None = None,
                 machine: str | None = None) -> ExportSummary:
    """Write every raw table of ``db`` into ``lake`` as ``user`` on ``machine``."""
    if layout.is_remote(str(lake)):
        raise LakeError(f"export writes a local or mounted folder, not {lake}: export to a"
                        " folder and copy it to the object store (docs/lake.md)")
    if not Path(db).exists():
        raise StoreMissingError(f"no database at {db}: run `brainlab ingest ...` first")
    user = layout.check_name("user", user or layout.default_user())
    machine = layout.check_name("machine", machine or layout.default_machine())
    root = Path(layout.normalize(lake))
    root.mkdir(parents=True, exist_ok=True)
    staging = root / f"_staging-{uuid.uuid4().hex}"
    summary = ExportSummary(str(root), user, machine)
    columns = layout.store_columns()
    try:
        with reader(db) as con:
            present = {r[0] for r in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'").fetchall()}
            for table in sorted(columns):
                if table not in present:
                    continue
                summary.rows[table] = _export_table(con, table, root, staging, user, machine)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return summary


def _export_table(con, table: str, root: Path, staging: Path, user: str, machine: str) -> int:
    """Write one table's partition(s) to staging, then swap them into place; return rows."""
    n = con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
    extra = layout.partitions(table)[len(layout.PARTITIONS):]
    if not layout.partitions(table):  # team-wide: one file, replaced (never by nothing)
        if not n:
            return 0
        target = root / table
        out = staging / table
        out.mkdir(parents=True)
        con.execute(f"COPY (SELECT * FROM \"{table}\" ORDER BY ALL) TO '{out / 'data.parquet'}'"
                    " (FORMAT parquet)")
        _swap(out, target)
        return n
    target = root / table / f"user={user}" / f"machine={machine}"
    out = staging / table / f"user={user}" / f"machine={machine}"
    out.mkdir(parents=True)
    if n:
        if extra:
            names = ", ".join(f'"{c}"' for c in extra)
            con.execute(f"COPY (SELECT * FROM \"{table}\" ORDER BY ALL) TO '{out}'"
                        f" (FORMAT parquet, PARTITION_BY ({names}), OVERWRITE_OR_IGNORE)")
        else:
            con.execute(f"COPY (SELECT * FROM \"{table}\" ORDER BY ALL)"
                        f" TO '{out / 'data.parquet'}' (FORMAT parquet)")
    _swap(out, target)
    return n


def _swap(new: Path, target: Path) -> None:
    """Replace folder ``target`` by ``new`` (an empty ``new`` removes ``target``)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    old = target.with_name(target.name + f".old-{uuid.uuid4().hex}")
    if target.exists():
        target.rename(old)
    if any(new.rglob("*.parquet")):
        new.rename(target)
    shutil.rmtree(old, ignore_errors=True)
