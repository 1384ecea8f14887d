"""Warm readers (store/connection.py ``Warm``): CPU of a burst of reads, and of read commands,
with the database kept warm between readers (``BRAINLAB_READER_LINGER=0.5``: the command's
default) against each reader opening, sealing and closing the file (``=0``: library use's
default, and the code before the cut), in one run.

- a burst: ``--queries`` small queries through ``query``/``rows`` (a notebook cell's or a
  test's run of reads) in a fresh interpreter each way, CPU per query;
- commands as a user runs them (the venv's ``brainlab``): ``usage daily``, ``usage weekly``,
  ``errors``, ``sql``, ``simulate regulator``, ``trends``; CPU of the child, user + system.

Runs are interleaved (one of each per round) so machine load hits both alike. Run:

    PYTHONPATH=. python benchmarks/bench_reader_warm.py --db data/demo/brainlab.duckdb
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

from benchkit import emit, load_average

ROOT = Path(__file__).resolve().parents[1]
BURST = """
import resource, sys
from brainlab.store import query, rows
db, n = sys.argv[1], int(sys.argv[2])
rows(db, "SELECT 1")  # imports and the first open: outside the figure
start = resource.getrusage(resource.RUSAGE_SELF)
for i in range(n):
    if i % 2:
        rows(db, "SELECT key, value FROM brainlab_meta")
    else:
        query(db, "SELECT count(*) AS n FROM ingest_errors")
end = resource.getrusage(resource.RUSAGE_SELF)
print((end.ru_utime + end.ru_stime - start.ru_utime - start.ru_stime) / n)
"""
COMMANDS = (("usage", "daily"), ("usage", "weekly"), ("errors",), ("sql", "SELECT 1"),
            ("simulate", "regulator"), ("trends",))


def child_cpu(argv: list[str], env: dict) -> float:
    """CPU seconds (user + system) of one child process, its output discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=ROOT / "data" / "demo" / "brainlab.duckdb")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    if not args.db.exists():
        parser.error(f"no store at {args.db}: run `brainlab demo` first, or pass --db")
    brainlab = Path(sys.executable).with_name("brainlab")
    modes = {"warm": "0.5", "cold": "0"}
    burst = {mode: [] for mode in modes}
    commands = {(mode, cmd): [] for mode in modes for cmd in COMMANDS}
    for _ in range(args.repeat):
        for mode, linger in modes.items():
            env = {**os.environ, "BRAINLAB_READER_LINGER": linger, "BRAINLAB_DB": str(args.db)}
            out = subprocess.run([sys.executable, "-c", BURST, str(args.db), str(args.queries)],
                                 env=env, capture_output=True, text=True, check=True).stdout
            burst[mode].append(float(out.strip()) * 1000)
            for cmd in COMMANDS:
                commands[(mode, cmd)].append(child_cpu([str(brainlab), *cmd], env))
    med = {key: statistics.median(values) for key, values in {**burst, **commands}.items()}
    print(f"store {args.db}, {args.repeat} rounds, load average {load_average()}")
    print(f"a burst of {args.queries} queries, CPU ms per query (median):"
          f" warm {med['warm']:.2f}, cold {med['cold']:.2f} (x{med['cold'] / med['warm']:.1f})")
    print("command CPU s (median)      warm    cold   warm/cold")
    for cmd in COMMANDS:
        warm, cold = med[("warm", cmd)], med[("cold", cmd)]
        print(f"  {' '.join(cmd)[:24]:24} {warm:7.3f} {cold:7.3f}   {warm / cold:5.2f}")
    emit("reader_warm", queries=args.queries, burst_ms_warm=round(med["warm"], 3),
         burst_ms_cold=round(med["cold"], 3),
         commands={" ".join(cmd): [round(med[("warm", cmd)], 3), round(med[("cold", cmd)], 3)]
                   for cmd in COMMANDS})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
