"""brainlab ingest sprints / simulate broker, end to end on the synthetic sprints."""

import random

import pandas as pd
from click.testing import CliRunner

from brainlab.cli import main
from brainlab.synth.sprints import PLANTED_DOMAIN, write_sprints


def test_ingest_and_simulate(tmp_path):
    brain, db = tmp_path / "brain", tmp_path / "b.duckdb"
    write_sprints(brain, [], random.Random(7))
    runner = CliRunner()
    result = runner.invoke(main, ["ingest", "sprints", str(brain), "--db", str(db)])
    assert result.exit_code == 0, result.output
    out_csv = tmp_path / "rows.csv"
    result = runner.invoke(main, ["simulate", "broker", "--db", str(db), "--policy", "protocol",
                                  "--policy", "history:k=3", "--out", str(out_csv),
                                  "--contracts", "all"])
    assert result.exit_code == 0, result.output
    assert "protocol" in result.output and "history:k=3" in result.output
    assert "inferred" in result.output  # side-tool has no contract
    rows = pd.read_csv(out_csv)
    for column in ("sprint_id", "agent", "policy", "loaded", "hits", "misses", "waste",
                   "tokens_loaded", "tokens_miss", "context_load", "stale_ratio",
                   "breath_depth", "exhale_rate", "alert_accumulation"):
        assert column in rows.columns
    assert set(rows.policy) == {"protocol", "history:k=3", "recorded"}  # the baseline added
    out_parquet = tmp_path / "rows.parquet"
    result = runner.invoke(main, ["simulate", "broker", "--db", str(db), "--out",
                                  str(out_parquet), "--project", "originsdigital"])
    assert result.exit_code == 0, result.output
    frame = pd.read_parquet(out_parquet)
    assert set(frame.project) == {"originsdigital"} and PLANTED_DOMAIN in set(frame.domain)


def test_simulate_errors(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["simulate", "broker", "--db", str(tmp_path / "none.duckdb")])
    assert result.exit_code == 1 and result.output.startswith("Error: no database")
    brain, db = tmp_path / "brain", tmp_path / "b.duckdb"
    write_sprints(brain, [], random.Random(1))
    runner.invoke(main, ["ingest", "sprints", str(brain / "progression" / "sprints" /
                                                  "sprints.jsonl"), "--db", str(db)])
    result = runner.invoke(main, ["simulate", "broker", "--db", str(db), "--policy", "magic",
                                  "--contracts", "inferred"])
    assert result.exit_code == 1 and "unknown policy 'magic'" in result.output
    result = runner.invoke(main, ["simulate", "broker", "--db", str(db), "--out", "x.txt",
                                  "--contracts", "inferred"])
    assert result.exit_code == 1 and ".csv or .parquet" in result.output
