"""`brainlab ingest circuits` and `brainlab simulate regulator` end to end."""

import random
from datetime import datetime

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
    assert "max_relance_same_stop=2" in res.output and "sessions_per_ticket" in res.output
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
