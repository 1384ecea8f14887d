"""Stores know their version (issue 47 item 5): an older brainlab never writes a newer store.

A store records its schema version (an integer that only grows) and the release that last
wrote it in ``brainlab_meta``. The older release is simulated as the issue allows: in a
subprocess, this package with its version constants lowered and its model files as an older
release had them (``cc_request_lines`` without ``git_branch``; the dedup view adds it as NULL
so its views still build), run through the real CLI against a copy of a store this code wrote.
The control (the same older model files, the version not lowered, so the store looks older
or equal) shows what the refusal prevents: the upgrade drops ``git_branch`` for good.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from conftest import cli_env

from brainlab import __version__
from brainlab.common.errors import StoreError
from brainlab.store import open_writer, query
from brainlab.store.catalog import SCHEMA_VERSION, SCHEMA_VERSION_FINGERPRINT, schema_fingerprint

# the older release: run with ``python OLD lowered|same ARGS...``; lowers the version
# constants (``lowered``) and points the store code at the older model files, then runs the CLI
OLD = '''
import re, shutil, sys, tempfile
from pathlib import Path
import brainlab
from brainlab.store import catalog, graph, schema
lowered = sys.argv.pop(1) == "lowered"
old = Path(tempfile.mkdtemp()) / "models"
shutil.copytree(catalog.FOLDER, old)
table = old / "raw" / "cc_request_lines.sql"
table.write_text(re.sub(r"\\n\\s*git_branch\\s+VARCHAR,[^\\n]*", "", table.read_text()))
doc = old / "raw" / "cc_request_lines.yml"
doc.write_text("".join(x for x in doc.read_text().splitlines(True) if "name: git_branch" not in x))
dedup = old / "staging" / "cc_request_dedup.sql"
dedup.write_text(dedup.read_text().replace(
    "SELECT * FROM cc_request_lines", "SELECT *, NULL::VARCHAR AS git_branch FROM cc_request_lines", 1))
catalog.FOLDER = schema.FOLDER = graph.FOLDER = old
graph.model_files.__defaults__ = (old,)
if lowered:
    brainlab.__version__ = "0.0.9"
    catalog.SCHEMA_VERSION = schema.SCHEMA_VERSION = catalog.SCHEMA_VERSION - 1
from brainlab.cli import run
sys.argv[0] = "brainlab"
run()
'''


def test_the_version_changes_with_the_tables():
    """A raw table changed without a new version would let an older brainlab drop it."""
    assert schema_fingerprint() == SCHEMA_VERSION_FINGERPRINT, (
        "the raw tables changed: add one to SCHEMA_VERSION in brainlab/store/catalog.py and"
        f" set SCHEMA_VERSION_FINGERPRINT = {schema_fingerprint()!r}")


def _branches(db: Path) -> int | None:
    con = duckdb.connect(str(db), read_only=True)
    try:
        columns = {r[0] for r in con.execute("SELECT column_name FROM duckdb_columns()"
                                             " WHERE table_name = 'cc_request_lines'").fetchall()}
        if "git_branch" not in columns:
            return None
        return con.execute("SELECT count(git_branch) FROM cc_request_lines").fetchone()[0]
    finally:
        con.close()


def _meta(db: Path) -> dict:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return dict(con.execute("SELECT key, value FROM brainlab_meta").fetchall())
    finally:
        con.close()


def test_an_older_release_never_writes_a_newer_store(corpus_store, tmp_path):
    store, control = tmp_path / "store.duckdb", tmp_path / "control.duckdb"
    shutil.copy(corpus_store, store)
    shutil.copy(corpus_store, control)
    assert _meta(store)["schema_version"] == str(SCHEMA_VERSION)
    assert _meta(store)["release"] == __version__
    branches = _branches(store)
    assert branches and branches > 0
    script = tmp_path / "old_brainlab.py"
    script.write_text(OLD)
    empty = tmp_path / "nothing"
    empty.mkdir()
    env = cli_env(tmp_path)

    def old(mode: str, *args) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(script), mode, *map(str, args)],
                              capture_output=True, text=True, env=env, cwd=tmp_path,
                              timeout=300)

    write = old("lowered", "ingest", "claude", empty, "--db", store)
    assert write.returncode == 1, write.stderr
    (line,) = write.stderr.strip().splitlines()
    assert line.startswith("Error: ") and "brainlab bug" not in line
    assert f"brainlab {__version__} (schema version {SCHEMA_VERSION})" in line  # the store's
    assert f"brainlab 0.0.9 (schema version {SCHEMA_VERSION - 1})" in line  # this one's
    assert "upgrade brainlab" in line
    assert _branches(store) == branches  # git_branch survives, every value
    assert _meta(store)["release"] == __version__

    read = old("lowered", "usage", "daily", "--db", store, "--json")
    assert read.returncode == 0, read.stderr
    warnings = [x for x in read.stderr.splitlines() if x.startswith("Warning: ")]
    assert len(warnings) == 1 and "read only" in warnings[0], read.stderr
    assert read.stdout.strip().startswith("[")
    assert _branches(store) == branches

    # the null test: the same older model files, its version not lowered: it upgrades the
    # store to its tables and git_branch is gone (what issue 47 saw with every older release)
    # (the upgrade commits before the ingest, whose parser of today then finds no column)
    old("same", "ingest", "claude", empty, "--db", control)
    assert _branches(control) is None


def test_this_release_refuses_a_newer_store_and_reads_it(corpus_store, tmp_path, capsys):
    store = tmp_path / "newer.duckdb"
    shutil.copy(corpus_store, store)
    con = duckdb.connect(str(store))
    con.execute("INSERT OR REPLACE INTO brainlab_meta VALUES ('schema_version', ?),"
                " ('release', '9.0.0')", [str(SCHEMA_VERSION + 1)])
    con.close()
    with pytest.raises(StoreError, match=r"brainlab 9\.0\.0 \(schema version \d+\), newer than"
                       r" this brainlab .*upgrade brainlab"):
        open_writer(store)
    assert _meta(store)["release"] == "9.0.0"
    assert not query(store, "SELECT count(*) AS n FROM cc_request_lines").empty
    assert "Warning: " in capsys.readouterr().err
    # a version that is no number is not taken as older either
    con = duckdb.connect(str(store))
    con.execute("UPDATE brainlab_meta SET value = 'x9' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(StoreError, match="not a version number"):
        open_writer(store)


def test_an_older_store_is_upgraded_and_records_the_version(empty_store, tmp_path):
    """Stores from before the version (no key) are upgraded as before, then carry it."""
    store = tmp_path / "older.duckdb"
    shutil.copy(empty_store, store)
    con = duckdb.connect(str(store))
    con.execute("DELETE FROM brainlab_meta WHERE key IN ('schema_version', 'release',"
                " 'catalog', 'catalog_files')")
    con.execute("UPDATE brainlab_meta SET value = '0ld0ld0ld0ld0ld0' WHERE key = 'schema'")
    con.close()
    open_writer(store).close()
    meta = _meta(store)
    assert meta["schema_version"] == str(SCHEMA_VERSION) and meta["release"] == __version__
    assert meta["schema"] == schema_fingerprint()


def test_a_duckdb_file_that_is_no_store_is_one_line(tmp_path):
    """Issue 47 item 4, the store's part: a DuckDB file of another program read by a command
    that queries the store directly ended in "This is a brainlab bug" (exit 70)."""
    from click.testing import CliRunner

    from brainlab.cli import main

    other = tmp_path / "other.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE x (a INTEGER)")
    con.close()
    done = CliRunner().invoke(main, ["usage", "daily", "--db", str(other)])
    assert done.exit_code == 1
    assert done.output.strip().splitlines() == [
        f"Error: database {other} is not a brainlab store (no brainlab_meta table): pass the"
        " --db of a store, or make one with `brainlab ingest ...` or `brainlab demo`"]
