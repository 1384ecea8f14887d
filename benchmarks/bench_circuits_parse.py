"""Benchmark: parsing circuit journals (SPEC §6.7) against the floor of decoding their JSON.

The parser validates each event's required and optional fields, groups by ticket, checks the
order and records what each problem costs. The baseline, in the same run, is ``json.loads`` of
every line and nothing else: what any JSONL reader pays. The ratio says what the checks cost.

Run: PYTHONPATH=$PWD python benchmarks/bench_circuits_parse.py [--tickets 5000]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from datetime import datetime
from pathlib import Path

from benchkit import emit

from brainlab.sources.circuits import CircuitsSource
from brainlab.synth.circuits import write_circuits


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tickets", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench_circuits_"))
    write_circuits(root, random.Random(7), datetime(2026, 1, 5), datetime(2026, 3, 30),
                   args.tickets)
    files = [(p, p.read_bytes()) for p in sorted((root / "circuits").glob("*.jsonl"))]
    lines = sum(data.count(b"\n") for _, data in files)
    source = CircuitsSource()
    best_floor = best_parse = float("inf")
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        for _, data in files:
            for raw in data.decode("utf-8").splitlines():
                json.loads(raw)
        t1 = time.perf_counter()
        rows = sum(len(source.parse(p, data, root).rows.get("circuit_events", []))
                   for p, data in files)
        t2 = time.perf_counter()
        best_floor, best_parse = min(best_floor, t1 - t0), min(best_parse, t2 - t1)
    print(f"{args.tickets:,} tickets, {lines:,} journal lines in {len(files)} files;"
          f" best of {args.repeat}")
    print(f"json.loads only (floor): {best_floor:.2f} s = {lines / best_floor:,.0f} lines/s")
    print(f"CircuitsSource.parse: {best_parse:.2f} s = {lines / best_parse:,.0f} lines/s,"
          f" {rows:,} events kept; {best_parse / best_floor:.1f}x the floor")
    emit("circuits_parse", tickets=args.tickets, lines=lines, floor_s=best_floor,
         parse_s=best_parse, lines_per_s=lines / best_parse, x_floor=best_parse / best_floor)


if __name__ == "__main__":
    main()
