"""Benchmark: `brainlab tune sessions` over the full SPEC grid, forward chaining, on two stores.

Stores: the demo (12 weeks, logs and transcripts) and 52 weeks of synthetic history (brain
files; built here under --work when missing). For each, in the same run and interleaved:

- before: every grid point of SESSION_GRID queried one by one through ``metrics.signals``
  on one held connection (basis_sessions joined again for each threshold set, inert
  thresholds queried too), then the same judge;
- after: ``sessions.tune`` (basis_sessions computed once per sweep through a temporary
  macro, thresholds no chosen signal reads skipped).

Both must reach the same verdict. Figures: wall seconds and CPU seconds of this process
(DuckDB's threads included), the median of ``--repeat`` runs; the issue's target is under
10 s wall for each store.

Run: PYTHONPATH=$PWD python benchmarks/bench_tuning_sweep.py [--db data/demo/brainlab.duckdb]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from pathlib import Path

import numpy as np
from benchkit import emit, median_span

from brainlab import metrics
from brainlab.sim.tuning import judge, sessions
from brainlab.sim.tuning.grids import SESSION_GRID
from brainlab.spec.thresholds import Thresholds
from brainlab.store.connection import held


def before(db: Path) -> dict:
    """The sweep without the shared basis and without skipping inert thresholds."""
    current = Thresholds()
    values = dataclasses.asdict(current)
    grid = {k: [type(values[k])(v) for v in vs] for k, vs in SESSION_GRID.items()}
    with held(db) as store:
        labels = sessions.outcomes(store)
        order = labels["sess_id"].to_numpy()

        def alert_for(changes: dict) -> np.ndarray:
            signals = metrics.signals(store, current.replace(**changes)).set_index("sess_id")
            flags = signals[list(sessions.DEFAULT_ALERTS)].fillna(False).astype(bool)
            return flags.any(axis=1).reindex(order, fill_value=False).to_numpy()

        weeks, week_of = sessions.week_index(labels["week_start"], labels["iso_week"])
        return judge.judge_alerts(
            target="sessions", unit="sessions", label={}, weeks=weeks, week_of=week_of,
            is_bad=labels["is_next_unhealthy"].astype("float64").to_numpy(),
            alert_for=alert_for, grid=grid, current=values, budget=3.0, table="thresholds")


def measure(func) -> tuple[float, float, object]:
    """(wall seconds, CPU seconds of this process, result) of ``func()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = func()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def year_store(work: Path) -> Path:
    """52 weeks of synthetic history (brain files), built once under ``work``."""
    db = work / "brainlab.duckdb"
    if not db.exists():
        from brainlab.store.ingest import ingest_brain
        from brainlab.synth import SynthOptions, synthesize

        synthesize(work / "brain", SynthOptions(weeks=52, seed=7))
        ingest_brain(db, work / "brain")
    return db


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=Path("data/demo/brainlab.duckdb"))
    parser.add_argument("--work", type=Path, default=Path("data/bench-tuning-52w"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not args.db.exists():
        raise SystemExit(f"Error: {args.db} does not exist; `brainlab demo` builds it")
    args.work.mkdir(parents=True, exist_ok=True)
    stores = {"demo (12 weeks)": args.db, "synthetic 52 weeks": year_store(args.work)}
    figures = {}
    for name, db in stores.items():
        runs = {"before": [], "after": []}
        for _ in range(args.repeat):  # interleaved: a busy moment touches both
            wall, cpu, slow = measure(lambda db=db: before(db))
            runs["before"].append((wall, cpu))
            wall, cpu, fast = measure(lambda db=db: sessions.tune(db))
            runs["after"].append((wall, cpu))
            assert slow["recommended"] == fast["recommended"], "the two sweeps disagree"
            assert slow.get("selected") == fast.get("selected"), "they select differently"
        points = fast["sweep"]["rows"]
        print(f"tune sessions on {name} ({db}): {len(SESSION_GRID)} thresholds, "
              f"{points} grid points scored, {fast['split'].get('weeks')} weeks; "
              f"median of {args.repeat}")
        for kind, label in (("before", "before (a query per grid point)"),
                            ("after", "after (sessions.tune)          ")):
            walls = [w for w, _ in runs[kind]]
            cpus = [c for _, c in runs[kind]]
            print(f"  {label} wall {median_span(walls)}  CPU {median_span(cpus)}")
        ratio = statistics.median(w for w, _ in runs["before"]) / statistics.median(
            w for w, _ in runs["after"])
        print(f"  {ratio:.1f}x faster; verdict: {fast['reason'][:100]}")
        figures[name] = {"before_wall_s": statistics.median(w for w, _ in runs["before"]),
                         "after_wall_s": statistics.median(w for w, _ in runs["after"]),
                         "after_cpu_s": statistics.median(c for _, c in runs["after"])}
    emit("tuning_sweep", **figures)


if __name__ == "__main__":
    main()
