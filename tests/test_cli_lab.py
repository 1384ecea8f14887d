"""`brainlab lab`: builds the demo database when missing, passes it to the notebooks."""

from __future__ import annotations

from click.testing import CliRunner

from brainlab import lab
from brainlab.cli import main


def test_lab_print_command_with_db(demo, tmp_path):
    (tmp_path / "notebooks").mkdir()
    result = CliRunner().invoke(main, ["lab", "--dir", str(tmp_path / "notebooks"), "--db",
                                       str(demo["db"]), "--no-browser", "--print-command"])
    assert result.exit_code == 0, result.output
    assert f"BRAINLAB_DB={demo['db'].resolve()}" in result.output
    assert "jupyterlab" in result.output and "--no-browser" in result.output


def test_lab_missing_db_is_an_error(tmp_path):
    result = CliRunner().invoke(main, ["lab", "--db", str(tmp_path / "nope.duckdb"),
                                       "--print-command"])
    assert result.exit_code == 1 and "no database" in result.output


def test_ensure_demo_db_builds_once(tmp_path):
    db = lab.ensure_demo_db(tmp_path / "demo")
    assert db == tmp_path / "demo" / "brainlab.duckdb" and db.exists()
    stamp = db.stat().st_mtime_ns
    assert lab.ensure_demo_db(tmp_path / "demo") == db and db.stat().st_mtime_ns == stamp


def test_notebook_db_reads_env(monkeypatch):
    monkeypatch.setenv(lab.DB_ENV, "/x/y.duckdb")
    assert lab.notebook_db() == "/x/y.duckdb"
    monkeypatch.delenv(lab.DB_ENV)
    assert lab.notebook_db("a.duckdb") == "a.duckdb"
