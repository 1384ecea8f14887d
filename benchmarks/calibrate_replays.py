"""Calibration of the replays' checks over many synthetic seeds (issue 41 checks).

For each seed: a small synthetic history with the planted change (brainlab.synth.replay_plants;
broker: the synthetic sprint plan, 12 weeks; regulator: journals of ``--tickets`` tickets in
the real format, ingested into DuckDB), then the back-test (do the 90% intervals of the
recorded policy / rules cover the recorded figures?) and the change check (does the prediction
from the weeks before the change cover what the weeks after show?). Prints the coverage rates
and, per figure, the change check's; the test (tests/test_replay_calibration.py) runs a few
seeds of the same helpers.

Run: PYTHONPATH=. python benchmarks/calibrate_replays.py [--seeds 100] [--tickets 300]
"""

from __future__ import annotations

import argparse
import tempfile
import time

from benchkit import emit

from tests.replay_calibration import broker_rates, regulator_rates


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--regulator-seeds", type=int, default=40)
    parser.add_argument("--tickets", type=int, default=300)
    parser.add_argument("--draws", type=int, default=200)
    args = parser.parse_args()
    t0 = time.perf_counter()
    broker = broker_rates(range(1, args.seeds + 1), draws=args.draws)
    t1 = time.perf_counter()
    print(f"broker, {broker['seeds']} seeds ({t1 - t0:.0f} s): back-test covers every printed"
          f" figure in {broker['backtest']:.0%} of seeds (target >= 85%); the change check"
          f" covers the after-change figure in {broker['change']:.1%} of (seed, figure)"
          " (target >= 80%)")
    for figure, rate in broker["change_by_figure"].items():
        print(f"  {figure:<26} {rate:.0%}")
    with tempfile.TemporaryDirectory() as folder:
        regulator = regulator_rates(range(1, args.regulator_seeds + 1), folder,
                                    draws=args.draws, n_tickets=args.tickets)
    t2 = time.perf_counter()
    print(f"regulator, {regulator['seeds']} seeds x {args.tickets} tickets ({t2 - t1:.0f} s):"
          f" back-test covers every figure in {regulator['backtest']:.0%} of seeds (target"
          f" >= 85%); the change check covers the after-change figure in"
          f" {regulator['change']:.1%} of (seed, figure) (target >= 80%)")
    for figure, rate in regulator["change_by_figure"].items():
        print(f"  {figure:<26} {rate:.0%}")
    emit("calibrate_replays", seeds=args.seeds, broker_backtest=broker["backtest"],
         broker_change=broker["change"], regulator_seeds=args.regulator_seeds,
         regulator_backtest=regulator["backtest"], regulator_change=regulator["change"])


if __name__ == "__main__":
    main()
