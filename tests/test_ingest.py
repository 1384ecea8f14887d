"""Ingest guarantees: idempotent, per-file replacement, removal, bad files never cost good rows."""

import hashlib
import subprocess
import sys

import pytest
from conftest import ingest_brain, write

from brainlab.common.errors import StoreLockedError, StoreMissingError
from brainlab.sources.base import Parsed, Source
from brainlab.store import ingest, open_writer, query, reader


def table_digest(db) -> dict[str, str]:
    """A hash of every table's sorted contents."""
    out = {}
    with reader(db) as con:
        names = [r[0] for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'").fetchall()]
        for name in names:
            rows = sorted(map(repr, con.execute(f'SELECT * FROM "{name}"').fetchall()))
            out[name] = hashlib.sha256("\n".join(rows).encode()).hexdigest()
    return out


def test_reingest_same_tree_changes_nothing(demo, tmp_path):
    db = tmp_path / "again.duckdb"
    ingest_brain(demo["root"], db)
    first = table_digest(db)
    summary = ingest_brain(demo["root"], db)
    assert sum(summary.loaded.values()) == 0 and sum(summary.unchanged.values()) > 500
    assert table_digest(db) == first


def test_changed_and_removed_files(brain, db):
    log = write(brain, "progression/metabolism/2026-01-01-sess-20260101-0900-work.md",
                "# Metabolism — 2026-01-01 — sess-20260101-0900-work\n\n| Clé | Valeur |\n"
                "|---|---|\n| type | work |\n| commits | 1 |\n")
    claim = write(brain, "claims/sess-20260101-0900-work.yml",
                  'sess_id: sess-20260101-0900-work\nstatus: open\nopened_at: "2026-01-01T09:00"\n')
    ingest_brain(brain, db)
    log.write_text(log.read_text().replace("| commits | 1 |", "| commits | 4 |"))
    claim.unlink()
    summary = ingest_brain(brain, db)
    assert summary.loaded == {"metabolism": 1} and summary.removed == {"claims": 1}
    assert query(db, "SELECT commits FROM raw_metabolism_logs").commits.tolist() == [4]
    assert query(db, "SELECT count(*) AS n FROM claims").n[0] == 0
    assert query(db, "SELECT count(*) AS n FROM ingest_files WHERE source = 'claims'").n[0] == 0


class Exploding(Source):
    name = "exploding"
    tables = ("agents",)

    def discover(self, root):
        return sorted(root.glob("*.md"))

    def parse(self, path, data, root):
        if b"boom" in data:
            raise ValueError("parser bug")
        parsed = Parsed()
        parsed.add("agents", {"source_file": str(path.resolve()), "agent": path.stem,
                              "bytes": len(data)})
        return parsed


def test_parser_crash_becomes_an_error_row(brain, db):
    write(brain, "a.md", "fine")
    write(brain, "b.md", "boom")
    write(brain, "c.md", "fine too")
    con = open_writer(db)
    try:
        summary = ingest.run(con, [Exploding()], brain)
    finally:
        con.close()
    assert summary.loaded == {"exploding": 3} and summary.errors == {"exploding": 1}
    assert query(db, "SELECT agent FROM agents ORDER BY 1").agent.tolist() == ["a", "c"]
    reason = query(db, "SELECT file, reason FROM ingest_errors")
    assert reason.file[0].endswith("b.md") and "ValueError: parser bug" in reason.reason[0]


def test_second_writer_gets_a_clear_message(db, tmp_path):
    con = open_writer(db)
    try:
        code = ("import sys; from brainlab.store import open_writer\n"
                "from brainlab.common.errors import StoreLockedError\n"
                f"try:\n    open_writer({str(db)!r})\nexcept StoreLockedError as e:\n"
                "    print(e); sys.exit(3)\n")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=60)
    finally:
        con.close()
    assert done.returncode == 3, done.stderr
    assert str(db) in done.stdout and "in use by another process" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_reader_errors(tmp_path):
    with pytest.raises(StoreMissingError, match="no database at .*missing.duckdb"):
        query(tmp_path / "missing.duckdb", "SELECT 1")
    assert StoreLockedError.__doc__


def test_writer_open_skips_an_unchanged_catalog(db):
    open_writer(db).close()
    con = open_writer(db)
    con.execute("DROP VIEW weekly_health")
    con.close()
    con = open_writer(db)  # same catalog fingerprint: nothing rewritten, the view stays gone
    assert con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = 'weekly_health'"
                       ).fetchone()[0] == 0
    con.execute("DELETE FROM brainlab_meta WHERE key = 'catalog'")
    con.close()
    con = open_writer(db)  # catalog unknown: views and comments are written again
    try:
        assert con.execute("SELECT count(*) FROM weekly_health").fetchone()[0] == 0
    finally:
        con.close()
