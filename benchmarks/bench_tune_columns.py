"""Benchmark: `tune sessions` reading 5 columns of session_signals_for instead of all of them.

The sweep queries ``session_signals_for`` once per threshold set (~60 sets). Each query's
frame was every column of the view (~40); the sweep reads the session id and the alert
signals only. In the same run and interleaved, on the demo store and a 16-week store with
the close threshold planted (the store of tests/test_tune_sessions.py):

- before: ``sessions.tune`` with ``metrics.signals`` made to ignore ``columns`` (every column);
- after: ``sessions.tune`` as it is (``columns=("sess_id", *alerts)``).

Both must give the same result, compared as JSON. Figures: CPU seconds of this process
(DuckDB's threads included) and wall seconds, the median of ``--repeat`` runs.

Run: PYTHONPATH=$PWD python benchmarks/bench_tune_columns.py [--db data/demo/brainlab.duckdb]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from benchkit import emit, median_span

from brainlab import metrics
from brainlab.sim.tuning import sessions


def planted_store(work: Path) -> Path:
    """16 weeks of logs, the close threshold planted (seed 11), built once under ``work``."""
    db = work / "brainlab.duckdb"
    if not db.exists():
        from brainlab.store.ingest import ingest_brain
        from brainlab.synth import SynthOptions, synthesize

        synthesize(work / "brain", SynthOptions(weeks=16, seed=11,
                                                plants=("unhealthy-after-close",)))
        ingest_brain(db, work / "brain")
    return db


def measure(func) -> tuple[float, float, object]:
    """(CPU seconds of this process, wall seconds, result) of ``func()``."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = func()
    return time.process_time() - cpu, time.perf_counter() - wall, result


def every_column(real):
    """``metrics.signals`` as before: every column whatever ``columns`` asks."""
    def signals(*args, columns=None, **kwargs):
        return real(*args, **kwargs)
    return signals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=Path("data/demo/brainlab.duckdb"))
    parser.add_argument("--work", type=Path, default=Path("data/bench-tune-planted"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not args.db.exists():
        raise SystemExit(f"Error: {args.db} does not exist; `brainlab demo` builds it")
    args.work.mkdir(parents=True, exist_ok=True)
    stores = {"demo (12 weeks)": args.db, "planted (16 weeks)": planted_store(args.work)}
    real = metrics.signals
    sessions.tune(args.db)  # imports and DuckDB's first connection, outside the figures
    headline = {}
    for name, db in stores.items():
        runs = {"before": [], "after": []}
        for _ in range(args.repeat):  # interleaved: a busy moment touches both
            metrics.signals = every_column(real)
            try:
                cpu, wall, slow = measure(lambda db=db: sessions.tune(db, budget=10.0))
            finally:
                metrics.signals = real
            runs["before"].append((cpu, wall))
            cpu, wall, fast = measure(lambda db=db: sessions.tune(db, budget=10.0))
            runs["after"].append((cpu, wall))
            assert json.dumps(slow, sort_keys=True) == json.dumps(fast, sort_keys=True), \
                "the two sweeps differ"
        print(f"tune sessions on {name} ({db}): median of {args.repeat}, the same result")
        for kind, label in (("before", "before (every column)"), ("after", "after (5 columns)   ")):
            cpus = [c for c, _ in runs[kind]]
            walls = [w for _, w in runs[kind]]
            print(f"  {label} CPU {median_span(cpus)}  wall {median_span(walls)}")
        before = sorted(c for c, _ in runs["before"])[len(runs["before"]) // 2]
        after = sorted(c for c, _ in runs["after"])[len(runs["after"]) // 2]
        print(f"  CPU after / before: {after / before:.2f}")
        headline[name.split(" ")[0]] = {"before_cpu": round(before, 3), "after_cpu": round(after, 3)}
    emit("tune_columns", **headline)


if __name__ == "__main__":
    main()
