"""`brainlab simulate regulator|broker`: a bad option value is one `Error:` line, no traceback.

Run on the real transcripts only (``corpus_store``), where sprints come from transcripts. (On
the template brain and the empty store both commands already said what is missing and what to
run: no sprints, no circuit events.)
"""

import random
from datetime import datetime

import numpy as np
import pytest
from click.testing import CliRunner

from brainlab.cli import main
from brainlab.common.errors import ConfigError
from brainlab.sim.circuit_arrays import compile_journals
from brainlab.sim.regulator import replay
from brainlab.spec.thresholds import Thresholds
from brainlab.synth.circuits import generate_tickets


def simulate(*args):
    return CliRunner().invoke(main, ["simulate", *map(str, args)])


def one_error_line(res, *expected):
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output
    last = res.output.strip().splitlines()[-1]
    assert last.startswith("Error: "), res.output
    for text in expected:
        assert text in last, last
    return last


@pytest.mark.parametrize("args, expected", [
    (["--policy", "history:k=abc"], "policy 'history' parameter k expects a number, got 'abc'"),
    (["--policy", "history:k=2.5"], "parameter k expects an integer"),
    (["--policy", "history:k=-1"], "parameter k must be >= 0"),
    (["--policy", "protocol:stale_overrides_todo=3"], "expects true or false"),
    (["--threshold", "stale_ratio_max=abc"], "threshold stale_ratio_max expects a number"),
    (["--miss-overhead", "-5"], "miss overhead must be a finite number >= 0"),
    (["--default-bytes", "0"], "default file size must be > 0"),
    (["--project", "no-such-project"], "no sprints of project 'no-such-project'"),
])
def test_broker_bad_options_are_one_line(corpus_store, args, expected):
    one_error_line(simulate("broker", "--db", corpus_store, *args), expected)


def test_broker_unwritable_out_is_one_line(corpus_store, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    one_error_line(simulate("broker", "--db", corpus_store, "--policy", "protocol",
                            "--contracts", "all", "--out", blocker / "rows.csv"),
                   "cannot write --out")


@pytest.fixture(scope="module")
def journals_db(tmp_path_factory):
    from brainlab.synth.circuits import write_circuits

    root = tmp_path_factory.mktemp("circuits")
    write_circuits(root, random.Random(3), datetime(2026, 1, 5), datetime(2026, 2, 2), 15)
    db = root / "brainlab.duckdb"
    assert CliRunner().invoke(main, ["ingest", "circuits", str(root), "--db", str(db)]).exit_code == 0
    return db


def test_regulator_bad_seed_and_outputs_are_one_line(journals_db, tmp_path):
    one_error_line(simulate("regulator", "--db", journals_db, "--draws", 5, "--seed", -1),
                   "seed must be a non-negative integer")
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    one_error_line(simulate("regulator", "--db", journals_db, "--draws", 5,
                            "--per-ticket", blocker / "t.csv"), "cannot write --per-ticket")
    one_error_line(simulate("regulator", "--db", journals_db, "--draws", 5,
                            "--per-ticket", tmp_path / "t.txt"),
                   "--per-ticket must end in .csv or .parquet")


def test_threshold_overrides_are_typed():
    with pytest.raises(ConfigError, match="expects a number"):
        Thresholds().replace(stale_ratio_max="abc")
    with pytest.raises(ConfigError, match="expects an integer"):
        Thresholds().replace(ratio_window=2.5)
    # numbers of any kind a sweep may pass are taken, as the field's type
    t = Thresholds().replace(ratio_window=np.int64(5), stale_ratio_max=1)
    assert t.ratio_window == 5 and isinstance(t.stale_ratio_max, float)


def test_replay_rejects_a_negative_seed_before_any_work():
    events = [e for t in generate_tickets(random.Random(1), datetime(2026, 1, 5),
                                          datetime(2026, 1, 19), 5) for e in t]
    with pytest.raises(Exception, match="seed must be a non-negative integer"):
        replay(compile_journals(events), "default", draws=2, seed=-3)
