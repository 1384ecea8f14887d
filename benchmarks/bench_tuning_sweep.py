"""Benchmark: notebook 04's session sweep (18 threshold sets) on the demo store.

Baseline, in the same run: the same sets scored one by one on the store's path, each query
opening, sealing and closing the file (what ``tuning.sweep`` did before it held one
connection for the whole sweep). Both give the same frame; the figures are CPU seconds of
this process (DuckDB's threads included), the median of ``--repeat`` runs.

Run: PYTHONPATH=$PWD python benchmarks/bench_tuning_sweep.py [--db data/demo/brainlab.duckdb]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import pandas as pd
from benchkit import emit, median_span

from brainlab.sim import tuning
from brainlab.sim.tuning import sessions
from brainlab.spec.thresholds import Thresholds


def per_query(db: Path, grid: dict) -> pd.DataFrame:
    """The sweep with a connection per query: labels, then each set's signals on the path."""
    from brainlab import metrics

    labels = sessions.outcomes(db)
    rows = []
    for point in sessions._grid_points(grid):
        signals = metrics.signals(db, Thresholds().replace(**point), "v2")
        rows.append({**point, **tuning.score(tuning.label_alerts(signals, labels,
                                                                 tuning.DEFAULT_ALERTS))})
    return pd.DataFrame(rows, columns=[*grid, *tuning.METRIC_COLUMNS])


def cpu(func) -> tuple[float, object]:
    """CPU seconds of ``func()`` in this process, and its result."""
    start = time.process_time()
    result = func()
    return time.process_time() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=Path("data/demo/brainlab.duckdb"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not args.db.exists():
        raise SystemExit(f"Error: {args.db} does not exist; `brainlab demo` builds it")
    grid = tuning.default_grid()
    naive, held = [], []
    for _ in range(args.repeat):  # interleaved: a busy moment touches both
        seconds, slow = cpu(lambda: per_query(args.db, grid))
        naive.append(seconds)
        seconds, fast = cpu(lambda: tuning.sweep(args.db, grid))
        held.append(seconds)
        assert fast.equals(slow), "the held sweep gives another frame"
    sets = len(sessions._grid_points(grid))
    print(f"session sweep of {sets} threshold sets on {args.db} (CPU-s, median of "
          f"{args.repeat}):")
    print(f"  a connection per query (before) {median_span(naive)}")
    print(f"  one connection (tuning.sweep)   {median_span(held)}")
    print(f"  {statistics.median(naive) / statistics.median(held):.1f}x less CPU")
    emit("tuning_sweep", sets=sets, per_query_cpu_s=statistics.median(naive),
         held_cpu_s=statistics.median(held))


if __name__ == "__main__":
    main()
