"""Create and describe the store from its model files: models/<layer>/<name>.sql and .yml.

One model (table, view or table macro) per file, by layer (raw, staging, marts, rules; see
:mod:`brainlab.store.graph`): the .sql files are the schema's single source, created in the
order their dependencies give; each .yml says what its table, view or macro and each column
means. Both are applied by :func:`open_writer`, which also writes every description into
DuckDB with ``COMMENT ON`` so users see them in any client. ``violations`` and the per-rule
filter views are rendered from a template over the rule catalogue (:mod:`rulebook`). yaml,
jinja2 and the duckdb package are imported where used: opening an existing store needs
neither (issue 12, a small incremental ingest: ~60 + 10 ms of imports). The SQL and YAML
files are read from the package folder (``importlib.resources`` and the zipfile, tempfile
and shutil modules it imports cost 6-10 ms of every ingest run), and a store remembers the
stat of the files its catalogue was checked against, so opening it does not hash them again.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from brainlab.common.errors import StoreError
from brainlab.common.paths import DEFAULT_DB
from brainlab.store.catalog import (  # noqa: F401  (LOOKUP_TABLES, stale_schema re-exported)
    FOLDER,
    LOOKUP_TABLES,
    META,
    SCHEMA_VERSION,
    current_schema,
    newer_store,
    schema_fingerprint,
    sql_files,
    stale_schema,
)
from brainlab.store.connection import StoreConfig, connect, drop_orphan_wal, engine

if TYPE_CHECKING:
    import duckdb

_SPEC = Path(__file__).parent.parent / "spec"
# the spec files whose constants catalog_fingerprint() hashes (see catalog_files_key)
_SPEC_SOURCES = ("vocabulary.py", "modes.py", "rules.py", "stops.py", "session_types.py",
                 "budget_rule.py", "weeks.py", "thresholds.py")
LAYERS = ("raw", "staging", "marts", "rules")  # as brainlab.store.graph (not imported at open)


@lru_cache(maxsize=1)
def models() -> dict[str, dict]:
    """Every documented table, view and macro, by name, from models/<layer>/<name>.yml.

    In layer order (raw, staging, marts, rules), then by name; each entry's ``_file`` is its
    path under models/ and ``_layer`` its layer. A model of rules/ gets the violation
    contract's seven columns (:func:`rulebook.violation_contract`) after those its yml lists. A file
    whose name starts with ``_`` is not a model.
    """
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: 10x faster, same documents
    from brainlab.store.rulebook import violation_contract

    contract = violation_contract()
    out: dict[str, dict] = {}
    for layer in LAYERS:
        for entry in sorted((FOLDER / layer).glob("[!_]*.yml")):
            model = yaml.load(entry.read_text(encoding="utf-8"), Loader=loader) or {}
            model["_file"] = f"{layer}/{entry.name}"
            model["_layer"] = layer
            if layer == "rules":
                model["columns"] = [*model.get("columns", []),
                                    *_contract_for(contract, model.get("rule"))]
            out[model["name"]] = model
    return out


def _contract_for(contract: tuple[dict, ...], rule: dict | None) -> list[dict]:
    """The violation contract's columns, subject_kind's description naming a rule's kind."""
    if not rule:
        return [dict(column) for column in contract]
    return [{**column, "description": f"What broke the rule: {rule['subject_kind']}."}
            if column["name"] == "subject_kind" else dict(column) for column in contract]


def _model_files() -> list[Path]:
    """Every file under models/ (its layer folders), in path order."""
    return sorted(p for p in FOLDER.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


@lru_cache(maxsize=1)
def catalog_fingerprint() -> str:
    """A hash of everything apply() writes: tables, views, model docs and protocol lookups."""
    from brainlab.spec import budget_rule, modes, session_types, stops, thresholds, vocabulary, weeks

    digest = hashlib.sha256(schema_fingerprint().encode())
    for entry in _model_files():
        digest.update(entry.relative_to(FOLDER).as_posix().encode() + b"\0" + entry.read_bytes())
    digest.update(repr((sorted(vocabulary.SESSION_CATEGORIES.items()),
                        sorted(vocabulary.CLAIM_TTL_HOURS.items()),
                        sorted(stops.STOP_CODES.items()), vocabulary.SCORED_CATEGORIES,
                        sorted(vocabulary.WORKSPACE_RETENTION_DAYS.items()))).encode())
    digest.update(repr(thresholds.Thresholds()).encode())  # the models' {{ thresholds.* }}
    digest.update(repr((modes.MODES, modes.PERIMETERS, modes.BUDGETS,
                        budget_rule.BUDGET_OVER_SQL, budget_rule.BUDGET_WATCH_SQL,
                        weeks.MACROS)).encode())
    digest.update(repr(sorted(session_types.SESSION_TYPE_SETS.items())).encode())
    return digest.hexdigest()[:16]


def catalog_files_key() -> str:
    """The folder, and each file's name, size and mtime, of what catalog_fingerprint() reads.

    Equal keys mean the same package files, hence the same fingerprint: a store keeps the
    key it was last checked with (``catalog_files`` in brainlab_meta), so opening it costs
    ~360 stats instead of reading and hashing those files and importing the protocol tables
    (8-13 ms of every ingest run, issue 12). Any edit or reinstall changes a key.
    """
    parts = [str(FOLDER.resolve())]
    for layer in sorted(os.scandir(FOLDER), key=lambda e: e.name):
        if not layer.is_dir():
            continue
        for entry in sorted(os.scandir(layer), key=lambda e: e.name):
            stat = entry.stat()
            parts.append(f"{layer.name}/{entry.name}:{stat.st_size}:{stat.st_mtime_ns}")
    for name in _SPEC_SOURCES:
        stat = os.stat(_SPEC / name)
        parts.append(f"spec/{name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def apply(con: duckdb.DuckDBPyConnection, describe: bool = True) -> bool:
    """Create tables, (re)create views and comments; return True when the store was upgraded.

    A store written with other table definitions is upgraded in the same transaction:
    recorded rows carried over, derived tables dropped for the next ingest to recompute
    (:mod:`brainlab.store.upgrade`); a store whose rows do not fit raises StoreError.

    ``describe=False`` skips the ``COMMENT ON`` statements (a throw-away in-memory store, such
    as ``brainlab check``'s, has no reader to show them to; they are half the set-up time).

    When the database already carries this exact catalog (same fingerprint), nothing is
    rewritten: opening a writer then costs one lookup instead of hundreds of statements.
    """
    con.execute((FOLDER / "raw" / f"{META}.sql").read_text(encoding="utf-8"))
    stored = dict(con.execute("SELECT key, value FROM brainlab_meta").fetchall())
    refused = None
    if stored.get("schema_version") not in (None, str(SCHEMA_VERSION)):
        refused = newer_store(stored, _store_path(con), writing=True)
    if refused:  # an older brainlab never "upgrades" a newer store (issue 47 item 5)
        raise StoreError(refused)
    files = catalog_files_key()
    if stored.get("catalog") and stored.get("catalog_files") == files:
        _record_release(con, stored)
        return False  # checked against these very files before
    catalog = catalog_fingerprint()
    if stored.get("catalog") == catalog:
        con.execute("INSERT OR REPLACE INTO brainlab_meta VALUES ('catalog_files', ?)", [files])
        _record_release(con, stored)
        return False
    from brainlab.store import graph, rulebook

    fingerprint = schema_fingerprint()
    rebuilt = bool(stored.get("schema")) and not current_schema(stored["schema"])
    ordered = graph.ordered()
    con.execute("BEGIN TRANSACTION")
    try:
        if rebuilt:  # keep recorded rows (store/upgrade.py), all in this one transaction
            from brainlab.store import upgrade

            summary, moved = upgrade.move_aside(con, stored["schema"])
        for model in ordered:  # the raw tables first: nothing they read
            if model.layer == "raw":
                con.execute(model.sql)
        if rebuilt:
            upgrade.carry_over(con, summary, moved, _store_path(con))
        _write_lookups(con)
        for model in ordered:
            if model.layer != "raw":
                con.execute(model.sql)
        con.execute(rulebook.render())
        if describe:
            _write_comments(con)
        con.execute("INSERT OR REPLACE INTO brainlab_meta VALUES ('schema', ?), ('catalog', ?),"
                    " ('catalog_files', ?)", [fingerprint, catalog, files])
        _record_release(con, {})
        if rebuilt:
            upgrade.kill_point("commit")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    if rebuilt:
        upgrade.DONE.append(summary)
    return rebuilt


def _record_release(con: duckdb.DuckDBPyConnection, stored: dict) -> None:
    """Record this package's schema version and release in brainlab_meta (when they differ)."""
    from brainlab import __version__

    if (stored.get("schema_version") != str(SCHEMA_VERSION)
            or stored.get("release") != __version__):
        con.execute("INSERT OR REPLACE INTO brainlab_meta VALUES ('schema_version', ?),"
                    " ('release', ?)", [str(SCHEMA_VERSION), __version__])


def _store_path(con: duckdb.DuckDBPyConnection) -> str:
    row = con.execute("SELECT path FROM duckdb_databases() WHERE database_name ="
                      " current_database()").fetchone()
    return row[0] if row and row[0] else "the store"




def _write_lookups(con: duckdb.DuckDBPyConnection) -> None:
    """The spec layer's vocabulary (brainlab.spec), as tables the views join.

    Each table was just (re)created empty by its raw model (models/raw/<name>.sql).
    """
    from brainlab.spec import session_types, vocabulary

    con.executemany("INSERT INTO session_categories VALUES (?, ?)",
                    sorted(vocabulary.SESSION_CATEGORIES.items()))
    con.executemany("INSERT INTO claim_ttl VALUES (?, ?)",
                    sorted(vocabulary.CLAIM_TTL_HOURS.items()))
    con.executemany("INSERT INTO scored_categories VALUES (?)",
                    [(c,) for c in vocabulary.SCORED_CATEGORIES])
    con.executemany("INSERT INTO workspace_retention VALUES (?, ?)",
                    sorted(vocabulary.WORKSPACE_RETENTION_DAYS.items()))
    con.executemany("INSERT INTO session_type_sets VALUES (?, ?, ?)",
                    [(name, t, spec) for name, (spec, types)
                     in sorted(session_types.SESSION_TYPE_SETS.items()) for t in types])
    _write_rule_lookups(con)
    _write_mode_lookups(con)


def _write_rule_lookups(con: duckdb.DuckDBPyConnection) -> None:
    """The compliance rule catalogue (the rule ymls) and the SPEC §6.2 stop table."""
    from brainlab.spec.stops import STOP_CODES
    from brainlab.store.rulebook import load_rules

    con.executemany("INSERT INTO rule_catalogue VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [(r.id, r.name, r.spec, r.seed, r.subject_kind, r.severity, r.checks,
                      r.evidence) for r in load_rules()])
    con.executemany("INSERT INTO stop_codes VALUES (?, ?)", sorted(STOP_CODES.items()))


# the macros the store writes from brainlab.spec (no .sql file: the one rule lives in
# spec/budget_rule.py, which the status line also applies, and spec/weeks.py, which the
# report's weeks apply); documented by their .yml alone
SPEC_MACROS = ("budget_over", "budget_watch", "week_first_day", "week_label")


def _write_mode_lookups(con: duckdb.DuckDBPyConnection) -> None:
    """ADR-019 session modes, their perimeters and the SPEC §3.3 budgets (brainlab.spec.modes)."""
    from brainlab.spec import budget_rule, modes, weeks

    con.executemany("INSERT INTO session_modes VALUES (?, ?, ?, ?)",
                    [(m.name, m.kind, m.mode_file, m.source) for m in modes.MODES])
    con.executemany("INSERT INTO mode_perimeters VALUES (?, ?, ?, ?, ?)",
                    [(p.mode, p.action, p.refused, p.allowed, p.source)
                     for p in modes.PERIMETERS])
    con.executemany("INSERT INTO mode_budgets VALUES (?, ?, ?, ?, ?)",
                    [(b.mode, b.watch_pct, b.max_pct, b.min_commits, b.source)
                     for b in modes.BUDGETS])
    # the rule budgets are read by, as the status line reads it (spec/budget_rule.py)
    con.execute("CREATE OR REPLACE MACRO budget_over(pct, commits, max_pct, min_commits) AS"
                f" ({budget_rule.BUDGET_OVER_SQL})")
    con.execute("CREATE OR REPLACE MACRO budget_watch(pct, watch_pct) AS"
                f" ({budget_rule.BUDGET_WATCH_SQL})")
    for statement in weeks.MACROS.values():  # a week's first day and label, as Week's
        con.execute(statement)


def _write_comments(con: duckdb.DuckDBPyConnection) -> None:
    kinds = dict(con.execute(
        "SELECT table_name, 'TABLE' FROM duckdb_tables() WHERE schema_name = 'main' UNION ALL "
        "SELECT view_name, 'VIEW' FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'"
    ).fetchall())
    statements = []
    for name, model in models().items():
        kind = kinds.get(name)
        if kind is None:
            continue  # macros and not-yet-created relations carry no comment
        text = (model.get("description") or "").strip()
        grain = model.get("grain")
        if grain:
            text = f"{text} Grain: {grain}." if text else f"Grain: {grain}."
        statements.append(f'COMMENT ON {kind} "{name}" IS ' + _quote(text))
        for column in model.get("columns", []):
            statements.append(
                f'COMMENT ON COLUMN "{name}"."{column["name"]}" IS '
                + _quote(column.get("description", ""))
            )
    if statements:  # one call: hundreds of separate execute() calls cost a third of a second
        con.execute(";\n".join(statements))


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def open_writer(path: str | os.PathLike = DEFAULT_DB, describe: bool = True,
                engine_only: bool = False,
                lock_wait: float | None = None) -> duckdb.DuckDBPyConnection:
    """Open the store read-write with its schema in place (the ingest commands' entry point).

    A store that does not exist yet is a copy of the cached empty store (:mod:`template`),
    built first when missing; when the cache is unusable it is built in place.
    ``engine_only``: open with DuckDB's engine module alone (``connection.engine``), for a
    caller that only executes SQL (the transcript ingest: 45-60 ms less to import).
    ``lock_wait``: seconds to wait for a store another process holds (None: the default
    ``LOCK_WAIT``; 0: try once).
    """
    if describe and str(path) != ":memory:" and not Path(path).exists():
        drop_orphan_wal(path)
        con = _from_template(Path(path), engine_only)
        if con is not None:
            return con
    con = connect(StoreConfig(path=Path(path), read_only=False, engine_only=engine_only,
                              lock_wait=lock_wait))
    try:
        apply(con, describe=describe)
        from brainlab.store.ranges_repair import repair

        repair(con)  # values an older release stored out of range (issue 47): once a store
    except BaseException:
        con.close()
        raise
    return con


def template_key(files: str | None = None) -> str:
    """What an empty store depends on: the catalogue's files, brainlab's version and DuckDB's.

    The files by their stat (:func:`catalog_files_key`, as a store's own catalogue check):
    hashing their contents (:func:`catalog_fingerprint`, 15-20 ms) was most of what finding
    the template cost each process creating a store. Another install or an edit of those
    files gets a template of its own. ``files``: :func:`catalog_files_key` when known.
    """
    from brainlab import __version__

    text = f"{files or catalog_files_key()}|{__version__}|{engine().__version__}"  # no package: 40 ms
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@contextmanager
def empty_store() -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to an empty store of this catalogue, to read its shape.

    The cached template when it can be had (built first when missing), opened with the
    engine module alone (its callers fetch rows), else a store built in memory (what callers
    did before: 1.2-1.5 CPU-s).
    """
    from brainlab.store import template

    source = template.ensure(template_key(), _build_empty)
    con = None
    if source is not None:
        try:
            con = connect(StoreConfig(path=source, read_only=True, engine_only=True))
        except StoreError:
            con = None
    if con is None:
        con = connect(StoreConfig(path=Path(":memory:"), read_only=False))
        try:
            apply(con)
        except BaseException:
            con.close()
            raise
    try:
        yield con
    finally:
        con.close()


def template_ready() -> bool:
    """True when a new store would be a copy of the cached empty store (nothing to build)."""
    from brainlab.store import template

    return template.cached(template_key())


def _build_empty(path: Path) -> None:
    con = connect(StoreConfig(path=path, read_only=False))
    try:
        apply(con)
        from brainlab.store.ranges_repair import repair

        repair(con)  # nothing to move: records the ranges key every new store starts with
    finally:
        con.close()


def _from_template(path: Path, engine_only: bool = False
                   ) -> duckdb.DuckDBPyConnection | None:
    """The new store at ``path`` as a copy of the template; None to build it in place.

    A copy that does not open, or was built neither from these package files nor with this
    catalogue's fingerprint (a corrupt or foreign template), is removed with its template,
    which is then built again, once.
    """
    from brainlab.store import template

    files = catalog_files_key()
    key = template_key(files)
    for _attempt in range(2):
        source = template.ensure(key, _build_empty)
        try:
            if source is None or not template.copy_to(source, path):
                return None
        except OSError:
            return None
        try:
            con = connect(StoreConfig(path=path, read_only=False, engine_only=engine_only))
        except StoreError:
            con = None
        if con is not None:
            try:
                stored = dict(con.execute("SELECT key, value FROM brainlab_meta WHERE key IN"
                                          " ('catalog', 'catalog_files')").fetchall())
            except engine().Error:
                stored = {}
            if stored.get("catalog") and stored.get("catalog_files") == files:
                return con  # built from these very files (as apply() trusts a store)
            if stored.get("catalog") == catalog_fingerprint():  # later opens: the stat only
                con.execute("INSERT OR REPLACE INTO brainlab_meta VALUES ('catalog_files', ?)",
                            [files])
                return con
            con.close()
        for leftover in (path, path.with_name(path.name + ".wal")):
            leftover.unlink(missing_ok=True)
        template.discard(key)
    return None
