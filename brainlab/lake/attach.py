"""``brainlab attach``: a DuckDB file whose raw tables are views over the lake's Parquet files.

The file is a normal store (schema, metric views, comments) in which every raw table the lake
holds is replaced by a view with the store's exact columns and types, so every metric view,
``brainlab usage``, the notebooks and the weekly report run unchanged. ``users`` /
``machines`` keep only those partitions (a per-user or per-team view). Object-store lakes
(``s3://``) are read through DuckDB's httpfs extension with the credential chain (docs/lake.md).
The file is rebuilt whole at each attach and swapped in atomically.

A view ``lake_files`` names each transcript's user and machine (the report's per-person
table). ``cc_session_measures`` is computed from ``cc_measured`` over the lines attached, as
of the attach: the Spark ingest does not store it, and a session's lines may sit on two
machines.

One bad lake file never blocks the team (issue 29): each file is opened before its view is
made; a corrupt, truncated, empty, non-Parquet or wrong-schema file becomes an error row
(its path and the reason, source ``lake``) in ``ingest_errors`` (``brainlab errors``) and
the view reads the other files only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from brainlab.common.errors import ConfigError, LakeError, StoreError
from brainlab.common.paths import cache_dir
from brainlab.lake import layout
from brainlab.store import open_writer
from brainlab.store.connection import engine, seal_writer, sql_ident
from brainlab.store.connection import sql_literal as _quote
from brainlab.store.measured import refresh_measures


@dataclass
class AttachSummary:
    """What an attach made: the views over the lake, and the tables it had no files for."""

    db: str
    lake: str
    views: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)
    bad_files: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)

    def lines(self) -> list[str]:
        """What the attach made, as ``brainlab attach`` prints it."""
        from brainlab.common.plaintext import visible

        out = [f"{len(self.views)} tables attached from {self.lake}"
               f" ({len(self.empty)} without files stay empty); database: {self.db}"]
        if self.bad_files:
            out.append(f"{len(self.bad_files)} bad lake file(s) skipped: see brainlab errors"
                       f" --db {visible(self.db)}")
        return out


def attach_lake(lake: str | os.PathLike, db: str | os.PathLike,
                users: tuple[str, ...] = (), machines: tuple[str, ...] = ()) -> AttachSummary:
    """Write ``db``: the store's schema with each raw table a view over ``lake``."""
    uri = layout.check_lake(layout.normalize(lake))
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
        # sealed before it runs anything (issue 46 item 4): the lake is the one folder it may
        # read; the store's views (the measures over the lines) read nothing else
        seal_writer(con, (uri,))
        bodies: dict[str, str] = {}
        sources: dict[str, str] = {}
        for table, columns in sorted(layout.store_columns().items()):
            glob = f"{layout.table_uri(uri, table)}/**/*.parquet"
            files = [r[0] for r in con.execute("SELECT file FROM glob(?)", [glob]).fetchall()]
            good, present = [], set()
            for file in files:
                found: dict[str, str] = {}
                problem = (layout.misplaced(table, layout.table_uri(uri, table), file)
                           or _file_problem(con, file, columns, found))
                if problem:
                    summary.bad_files.append((file, f"lake file of {table} skipped: {problem}"))
                else:
                    good.append(file)
                    present.update(found)
            if not good:
                summary.empty.append(table)
                continue
            source = _quote(glob) if len(good) == len(files) else \
                "[" + ", ".join(_quote(f) for f in good) + "]"
            sources[table] = source
            # a column no file has (a lake written before it was added: issue 45's usage
            # columns) reads as NULL, as an upgraded store's new column
            present.update(layout.partitions(table))  # from the folders (source=...)
            select = ", ".join(f"CAST({sql_ident(c) if c in present else 'NULL'} AS {t})"
                               f" AS {sql_ident(c)}" for c, t in columns)
            where = _filter(table, users, machines)
            con.execute(f"DROP TABLE {sql_ident(table)}")
            bodies[table] = (f"SELECT {select} FROM read_parquet({source},"
                             f" hive_partitioning = true, hive_types_autocast = false,"
                             f" union_by_name = true){where}")
            con.execute(f"CREATE VIEW {sql_ident(table)} AS {bodies[table]}")
            summary.views.append(table)
        _owners(con, sources.get("cc_files"), _filter("cc_files", users, machines))
        if "cc_request_lines" in bodies:
            _derive_measures(con, layout.store_columns()[MEASURES], MEASURES in bodies)
        _record_bad_files(con, summary.bad_files, bodies.get("ingest_errors"))
        con.execute("INSERT OR REPLACE INTO brainlab_meta VALUES ('lake', ?), ('lake_users', ?),"
                    " ('lake_machines', ?)", [uri, ",".join(users), ",".join(machines)])
        con.execute("CHECKPOINT")
    except engine().PermissionException as exc:  # the seal stopped a view reading a file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StoreError(f"attach refused: a view of the empty store it starts from reads a"
                         f" file outside the lake ({first}); delete brainlab's cache folder"
                         f" ({cache_dir()}) so that the next run builds that store again") from None
    finally:
        con.close()
    os.replace(tmp, db)
    return summary


MEASURES = "cc_session_measures"


def attach_for_report(lake: str | None, out_dir: str | os.PathLike, users: tuple[str, ...] = (),
                      machines: tuple[str, ...] = ()) -> Path:
    """The store a team report reads: ``<out_dir>/lake.duckdb`` attached to ``lake``.

    Rebuilt at each report, beside the reports it serves (never the user's own store).
    """
    if not lake:
        raise ConfigError("--user and --machine choose partitions of a lake: give --lake DIR"
                          " too (or attach it first: brainlab attach --lake DIR --db FILE)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    db = out / "lake.duckdb"
    attach_lake(lake, db, users=users, machines=machines)
    return db


def _derive_measures(con, columns: list[tuple[str, str]], was_view: bool) -> None:
    """Fill cc_session_measures from cc_measured over the attached (filtered) lines.

    A local ingest stores cc_measured's rows once per run; the Spark ingest does not, and
    exported measures of one machine miss a session's lines on another. Computed here once,
    as the local ingest does (:func:`brainlab.store.measured.refresh_measures`), the measured
    sessions, the audit and the rules reading them answer for exactly the attached lines. A
    view would be live but re-derives every line per reference (the report's compliance cell
    passed its 120 s); the table is as of the attach: attach again after a Spark run.
    """
    if was_view:  # the lake held exported measures: replaced by the derivation
        con.execute(f"DROP VIEW {MEASURES}")
        names = ", ".join(f"{sql_ident(c)} {t}" for c, t in columns)
        con.execute(f"CREATE TABLE {MEASURES} ({names})")
    refresh_measures(con)


def _owners(con, source: str | None, where: str) -> None:
    """The view ``lake_files``: each transcript's user and machine (its cc_files partition).

    The store's tables have no user column (it is the partition); the report's per-person
    table joins the calls kept by the SPEC §7 deduplication to it by ``source_file``, so a
    call counts for the user and machine of the line kept, as the Spark roll-ups count it.
    A file exported under two partitions counts for the first by name.
    """
    if source is None:
        con.execute("CREATE OR REPLACE VIEW lake_files AS SELECT NULL::VARCHAR AS source_file,"
                    " NULL::VARCHAR AS \"user\", NULL::VARCHAR AS machine WHERE false")
        return
    con.execute(f"CREATE OR REPLACE VIEW lake_files AS SELECT source_file, CAST(\"user\" AS VARCHAR) AS"
                f" \"user\", CAST(machine AS VARCHAR) AS machine FROM read_parquet({source},"
                f" hive_partitioning = true, hive_types_autocast = false,"
                f" union_by_name = true){where} QUALIFY row_number() OVER (PARTITION BY"
                f" source_file ORDER BY \"user\", machine) = 1")


def _file_problem(con, file: str, columns: list[tuple[str, str]],
                  seen: dict | None = None) -> str | None:
    """Why ``file`` cannot be read as part of a table with ``columns``, or None.

    ``seen`` receives the file's columns and types.
    """
    try:
        found = dict(con.execute("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM"
                                 " read_parquet(?, hive_partitioning = false))", [file]).fetchall())
        if seen is not None:
            seen.update(found)
    except Exception as exc:  # noqa: BLE001 - any DuckDB error: corrupt, empty, not Parquet
        text = str(exc).strip().splitlines()
        return text[0] if text else type(exc).__name__
    wanted = dict(columns)
    common = [c for c in wanted if c in found]
    if not common:
        return "none of the table's columns (another table's file, or another program's)"
    for column in common:
        if not _castable(found[column], wanted[column]):
            return f"column {column} is {found[column]}, the store's is {wanted[column]}"
    return None


_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
            "UINTEGER", "UBIGINT", "FLOAT", "DOUBLE", "DECIMAL")
_TIME = ("DATE", "TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "TIMESTAMP_NS", "TIMESTAMP_MS",
         "TIMESTAMP_S")


def _castable(have: str, want: str) -> bool:
    """Whether a Parquet column of type ``have`` reads as the store's ``want`` without failing."""
    def family(t: str) -> str:
        base = t.split("(")[0].upper()
        return "num" if base in _NUMERIC else "time" if base in _TIME else base
    return have == want or want.upper() == "VARCHAR" or family(have) == family(want)


def _record_bad_files(con, bad: list[tuple[str, str]], errors_view: str | None) -> None:
    """Bad files as ``ingest_errors`` rows (source ``lake``), beside the lake's own rows."""
    if not bad:
        return
    rows = [(file, reason) for file, reason in bad]
    if errors_view is None:  # ingest_errors is still the store's table
        con.executemany("INSERT INTO ingest_errors VALUES (?, NULL, ?, 'lake', 'error')", rows)
        return
    con.execute("CREATE TABLE lake_file_errors (file VARCHAR NOT NULL, line BIGINT, reason"
                " VARCHAR NOT NULL, source VARCHAR NOT NULL, severity VARCHAR NOT NULL)")
    con.executemany("INSERT INTO lake_file_errors VALUES (?, NULL, ?, 'lake', 'error')", rows)
    con.execute(f"CREATE OR REPLACE VIEW ingest_errors AS {errors_view}"
                " UNION ALL SELECT * FROM lake_file_errors")


def _filter(table: str, users: tuple[str, ...], machines: tuple[str, ...]) -> str:
    """The WHERE clause keeping the chosen users' and machines' partitions."""
    if not layout.partitions(table):
        return ""
    clauses = []
    for column, values in (("user", users), ("machine", machines)):
        if values:
            clauses.append(f'"{column}" IN ({", ".join(_quote(v) for v in values)})')
    return (" WHERE " + " AND ".join(clauses)) if clauses else ""
