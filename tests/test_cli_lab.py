"""`brainlab lab`: builds the demo database when missing, passes it to the notebooks."""

from __future__ import annotations

import os
import signal
import time

from click.testing import CliRunner
from lab_process import free_port, group_alive, port_open, start_lab, stop_group

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


def test_a_signal_to_brainlab_lab_stops_jupyterlab(demo, tmp_path):
    # SIGTERM to the PID `brainlab lab` runs as must stop JupyterLab and free its port: the
    # lab replaces itself with JupyterLab (same PID), nothing is left behind in its group
    port = free_port()
    proc = start_lab(demo["db"], port, "t0ken", tmp_path, tmp_path / "lab.log")
    try:
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
        deadline = time.monotonic() + 30
        while (port_open(port) or group_alive(proc.pid)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not port_open(port), "JupyterLab still serves the port after the signal"
        assert not group_alive(proc.pid), "a process of brainlab lab outlived the signal"
    finally:
        stop_group(proc)
