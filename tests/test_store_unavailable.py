"""Issue 10 §12: a database without its schema, or held by an ingest, gives one clear line;
a report that fails because of it leaves nothing in the output folder."""

import shutil
import time

import duckdb
import nbformat
import pytest
from click.testing import CliRunner

from brainlab.cli import main
from brainlab.common.errors import ReportError, StoreLockedError
from brainlab.report import render_weekly
from brainlab.report.runner import weekly_notebook
from brainlab.store import query

pytestmark = pytest.mark.slow  # xdist group: tests/conftest.py KERNEL_GROUPS


def test_reader_of_a_database_without_schema_gets_one_line(tmp_path):
    db = tmp_path / "killed.duckdb"
    duckdb.connect(str(db)).close()  # what an ingest killed before its schema leaves
    for args in (["errors"], ["sql", "SELECT * FROM sessions"]):
        done = CliRunner().invoke(main, [*args, "--db", str(db)])
        assert done.exit_code == 1
        assert done.output.startswith("Error: ") and "no brainlab tables" in done.output
        assert "Traceback" not in done.output and len(done.output.strip().splitlines()) == 1


HOLD = """
import sys, time
from brainlab.store import open_writer
con = open_writer(sys.argv[1])
print("held", flush=True)
time.sleep(120)
"""


def test_lock_met_inside_the_notebook_leaves_no_debris(demo, tmp_path):
    """An ingest starts after the report's first check (a process holding the writer lock,
    started by an inserted cell): a cell meets the lock. The message says so, and neither a
    failed notebook nor a hidden temporary one stays behind."""
    out, db = tmp_path / "reports", tmp_path / "brainlab.duckdb"
    shutil.copy(demo["db"], db)  # a copy: the other worker reads the run's demo meanwhile
    notebook = nbformat.read(weekly_notebook(), as_version=4)
    at = next(i for i, c in enumerate(notebook.cells)
              if "parameters" in c.metadata.get("tags", []))
    notebook.cells.insert(at + 1, nbformat.v4.new_code_cell(
        "import subprocess, sys\n"
        f"holder = subprocess.Popen([sys.executable, '-c', {HOLD!r}, db],"
        " stdout=subprocess.PIPE, text=True)\n"
        "assert holder.stdout.readline().strip() == 'held'", id="an-ingest-starts"))
    notebook.cells.insert(at + 2, nbformat.v4.new_code_cell(
        "from brainlab.store import query\ntry:\n    query(db, 'SELECT 1')\n"
        "finally:\n    holder.kill()", id="reads-the-store"))
    path = tmp_path / "locked.ipynb"
    nbformat.write(notebook, path)
    with pytest.raises(ReportError) as caught:
        render_weekly(db, None, out, notebook=path)
    message = str(caught.value)
    assert "in use by another process" in message and "was not written" in message
    assert "\n" not in message
    assert list(out.rglob("*.ipynb")) == [] and [p for p in out.iterdir() if p.is_dir()] == []
    for _ in range(50):  # the holder was killed by the notebook; the store reads again
        try:
            query(db, "SELECT 1")
            break
        except StoreLockedError:
            time.sleep(0.1)
