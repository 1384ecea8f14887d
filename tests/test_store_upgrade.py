"""A store written with an older schema is upgraded in place and keeps its recorded rows.

Issue 24 ("Nothing is forgotten"), DESIGN "The store is the record": store/upgrade.py. The
older schema is simulated on a store built by this code from real transcripts: its schema
fingerprint replaced, and its tables altered to look like an older definition (a column the
new schema adds is dropped, a column the new schema removed is added, a table the new schema
adds is dropped, a derived table lacks a column). Then one transcript file is deleted.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from conftest import CORPUS, TEMPLATE_BRAIN

from brainlab.store import open_writer, upgrade
from brainlab.store.schema import empty_store
from brainlab.transcripts.ingest import ingest_claude

PROJECTS = ("-home-moxa-sda2-home-moxa-WORK-ci-project", "-Users-paul-src-entireio-cli",
            "-home-ken-next-mavens-flow")
GONE_PROJECT = "-Users-paul-src-entireio-cli"  # its one transcript is deleted (30-day cleanup)
BOOKKEEPING = {"cc_files", "ingest_files"}  # runs, offsets: differ from a fresh store's


def cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brainlab.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("upgrade") / "projects"
    for name in PROJECTS:
        shutil.copytree(CORPUS / "projects" / name, root / name)
    return root


@pytest.fixture(scope="module")
def current_store(corpus, tmp_path_factory) -> Path:
    """A store of the three projects, written by this code."""
    path = tmp_path_factory.mktemp("current") / "brainlab.duckdb"
    con = open_writer(path)
    try:
        ingest_claude(con, corpus, workers=1)
    finally:
        con.close()
    return path


def make_old(store: Path, target: Path) -> Path:
    """A copy of ``store`` that looks written by an older brainlab."""
    shutil.copy(store, target)
    con = duckdb.connect(str(target))
    try:
        con.execute("UPDATE brainlab_meta SET value = '0ld0ld0ld0ld0ld0' WHERE key = 'schema'")
        con.execute("DELETE FROM brainlab_meta WHERE key IN ('catalog', 'catalog_files')")
        con.execute("ALTER TABLE cc_request_lines DROP COLUMN speed")  # the new schema adds it
        con.execute("ALTER TABLE cc_spans ADD COLUMN legacy_note VARCHAR DEFAULT 'old'")  # gone
        con.execute("DROP TABLE cc_compactions")  # a table the new schema adds
        con.execute("ALTER TABLE cc_usage_rollup DROP COLUMN cost_usd")  # derived, changed
    finally:
        con.close()
    return target


def counts(path: Path, where: str = "") -> dict[str, int]:
    """Each table's row count (``where``: only tables with a ``source_file``), in one query
    (a query a table cost ~0.1 CPU-s a call, now ~0.05; ~20 calls: issue 40)."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        tables = [r[0] for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'"
            + (" AND table_name IN (SELECT table_name FROM duckdb_columns() WHERE"
               " column_name = 'source_file')" if where else "")).fetchall()]
        if not tables:
            return {}
        row = con.execute("SELECT " + ", ".join(
            f'(SELECT count(*) FROM "{table}" {where})' for table in tables)).fetchone()
        return dict(zip(tables, row, strict=True))
    finally:
        con.close()


def gone_file(corpus: Path) -> str:
    (path,) = (corpus / GONE_PROJECT).rglob("*.jsonl")
    return str(path)


def test_upgrade_keeps_rows_of_a_deleted_transcript(corpus, current_store, tmp_path):
    old = make_old(current_store, tmp_path / "old.duckdb")
    gone = gone_file(corpus)
    where = f"WHERE source_file = '{gone}'"
    before = counts(old, where)
    assert before["cc_request_lines"] > 0 and before["cc_files"] == 1
    con = open_writer(old)  # what every ingest does first
    try:
        assert con.execute("SELECT count(*) FROM cc_request_lines WHERE speed IS NOT NULL"
                           " AND source_file = ?", [gone]).fetchone()[0] == 0  # default NULL
        assert "legacy_note" not in {r[0] for r in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = 'cc_spans'").fetchall()}
        assert con.execute("SELECT count(*) FROM cc_compactions").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM cc_usage_rollup").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM brainlab_meta WHERE key = 'cc_usage_rollup'"
                           ).fetchone()[0] == 0
        assert set(r[0] for r in con.execute("SELECT DISTINCT head_sha256 FROM cc_files"
                                             ).fetchall()) == {"upgraded"}
    finally:
        con.close()
    summary = upgrade.DONE.pop()
    assert summary.old_schema == "0ld0ld0ld0ld0ld0"
    assert summary.columns_dropped == ["cc_spans.legacy_note"]
    assert "cc_usage_rollup" in summary.derived and "cc_compactions" not in summary.derived
    after = counts(old, where)
    recorded = set(before) - upgrade.DERIVED - {"cc_compactions"}
    assert {t: after[t] for t in recorded} == {t: before[t] for t in recorded}


def test_ingest_after_upgrade_equals_a_fresh_ingest(corpus, current_store, tmp_path):
    """Through the CLI: one upgrade line, present files re-read exactly as a fresh store.

    The fresh store is made as a user's would be: the three projects ingested, then the gone
    file deleted and ingested again, so it keeps that file's rows (issue 24, nothing is
    forgotten) as the upgraded store does. Compared with a store that never saw the file, the
    upgraded store holds exactly that file's kept rows more (66 request lines, 66 tool calls,
    2 marks, 1 span): what the former xfail reported as a defect. Then the file comes back:
    both stores read it again once, and equal a store that always had it. The first ingest
    of the fresh store is ``current_store``'s, copied (one CLI ingest less, issue 28 item 1).
    """
    old = make_old(current_store, tmp_path / "old.duckdb")
    fresh = tmp_path / "fresh.duckdb"
    shutil.copy(current_store, fresh)
    # the store names files under ``corpus``: ingest that very folder, minus the gone file
    gone = gone_file(corpus)
    saved = tmp_path / "saved.jsonl"
    shutil.copy(gone, saved)
    os.unlink(gone)
    try:
        done = cli("ingest", "claude", corpus, "--db", old, cwd=tmp_path)
        again = cli("ingest", "claude", corpus, "--db", fresh, cwd=tmp_path)
    finally:
        shutil.copy(saved, gone)
    assert done.returncode == 0, done.stderr
    assert again.returncode == 0, again.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("store upgraded")]
    assert len(lines) == 1 and "from schema 0ld0ld0ld0ld0ld0" in lines[0], done.stdout
    assert "derived tables to recompute" in lines[0]
    assert "store upgraded" not in again.stdout
    for out in (done.stdout, again.stdout):
        assert "1 file(s) gone from disk, their rows kept" in out, out
    assert counts(old, f"WHERE source_file = '{gone}'")["cc_request_lines"] == 66
    assert_same_tables(old, fresh, skip=BOOKKEEPING)
    con = duckdb.connect(str(old), read_only=True)
    try:
        con.execute(f"ATTACH '{fresh}' AS fresh (READ_ONLY)")
        # the bookkeeping: every present file read again whole, as a fresh store's
        same = ("SELECT source_file, bytes_done, lines_done, pending_bytes, head_sha256,"
                " rows_loaded, errors FROM {}.cc_files WHERE gone_at IS NULL")
        assert con.execute(f"SELECT count(*) FROM ({same.format('main')} EXCEPT ALL"
                           f" {same.format('fresh')})").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FILTER (gone_at IS NULL), count(*) FILTER"
                           " (gone_at IS NOT NULL) FROM cc_files").fetchone() == (4, 1)
    finally:
        con.close()
    # the file is restored: read again once (its old rows replaced), never counted twice
    for store in (old, fresh):
        back = cli("ingest", "claude", corpus, "--db", store, cwd=tmp_path)
        assert back.returncode == 0, back.stderr
        assert_same_tables(current_store, store, skip=BOOKKEEPING)


def assert_same_tables(store: Path, fresh: Path, skip=frozenset()) -> None:
    """Every table of ``fresh`` holds the same rows in ``store`` (EXCEPT ALL both ways)."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        con.execute(f"ATTACH '{fresh}' AS fresh (READ_ONLY)")
        tables = [r[0] for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'fresh'"
            " AND schema_name = 'main' AND table_name <> 'brainlab_meta'").fetchall()]
        assert "agents" in tables and "cc_usage_rollup" in tables
        for table in tables:
            if table in skip:
                continue
            cols = con.execute(
                "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name ="
                " 'fresh' AND table_name = ? ORDER BY column_index", [table]).fetchall()
            # sums of DOUBLEs differ in their last bits with the order rows are summed in
            names = ", ".join(f'round("{c}", 9)' if kind in ("DOUBLE", "FLOAT") else f'"{c}"'
                              for c, kind in cols)
            mine, theirs = f'SELECT {names} FROM main."{table}"', \
                f'SELECT {names} FROM fresh."{table}"'
            for a, b in ((mine, theirs), (theirs, mine)):
                extra = con.execute(f"SELECT count(*) FROM ({a} EXCEPT ALL {b})").fetchone()[0]
                assert extra == 0, (table, a)
    finally:
        con.close()


def test_brain_files_are_read_again_after_an_upgrade(template_store, tmp_path):
    """The brain ingest: every file re-read by the new code (ingest_files' hashes cleared).

    The store before the upgrade and the fresh one compared with it are the run's
    ``template_store`` (the same ingest of the template brain): two CLI ingests less."""
    old = tmp_path / "old.duckdb"
    shutil.copy(template_store, old)
    con = duckdb.connect(str(old))
    try:
        assert con.execute("SELECT count(status) FROM agents").fetchone()[0] > 0
        con.execute("UPDATE brainlab_meta SET value = '0ld0ld0ld0ld0ld0' WHERE key = 'schema'")
        con.execute("DELETE FROM brainlab_meta WHERE key IN ('catalog', 'catalog_files')")
        con.execute("ALTER TABLE agents DROP COLUMN status")  # a column the new parser fills
    finally:
        con.close()
    done = cli("ingest", "brain", TEMPLATE_BRAIN, "--db", old, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "store upgraded from schema 0ld0ld0ld0ld0ld0" in done.stdout
    assert_same_tables(old, template_store)  # agents.status filled again: the files were re-read


@pytest.mark.parametrize("point", ["moved", "copied", "commit"])
def test_kill_during_upgrade_leaves_the_store_as_before(current_store, tmp_path, point):
    old = make_old(current_store, tmp_path / "old.duckdb")
    before = counts(old)
    env = {**os.environ, upgrade.KILL_ENV: point}
    killed = subprocess.run(
        [sys.executable, "-c", "import sys; from brainlab.store import open_writer;"
         " open_writer(sys.argv[1]).close()", str(old)],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert counts(old) == before  # same tables, same rows (cc_compactions still absent)
    con = duckdb.connect(str(old), read_only=True)
    try:
        assert con.execute("SELECT value FROM brainlab_meta WHERE key = 'schema'"
                           ).fetchone() == ("0ld0ld0ld0ld0ld0",)
    finally:
        con.close()
    open_writer(old).close()  # a later run upgrades it
    upgrade.DONE.clear()
    after = counts(old)
    assert after["cc_request_lines"] == before["cc_request_lines"]
    assert after["cc_usage_rollup"] == 0 and "cc_compactions" in after


BREAKS = {
    "a new primary key the old rows break": (
        "cc_files", "CREATE TABLE cc_files_x AS SELECT * FROM cc_files;"
        " DROP TABLE cc_files; ALTER TABLE cc_files_x RENAME TO cc_files;"
        " INSERT INTO cc_files SELECT * FROM cc_files LIMIT 1"),
    "a new NOT NULL column without default": (
        "cc_spans", "ALTER TABLE cc_spans DROP COLUMN source_file"),
    "a value the new type cannot hold": (
        "cc_request_lines", "ALTER TABLE cc_request_lines ALTER line TYPE VARCHAR;"
        " UPDATE cc_request_lines SET line = 'x' WHERE rowid = 0"),
}


@pytest.mark.parametrize("case", sorted(BREAKS))
def test_rows_that_do_not_fit_stop_the_upgrade(current_store, corpus, tmp_path, case):
    table, sql = BREAKS[case]
    old = make_old(current_store, tmp_path / "old.duckdb")
    con = duckdb.connect(str(old))
    con.execute(sql)
    con.close()
    before = counts(old)
    done = cli("ingest", "claude", corpus, "--db", old, cwd=tmp_path)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    errors = [line for line in (done.stdout + done.stderr).splitlines()
              if line.startswith("Error:")]
    assert len(errors) == 1, done.stdout + done.stderr
    assert f"table {table} " in errors[0] and "store is unchanged" in errors[0]
    assert counts(old) == before


def test_reading_an_old_store_says_to_upgrade_it(current_store, tmp_path):
    """A read command on an older store: a query the old tables cannot answer is one line."""
    old = make_old(current_store, tmp_path / "old.duckdb")
    done = cli("usage", "daily", "--db", old, cwd=tmp_path)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    (line,) = [x for x in (done.stdout + done.stderr).splitlines() if x.strip()]
    assert line.startswith("Error:") and "another brainlab version" in line
    assert "brainlab ingest" in line
    ok = cli("sql", "SELECT count(*) AS n FROM cc_files", "--db", old, cwd=tmp_path)
    files = counts(old)["cc_files"]
    assert ok.returncode == 0 and f" {files} " in ok.stdout  # what still reads, reads as is


def test_every_derived_table_is_in_the_schema():
    """DERIVED names tables that exist: a renamed derived table must be renamed there too.

    The empty store of this catalogue is the cached template (not one built in memory)."""
    with empty_store() as con:
        tables = {r[0] for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'").fetchall()}
    assert upgrade.DERIVED <= tables
    assert "cc_request_lines" not in upgrade.DERIVED and "cc_files" not in upgrade.DERIVED
