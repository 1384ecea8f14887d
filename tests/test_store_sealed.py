"""Issue 29 (Injection 3): a .duckdb file is code, so stores opened for reading are sealed.

A store whose raw table is a view calling ``read_text`` on a local file used to make `sql`
print that file and `report weekly` embed it. Every read command opens the store with
DuckDB's external access off and the configuration locked (the lake folder of an attached
store excepted), and refuses a store whose raw table is a view. Through the real CLI.
"""

import subprocess
import sys

import duckdb
import pytest
from conftest import cli_env

SECRET_FILE_TEXT = "top-secret-local-file-contents"


def cli(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "brainlab.cli", *args], cwd=tmp_path,
                          env=cli_env(tmp_path),
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def store(tmp_path):
    """A real store (the demo's schema, made by `ingest claude` on an empty folder)."""
    (tmp_path / "empty").mkdir()
    db = tmp_path / "s.duckdb"
    cli(tmp_path, "ingest", "claude", str(tmp_path / "empty"), "--db", str(db))
    (tmp_path / "local.txt").write_text(SECRET_FILE_TEXT)
    return db


def test_a_raw_table_that_is_a_view_is_refused(tmp_path, store):
    con = duckdb.connect(str(store))
    con.execute("DROP TABLE cc_request_lines CASCADE")
    con.execute(f"CREATE VIEW cc_request_lines AS SELECT content AS model FROM"
                f" read_text('{tmp_path / 'local.txt'}')")
    con.close()
    for args in (["sql", "SELECT * FROM cc_request_lines"], ["usage", "daily"]):
        done = cli(tmp_path, *args, "--db", str(store))
        assert done.returncode == 1, done.stdout
        assert done.stderr.startswith("Error: ") and "views, not tables" in done.stderr
        assert SECRET_FILE_TEXT not in done.stdout + done.stderr


def test_a_store_view_or_a_statement_cannot_read_local_files(tmp_path, store):
    con = duckdb.connect(str(store))
    con.execute(f"CREATE VIEW innocent AS SELECT content FROM read_text('{tmp_path / 'local.txt'}')")
    con.close()
    for statement in ("SELECT * FROM innocent",
                      f"SELECT * FROM read_text('{tmp_path / 'local.txt'}')",
                      "SET enable_external_access = true"):
        done = cli(tmp_path, "sql", statement, "--db", str(store))
        assert done.returncode == 1 and done.stderr.startswith("Error: "), done.stderr
        assert "Traceback" not in done.stderr
        assert SECRET_FILE_TEXT not in done.stdout + done.stderr
    done = cli(tmp_path, "sql", "SELECT count(*) AS n FROM cc_request_lines", "--db", str(store))
    assert done.returncode == 0, done.stderr  # the store itself still reads


def test_a_read_waits_briefly_for_an_ingest_holding_the_store(tmp_path, store):
    """Issue 29 integrity 4: a report or read started during an ingest waits, not fails."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]);"
         " print('held', flush=True); time.sleep(2); c.close()", str(store)],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"  # the writer lock is taken
    done = cli(tmp_path, "sql", "SELECT count(*) AS n FROM cc_request_lines", "--db",
               str(store))
    holder.wait(timeout=60)
    assert done.returncode == 0, done.stderr


def test_check_refuses_a_transcript_store_whose_table_is_a_view(tmp_path, store):
    """`check --db` copies cc_* tables inside a writer connection: a view there could read
    local files with external access on, so the store is refused before anything is read."""
    con = duckdb.connect(str(store))
    con.execute("DROP TABLE cc_request_lines CASCADE")
    con.execute(f"CREATE VIEW cc_request_lines AS SELECT content AS model FROM"
                f" read_text('{tmp_path / 'local.txt'}')")
    con.close()
    brain = tmp_path / "brain"
    brain.mkdir()
    done = cli(tmp_path, "check", str(brain), "--db", str(store), "--format", "json")
    assert done.returncode != 0, done.stdout
    assert done.stderr.startswith("Error: ") and "views, not tables" in done.stderr
    assert "Traceback" not in done.stderr
    assert SECRET_FILE_TEXT not in done.stdout + done.stderr


def test_check_names_a_transcript_table_of_another_shape(tmp_path):
    """A --db whose cc_* table lacks brainlab's columns: one Error line naming the table."""
    other = tmp_path / "other.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE cc_request_lines (model VARCHAR)")
    con.execute("INSERT INTO cc_request_lines VALUES ('claude-x')")
    con.close()
    brain = tmp_path / "brain"
    brain.mkdir()
    done = cli(tmp_path, "check", str(brain), "--db", str(other))
    assert done.returncode != 0, done.stdout
    assert done.stderr.startswith("Error: ") and "cc_request_lines" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_brain_ingest_runs_sealed_and_refuses_a_store_whose_table_is_a_view(tmp_path, store):
    """Issue 46 item 4's seal, for `ingest brain` too: its writer was never sealed, and a store
    whose raw table is a view over a local file ended in "This is a brainlab bug" (exit 70)."""
    brain = tmp_path / "brain"
    claims = brain / "claims" / "sess-20260105-0900-work.yml"
    claims.parent.mkdir(parents=True)
    claims.write_text("sess_id: sess-20260105-0900-work\nstatus: open\n"
                      "opened_at: 2026-01-05T09:00:00\nscope: \"src/a.py\"\n")
    con = duckdb.connect(str(store))
    con.execute("DROP TABLE claims CASCADE")
    con.execute(f"CREATE VIEW claims AS SELECT content AS claim_id FROM"
                f" read_text('{tmp_path / 'local.txt'}')")
    con.close()
    done = cli(tmp_path, "ingest", "brain", str(brain), "--db", str(store))
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.startswith("Error: ") and "views, not tables" in done.stderr, done.stderr
    assert SECRET_FILE_TEXT not in done.stdout + done.stderr

