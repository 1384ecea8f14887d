"""`brainlab ingest circuits` and `brainlab simulate regulator` end to end."""

import os
import random
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from brainlab.cli import main
from brainlab.synth.circuits import write_circuits


def test_ingest_and_simulate(tmp_path):
    write_circuits(tmp_path / "brain", random.Random(2), datetime(2026, 1, 5),
                   datetime(2026, 2, 2), 120)
    db = tmp_path / "db.duckdb"
    runner = CliRunner()
    res = runner.invoke(main, ["ingest", "circuits", str(tmp_path / "brain"), "--db", str(db)])
    assert res.exit_code == 0, res.output
    out, per = tmp_path / "rules.csv", tmp_path / "per.parquet"
    res = runner.invoke(main, ["simulate", "regulator", "--db", str(db), "--rules", "default",
                               "--rules", "max_relance_same_stop=2", "--draws", "30",
                               "--seed", "5", "--out", str(out), "--per-ticket", str(per)])
    assert res.exit_code == 0, res.output
    assert "rules: max_relance_same_stop=2" in res.output
    assert any(line.split()[:1] == ["sessions"] for line in res.output.splitlines())
    summary = pd.read_csv(out)
    assert list(summary.rules) == ["default", "max_relance_same_stop=2"]
    for col in ("rules", "tickets", "wakeups_per_ticket", "loop_sessions_per_ticket",
                "integrated_share", "sessions_per_ticket", "tokens_per_ticket",
                "wakeups_per_ticket_lo", "tokens_per_ticket_hi"):
        assert col in summary.columns
    assert (summary.tickets == 120).all()
    rows = pd.read_parquet(per)
    assert {"ticket", "rules", "outcome", "wakeups", "sessions", "tokens"} <= set(rows.columns)
    assert len(rows) == 240


def test_bad_rules_is_a_one_line_error(tmp_path):
    write_circuits(tmp_path, random.Random(2), datetime(2026, 1, 5), datetime(2026, 2, 2), 10)
    db = tmp_path / "db.duckdb"
    runner = CliRunner()
    res = runner.invoke(main, ["ingest", "circuits", str(tmp_path), "--db", str(db)])
    assert res.exit_code == 0
    res = runner.invoke(main, ["simulate", "regulator", "--db", str(db),
                               "--rules", "max_relances=2"])
    assert res.exit_code == 1
    assert "Error: unknown regulator rule(s): max_relances" in res.output


def test_summary_is_a_tables_table_at_80_columns(tmp_path):
    # issue 28 item 9: one table style (brainlab.common.tables), no line past 80 columns, separators
    write_circuits(tmp_path / "brain", random.Random(2), datetime(2026, 1, 5),
                   datetime(2026, 2, 2), 120)
    db = tmp_path / "db.duckdb"
    res = CliRunner().invoke(main, ["ingest", "circuits", str(tmp_path / "brain"), "--db",
                                    str(db)])
    assert res.exit_code == 0, res.output
    done = subprocess.run([str(Path(sys.executable).with_name("brainlab")), "simulate",
                           "regulator", "--db", "db.duckdb", "--rules", "default", "--rules",
                           "max_relance_same_stop=2", "--draws", "30", "--seed", "5"],
                          env={**os.environ, "COLUMNS": "80"}, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, done.stdout
    assert [line.split() for line in lines if line.startswith(" metric")] == [
        ["metric", "estimate", "low", "high"],
        ["metric", "estimate", "low", "high", "difference", "low", "high"]]
    assert "rules: max_relance_same_stop=2" in lines  # an identifier whole on its line
    tokens = [line.split() for line in lines if line.split()[:1] == ["tokens"]]
    assert len(tokens) == 2 and all("," in cell for cell in tokens[0][1:])  # 376,633
    assert all(cell[0] in "+-" for cell in tokens[1][4:])  # differences keep their sign
