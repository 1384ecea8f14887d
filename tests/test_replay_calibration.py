"""Issue 41 checks: the replays' intervals are calibrated over many synthetic seeds.

Back-test: the 90% intervals of the recorded policy / rules cover the recorded figures in at
least 85% of seeds. Change check: the prediction from the weeks before the planted change
covers what the weeks after show in at least 80% of (seed, figure) pairs. A few small seeds
here; ``benchmarks/calibrate_replays.py`` measures the rates over many more.
"""

from __future__ import annotations

import pandas as pd
from replay_calibration import broker_history, broker_rates, regulator_history, regulator_rates

from brainlab.sim import broker_checks
from brainlab.sim import regulator_checks as rc


def test_broker_backtest_and_change_check_are_calibrated():
    rates = broker_rates(range(1, 9), draws=200)
    assert rates["backtest"] >= 0.85, rates
    assert rates["change"] >= 0.80, rates


def test_broker_change_check_rejects_a_wrong_prediction():
    missed = 0
    for seed in range(1, 5):
        ss, day = broker_history(seed)
        wrong = broker_checks.Change(pd.Timestamp(day, tz="UTC"), "protocol", None, False)
        check = broker_checks.change_check(ss, wrong, draws=200, seed=seed)
        missed += not check.set_index("figure").loc["loaded_per_agent_sprint", "covered"]
    assert missed == 4  # protocol loads at most 2: the after weeks loaded more


def test_regulator_backtest_and_change_check_are_calibrated(tmp_path):
    rates = regulator_rates(range(1, 5), tmp_path, draws=200, n_tickets=300)
    assert rates["backtest"] >= 0.85, rates
    assert rates["change"] >= 0.80, rates


def test_regulator_change_is_found_and_a_wrong_prediction_is_not_covered(tmp_path):
    history, day = regulator_history(11, tmp_path, n_tickets=300)
    change = rc.find_change(history)
    assert change is not None and change.to == "max_relance_same_stop=2" and change.found
    assert 0 <= (change.day - pd.Timestamp(day)).days < 7
    wrong = rc.change_check(history, rc.Change(change.day, "max_relance_same_stop=0", False),
                            draws=200, seed=0).set_index("figure")
    assert not wrong.loc["sessions_per_ticket", "covered"]
