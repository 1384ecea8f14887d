"""``brainlab export``: write a store's raw tables into the lake, one user and machine at a time.

Idempotent: each table's ``user=<u>/machine=<m>`` partition is written to a staging folder,
so a second export of the same store leaves the same files and an export of a store that lost
rows removes them. Rows are written sorted (``ORDER BY ALL``), which makes the bytes
repeatable and the Parquet row-group statistics useful.

One export is one atomic, locked operation (issue 29): it takes the lake's lock file
(``_lake.lock``, an ``flock``: :mod:`brainlab.lake.lock`), writes every table to staging
first (a full disk or a kill then leaves the lake as it was), records the swaps in
``_export.journal`` and then swaps all partitions; the next export finishes a journal a
killed one left and removes its leftover
``_staging-*`` and ``*.old-*`` folders. Paths reach SQL only through :func:`sql_literal`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from brainlab.common.errors import LakeError, StoreMissingError
from brainlab.lake import layout
from brainlab.lake.lock import locked
from brainlab.store import reader
from brainlab.store.connection import engine, sql_ident, sql_literal

JOURNAL = "_export.journal"
LOCK_WAIT = 60.0  # seconds an export waits for another one on the same lake


@dataclass
class ExportSummary:
    """What an export wrote: rows per table, under which user and machine."""

    lake: str
    user: str
    machine: str
    rows: dict[str, int] = field(default_factory=dict)

    def line(self) -> str:
        """What the export wrote, as ``brainlab export`` prints it."""
        return (f"exported {sum(self.rows.values())} rows of {len(self.rows)} tables as"
                f" user={self.user} machine={self.machine} to {self.lake}")


def export_store(db: str | os.PathLike, lake: str | os.PathLike, user: str | None = None,
                 machine: str | None = None, lock_wait: float = LOCK_WAIT) -> ExportSummary:
    """Write every raw table of ``db`` into ``lake`` as ``user`` on ``machine``."""
    if layout.is_remote(str(lake)):
        raise LakeError(f"export writes a local or mounted folder, not {lake}: export to a"
                        " folder and copy it to the object store (docs/lake.md)")
    if not Path(db).exists():
        raise StoreMissingError(f"no database at {db}: run `brainlab ingest ...` first")
    user = layout.check_name("user", layout.default_user() if user is None else user)
    machine = layout.check_name("machine", layout.default_machine() if machine is None
                                else machine)
    root = Path(layout.check_lake(layout.normalize(lake)))
    try:
        root.mkdir(parents=True, exist_ok=True)
        with locked(root, lock_wait, "export"):
            recover(root)
            return _export(db, root, user, machine)
    except OSError as exc:
        raise LakeError(f"export to {root} failed, the lake is left as it was: {exc.strerror or exc}"
                        " (free space or fix permissions, then export again)") from None


def _export(db, root: Path, user: str, machine: str) -> ExportSummary:
    staging = root / f"_staging-{uuid.uuid4().hex}"
    summary = ExportSummary(str(root), user, machine)
    columns = layout.store_columns()
    swaps: list[tuple[str, str, str]] = []
    try:
        with reader(db, engine_only=True, allowed=(str(root),)) as con:  # SQL only
            present = {r[0] for r in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'").fetchall()}
            for table in sorted(columns):
                if table not in present:
                    continue
                n, new, target = _stage_table(con, table, root, staging, user, machine)
                summary.rows[table] = n
                if new is not None:
                    swaps.append((str(new), str(target),
                                  str(target.with_name(target.name + f".old-{uuid.uuid4().hex}"))))
        _write_journal(root, swaps)
        recover(root)  # swaps every partition, then removes the journal and the old copies
    except engine().Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise LakeError(f"export to {root} failed, the lake is left as it was: {first}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return summary


def _stage_table(con, table: str, root: Path, staging: Path, user: str, machine: str):
    """Write one table's partition(s) to staging; return (rows, staged folder, target)."""
    name = sql_ident(table)
    n = con.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
    extra = layout.partitions(table)[len(layout.PARTITIONS):]
    if not layout.partitions(table):  # team-wide: one file, replaced (never by nothing)
        if not n:
            return 0, None, None
        out = staging / table
        out.mkdir(parents=True)
        con.execute(f"COPY (SELECT * FROM {name} ORDER BY ALL) TO"
                    f" {sql_literal(str(out / 'data.parquet'))} (FORMAT parquet)")
        return n, out, root / table
    out = staging / table / f"user={user}" / f"machine={machine}"
    out.mkdir(parents=True)
    if n:
        if extra:
            names = ", ".join(sql_ident(c) for c in extra)
            con.execute(f"COPY (SELECT * FROM {name} ORDER BY ALL) TO {sql_literal(str(out))}"
                        f" (FORMAT parquet, PARTITION_BY ({names}), OVERWRITE_OR_IGNORE)")
        else:
            con.execute(f"COPY (SELECT * FROM {name} ORDER BY ALL)"
                        f" TO {sql_literal(str(out / 'data.parquet'))} (FORMAT parquet)")
    return n, out, root / table / f"user={user}" / f"machine={machine}"


def _write_journal(root: Path, swaps: list[tuple[str, str, str]]) -> None:
    partial = root / f"{JOURNAL}.{uuid.uuid4().hex}"
    with open(partial, "w", encoding="utf-8") as out:
        json.dump(swaps, out)
        out.flush()
        os.fsync(out.fileno())
    os.replace(partial, root / JOURNAL)


def recover(root: Path) -> None:
    """Finish the swaps a journal lists, then remove every leftover of a killed export.

    Each swap moves the target aside (``*.old-*``) and the staged folder in; then the journal,
    ``_staging-*`` and ``*.old-*`` folders go. Run under the lock.
    """
    journal = root / JOURNAL
    if journal.exists():
        try:
            swaps = json.loads(journal.read_text(encoding="utf-8"))
        except ValueError:  # a journal cut short was never acted on: the staging goes below
            swaps = []
        for new, target, old in swaps:
            new, target, old = Path(new), Path(target), Path(old)
            if not new.exists():
                continue  # done
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists() and not old.exists():
                target.rename(old)
            if any(new.rglob("*.parquet")) and not target.exists():
                new.rename(target)
        journal.unlink()
    for leftover in root.glob(f"{JOURNAL}.*"):
        leftover.unlink(missing_ok=True)
    for stale in root.glob("_staging-*"):
        remove(stale)
    for stale in [*root.glob("*.old-*"), *root.glob("*/*/*.old-*")]:
        if not re.search(r"\.old-[0-9a-f]{16}$", stale.name):  # a Spark run's (16 hex
            remove(stale)  # digits) are its next run's to restore or remove


def remove(path: Path) -> None:
    """Remove a leftover, a folder or a file.

    A partition folder replaced by a file, moved aside as ``machine=m.old-<hex>``, was left
    forever by ``rmtree`` (issue 47 item 7).
    """
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
