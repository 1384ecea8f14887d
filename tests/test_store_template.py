"""A new store is a copy of the cached empty store (brainlab/store/template.py).

The copy must hold exactly what a store built in place holds; a template of another catalogue
is never reused; a corrupt template is rebuilt; an unusable cache folder or two processes
creating stores at once still give whole stores.
"""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from conftest import built_once, seeded_cache

from brainlab.store import schema, template
from brainlab.store.schema import catalog_fingerprint, open_writer, template_key

# Everything a store's catalogue holds, and the rows of its tables (lookups, meta), in order.
CATALOGUE = {
    "tables": "SELECT table_name, sql, comment FROM duckdb_tables() ORDER BY ALL",
    "views": "SELECT view_name, sql, comment FROM duckdb_views() WHERE NOT internal"
             " ORDER BY ALL",
    "columns": "SELECT table_name, column_name, column_index, data_type, is_nullable,"
               " column_default, comment FROM duckdb_columns() WHERE NOT internal"
               " ORDER BY ALL",
    "macros": "SELECT function_name, macro_definition, parameters::VARCHAR"
              " FROM duckdb_functions() WHERE NOT internal ORDER BY ALL",
    "constraints": "SELECT table_name, constraint_type, constraint_text"
                   " FROM duckdb_constraints() ORDER BY ALL",
    "indexes": "SELECT index_name, table_name, sql FROM duckdb_indexes() ORDER BY ALL",
}


def catalogue(path: Path) -> dict:
    """The catalogue and every table's rows of the store at ``path``."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        out = {name: con.execute(sql).fetchall() for name, sql in CATALOGUE.items()}
        for (table,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall():
            out[f"rows:{table}"] = con.execute(f'SELECT * FROM "{table}" ORDER BY ALL').fetchall()
    finally:
        con.close()
    return out


def built_in_place(path: Path) -> Path:
    """A store built statement by statement, as before the template existed."""
    schema._build_empty(path)
    return path


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> dict:
    """The catalogue of a store built in place, once a run (~3 CPU-s a build; issue 28 item 1:
    once a module was once on each xdist worker running one of this file's tests): what every
    store this package makes must hold. Read only; a test's own stores go elsewhere."""
    def build(folder: Path) -> None:
        (folder / "catalogue.pickle").write_bytes(
            pickle.dumps(catalogue(built_in_place(folder / "scratch.duckdb"))))

    folder = built_once(tmp_path_factory, "store-template-scratch", build)
    return pickle.loads((folder / "catalogue.pickle").read_bytes())


@pytest.fixture
def cache(tmp_path: Path, monkeypatch) -> Path:
    """An empty cache folder of this test's own."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(template.CACHE_ENV, str(folder))
    return folder


@pytest.fixture
def seeded(tmp_path: Path, monkeypatch) -> Path:
    """A cache folder of this test's own holding a copy of the run's template: for the tests
    whose subject is using a template, not building it (~3 CPU-s a build, issue 28 item 1)."""
    folder = seeded_cache(tmp_path / "cache")  # from the run's cache, before it is replaced
    monkeypatch.setenv(template.CACHE_ENV, str(folder))
    return folder


def test_a_new_store_is_a_copy_of_the_template_equal_to_one_built_in_place(tmp_path, cache,
                                                                           scratch):
    open_writer(tmp_path / "first.duckdb").close()  # builds the template, then copies it
    assert [p.name for p in cache.iterdir()] == [template.template_path(template_key()).name]
    open_writer(tmp_path / "second.duckdb").close()  # the template as it is: copied only
    assert len(scratch["views"]) > 50 and any(c[-1] for c in scratch["columns"])
    assert catalogue(tmp_path / "first.duckdb") == scratch
    assert catalogue(tmp_path / "second.duckdb") == scratch


def test_an_existing_store_is_opened_not_replaced(tmp_path, seeded):
    db = tmp_path / "store.duckdb"
    con = open_writer(db)
    con.execute("INSERT INTO brainlab_meta VALUES ('mine', 'kept')")
    con.close()
    con = open_writer(db)
    try:
        assert con.execute("SELECT value FROM brainlab_meta WHERE key = 'mine'"
                           ).fetchone() == ("kept",)
    finally:
        con.close()


def test_a_deleted_stores_wal_is_not_replayed_into_a_new_store(tmp_path, seeded, scratch):
    """A store deleted while its WAL stays (a writer killed before its checkpoint):
    DuckDB would replay that WAL into the
    new copy of the template it was written against. The new store holds none of it."""
    db = tmp_path / "store.duckdb"
    con = open_writer(db)
    con.execute("PRAGMA disable_checkpoint_on_shutdown")  # the WAL stays beside the store
    con.execute("INSERT INTO brainlab_meta VALUES ('stale', 'from the deleted store')")
    con.close()
    assert (tmp_path / "store.duckdb.wal").exists()
    db.unlink()
    con = open_writer(db)
    try:
        assert con.execute("SELECT count(*) FROM brainlab_meta WHERE key = 'stale'"
                           ).fetchone() == (0,)
    finally:
        con.close()
    assert catalogue(db) == scratch


def test_an_open_store_trusts_its_catalogue_only_for_the_same_package_files(tmp_path, seeded,
                                                                           scratch):
    """A store keeps the stat key of the package files its catalogue was checked against
    (schema.catalog_files_key, issue 12): while they are the same, opening it hashes
    nothing; another key (an edited or reinstalled package) checks the catalogue again and
    re-applies it when it differs."""
    from brainlab.store.schema import catalog_files_key

    db = tmp_path / "store.duckdb"
    open_writer(db).close()

    def meta():
        with duckdb.connect(str(db), read_only=True) as con:
            return dict(con.execute("SELECT key, value FROM brainlab_meta").fetchall())

    assert meta()["catalog_files"] == catalog_files_key()
    with duckdb.connect(str(db)) as con:  # as if written by other package files
        con.execute("UPDATE brainlab_meta SET value = 'other' WHERE key = 'catalog_files'")
        con.execute("UPDATE brainlab_meta SET value = 'older' WHERE key = 'catalog'")
        con.execute("DROP VIEW usage_daily")
    open_writer(db).close()
    assert meta()["catalog_files"] == catalog_files_key()
    assert meta()["catalog"] == catalog_fingerprint()
    assert catalogue(db) == scratch


def test_a_corrupt_template_is_rebuilt(tmp_path, seeded):
    open_writer(tmp_path / "first.duckdb").close()
    cached = template.template_path(template_key())
    cached.write_bytes(b"not a database" * 1000)
    db = tmp_path / "second.duckdb"
    open_writer(db).close()
    assert catalogue(db) == catalogue(tmp_path / "first.duckdb")
    con = duckdb.connect(str(cached), read_only=True)  # whole again
    try:
        assert con.execute("SELECT value FROM brainlab_meta WHERE key = 'catalog'"
                           ).fetchone() == (catalog_fingerprint(),)
    finally:
        con.close()


def test_a_template_of_another_catalogue_is_not_reused(tmp_path, seeded):
    """A changed view file (a copy of the package, run in a child process) gets its own
    template; the store made from it has the new view, one made by this package has not."""
    open_writer(tmp_path / "ours.duckdb").close()
    package = tmp_path / "pkg"
    shutil.copytree(Path(template.__file__).parents[1], package / "brainlab",
                    ignore=shutil.ignore_patterns("__pycache__"))
    views = package / "brainlab" / "store" / "models" / "marts" / "sessions.sql"
    views.write_text(views.read_text() + "\nCREATE OR REPLACE VIEW template_probe AS"
                     " SELECT 1 AS probe;\n")
    changed = tmp_path / "changed.duckdb"
    subprocess.run([sys.executable, "-c", "import sys; from brainlab.store import open_writer;"
                    " open_writer(sys.argv[1]).close()", str(changed)],
                   env={"PYTHONPATH": str(package), template.CACHE_ENV: str(seeded),
                        "PATH": "/usr/bin:/bin"}, cwd=tmp_path, check=True)
    assert len(list(seeded.glob("empty-store-*.duckdb"))) == 2
    probe = "SELECT count(*) FROM duckdb_views() WHERE view_name = 'template_probe'"
    assert duckdb.connect(str(changed), read_only=True).execute(probe).fetchone() == (1,)
    again = tmp_path / "again.duckdb"
    open_writer(again).close()
    assert duckdb.connect(str(again), read_only=True).execute(probe).fetchone() == (0,)


def test_an_unusable_cache_folder_builds_in_place(tmp_path, monkeypatch, scratch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(template.CACHE_ENV, str(blocker / "cache"))
    db = tmp_path / "store.duckdb"
    open_writer(db).close()
    assert catalogue(db) == scratch
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "store.duckdb"]


def test_two_processes_creating_stores_at_once(tmp_path, cache, scratch):
    """Both build the missing template at the same time: two whole stores, one template,
    no temporary file left in the cache or beside the stores."""
    code = ("import sys; from brainlab.store import open_writer;"
            " open_writer(sys.argv[1]).close()")
    children = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path / f"s{i}.duckdb")])
                for i in range(2)]
    assert [child.wait(timeout=120) for child in children] == [0, 0]
    assert [p.name for p in cache.iterdir()] == [template.template_path(template_key()).name]
    assert catalogue(tmp_path / "s0.duckdb") == scratch == catalogue(tmp_path / "s1.duckdb")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "s0.duckdb", "s1.duckdb"]


def test_building_a_template_keeps_only_the_newest_few(tmp_path, cache):
    """Each catalogue change makes a template: older ones are removed, the newest kept."""
    cache.mkdir()
    old = [cache / f"empty-store-old{i}.duckdb" for i in range(template.KEEP + 2)]
    for age, path in enumerate(old, 1):
        path.write_bytes(b"an older template")
        os.utime(path, (1_000_000 - age, 1_000_000 - age))  # old[0] the newest of them
    open_writer(tmp_path / "store.duckdb").close()
    kept = sorted(p.name for p in cache.iterdir())
    assert kept == sorted([template.template_path(template_key()).name]
                          + [p.name for p in old[:template.KEEP - 1]])


def test_empty_store_reads_the_template(tmp_path, seeded, scratch):
    """The lake reads the store's shape from the template (no catalogue built in memory)."""
    from brainlab.lake.layout import store_columns
    from brainlab.store.schema import empty_store

    with empty_store() as con:
        shape = con.execute(CATALOGUE["columns"]).fetchall()
        assert con.execute("SELECT current_database()").fetchone()[0].startswith("empty-store-")
    assert shape == scratch["columns"]
    assert [p.name for p in seeded.iterdir()] == [template.template_path(template_key()).name]
    assert "cc_request_lines" in store_columns()
