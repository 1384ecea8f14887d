"""Benchmark: how often `tune sessions` keeps the defaults on null stores (issue 42's check).

A null store: 12 weeks of synthetic logs (brain files, seed 7, no plant) whose figures are
moved as one block to another session of the same category (brainlab.sim.tuning.null), one
shuffle seed each. The outcomes then carry no information about the signals, and the
defaults must stand on at least 19 of 20 seeds. Printed: the rate over ``--seeds`` seeds
with its Wilson interval, and, as the baseline in the same run, the rate of the planted
store (synth plant unhealthy-after-close) where a recommendation is expected.

Run: PYTHONPATH=$PWD python benchmarks/bench_tuning_null.py [--seeds 50]
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from benchkit import emit

from brainlab.sim.tuning import null, sessions
from brainlab.sim.tuning.engine import wilson


def logs_store(folder: Path, plants: tuple[str, ...], weeks: int) -> Path:
    """A store of synthetic brain files (no transcripts), built once under ``folder``."""
    db = folder / "brainlab.duckdb"
    if not db.exists():
        from brainlab.store.ingest import ingest_brain
        from brainlab.synth import SynthOptions, synthesize

        synthesize(folder / "brain", SynthOptions(weeks=weeks, seed=7, plants=plants))
        ingest_brain(db, folder / "brain")
    return db


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--work", type=Path, default=Path("data/bench-tuning-null"))
    parser.add_argument("--budget", type=float, default=100.0,
                        help="Alerts per week allowed (high: only information decides).")
    args = parser.parse_args()
    base = logs_store(args.work / "plain", (), 12)
    planted = logs_store(args.work / "planted", ("unhealthy-after-close",), 16)
    started = time.perf_counter()
    kept, picks = 0, {}
    trial = args.work / "null.duckdb"
    for seed in range(args.seeds):
        shutil.copy(base, trial)
        null.shuffle_figures(trial, seed)
        result = sessions.tune(trial, budget=args.budget)
        if result["recommended"] is None:
            kept += 1
        else:
            key = ", ".join(f"{k}={v}" for k, v in result["recommended"].items())
            picks[key] = picks.get(key, 0) + 1
    low, high = wilson(kept, args.seeds)
    print(f"null stores: the defaults kept on {kept} of {args.seeds} shuffle seeds "
          f"({kept / args.seeds:.0%}, Wilson 95% [{low:.0%}, {high:.0%}]); "
          f"required: at least 19 of 20 (95%)")
    if picks:
        print(f"  recommended instead: {picks}")
    found = sessions.tune(planted, budget=10.0)
    print(f"baseline, planted store (conserve_close 45): {found['reason'][:120]}")
    print(f"  {time.perf_counter() - started:.0f} s for {args.seeds} null stores")
    emit("tuning_null", seeds=args.seeds, kept=kept, rate=kept / args.seeds, low=low,
         high=high, planted=found["recommended"])


if __name__ == "__main__":
    main()
