"""``brainlab attach``: a DuckDB file whose raw tables are views over the lake's Parquet files.

The file is a normal store (schema, metric views, comments) in which every raw table the lake
holds is replaced by a view with the store's exact columns and types, so every metric view,
``brainlab usage``, the notebooks and the weekly report run unchanged. ``users`` /
``machines`` keep only those partitions (a per-user or per-team view). Object-store lakes
(``s3://``) are read through DuckDB's httpfs extension with the credential chain (docs/lake.md).
The file is rebuilt whole at each attach and swapped in atomically.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from brainlab.errors import LakeError
from brainlab.lake import layout
from brainlab.store import open_writer
from brainlab.store.connection import sql_ident
from brainlab.store.connection import sql_literal as _quote


@dataclass
class AttachSummary:
    """What an attach made: the views over the lake, and the tables it had no files for."""

    db: str
    lake: str
    views: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)


def attach_lake(lake: str | os.PathLike, db: str | os.PathLike,
                users: tuple[str, ...] = (), machines: tuple[str, ...] = ()) -> AttachSummary:
    """Write ``db``: the store's schema with each raw table a view over ``lake``."""
    uri = layout.normalize(lake)
    if not layout.is_remote(uri) and not Path(uri).is_dir():
        raise LakeError(f"no lake at {uri}: run `brainlab export` or `brainlab spark"
                        " ingest-claude` first")
    db = Path(db)
    tmp = db.with_name(db.name + ".attach-tmp")
    for stale in (tmp, tmp.with_name(tmp.name + ".wal")):
        stale.unlink(missing_ok=True)
    summary = AttachSummary(str(db), uri)
    con = open_writer(tmp)
    try:
        if layout.is_remote(uri):
            con.execute("INSTALL httpfs; LOAD httpfs;"
                        " CREATE OR REPLACE SECRET lake (TYPE s3, PROVIDER credential_chain)")
        for table, columns in sorted(layout.store_columns().items()):
            glob = f"{layout.table_uri(uri, table)}/**/*.parquet"
            if not con.execute("SELECT count(*) FROM glob(?)", [glob]).fetchone()[0]:
                summary.empty.append(table)
                continue
            select = ", ".join(f"CAST({sql_ident(c)} AS {t}) AS {sql_ident(c)}"
                               for c, t in columns)
            where = _filter(table, users, machines)
            con.execute(f'DROP TABLE "{table}"')
            con.execute(
                f'CREATE VIEW "{table}" AS SELECT {select} FROM read_parquet({_quote(glob)},'
                f" hive_partitioning = true, hive_types_autocast = false,"
                f" union_by_name = true){where}")
            summary.views.append(table)
        con.execute("INSERT OR REPLACE INTO brainlab_meta VALUES ('lake', ?), ('lake_users', ?),"
                    " ('lake_machines', ?)", [uri, ",".join(users), ",".join(machines)])
        con.execute("CHECKPOINT")
    finally:
        con.close()
    os.replace(tmp, db)
    return summary


def _filter(table: str, users: tuple[str, ...], machines: tuple[str, ...]) -> str:
    """The WHERE clause keeping the chosen users' and machines' partitions."""
    if not layout.partitions(table):
        return ""
    clauses = []
    for column, values in (("user", users), ("machine", machines)):
        if values:
            clauses.append(f'"{column}" IN ({", ".join(_quote(v) for v in values)})')
    return (" WHERE " + " AND ".join(clauses)) if clauses else ""
