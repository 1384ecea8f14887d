"""Benchmark: what creating a new store costs, step by step, and with the empty-store template.

Usage:
    PYTHONPATH=. python benchmarks/bench_store_create.py [--repeat 5] [--dir /tmp/store-bench]

Interleaved rounds in one process (module imports, YAML models and the catalog fingerprint
loaded before the clock starts), CPU seconds of this process (getrusage) and wall:
- built in place, step by step as ``schema.apply`` does (one transaction): reading the model
  files and ordering them (store/graph.py), tables, lookup tables, the view and macro files,
  the rendered ``rule_<id>`` and ``violations`` views, the column comments, the commit, and
  closing the file (its checkpoint); the same in memory;
- ``open_writer`` of a new file with an empty cache (builds the template, then copies it);
- ``open_writer`` of a new file with the template cached (a file copy and a connection).
The baseline is the first: what every new store cost before the template (store/template.py).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path

import duckdb
from benchkit import emit

from brainlab.store import graph, rulebook, schema, template


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def step_by_step(path: str) -> dict[str, float]:
    """CPU seconds of each step of building the catalogue at ``path`` (or ':memory:')."""
    out: dict[str, float] = {}

    def timed(name, action) -> None:
        start = _cpu()
        action()
        out[name] = _cpu() - start

    con = duckdb.connect(path)
    con.execute("BEGIN TRANSACTION")
    models: list = []
    timed("model files, load order", lambda: models.extend(graph.ordered.__wrapped__()))
    timed("tables", lambda: [con.execute(m.sql) for m in models if m.layer == "raw"])
    timed("lookup tables", lambda: schema._write_lookups(con))
    timed("view and macro files", lambda: [con.execute(m.sql) for m in models
                                           if m.layer != "raw"])
    timed("rule_<id> + violations views", lambda: con.execute(rulebook.render()))
    timed("column comments", lambda: schema._write_comments(con))
    timed("commit", lambda: con.execute("COMMIT"))
    timed("close (checkpoint)", con.close)
    return out


def open_new(path: Path) -> float:
    """CPU seconds of ``open_writer`` on a new file, closed again."""
    start = _cpu()
    schema.open_writer(path).close()
    return _cpu() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/store-bench"))
    args = parser.parse_args()
    shutil.rmtree(args.dir, ignore_errors=True)
    args.dir.mkdir(parents=True)
    cache = args.dir / "cache"
    os.environ[template.CACHE_ENV] = str(cache)
    schema.models(), schema.template_key()  # YAML, fingerprint: loaded once per process
    runs: dict[str, list[float]] = {}
    walls: dict[str, list[float]] = {}
    for i in range(args.repeat):
        for label, target in (("file", str(args.dir / f"steps{i}.duckdb")),
                              ("memory", ":memory:")):
            wall = time.perf_counter()
            steps = step_by_step(target)
            walls.setdefault(f"built in place ({label})", []).append(time.perf_counter() - wall)
            runs.setdefault(f"built in place ({label})", []).append(sum(steps.values()))
            if label == "file":
                for name, value in steps.items():
                    runs.setdefault(f"  {name}", []).append(value)
        shutil.rmtree(cache, ignore_errors=True)
        for label in ("open_writer, empty cache", "open_writer, template cached"):
            wall = time.perf_counter()
            runs.setdefault(label, []).append(open_new(args.dir / f"{label[13:18]}{i}.duckdb"))
            walls.setdefault(label, []).append(time.perf_counter() - wall)
    print(f"new store, {args.repeat} interleaved rounds; CPU s median (min-max), wall median;"
          f" duckdb {duckdb.__version__}")
    for name, values in runs.items():
        wall = f"{statistics.median(walls[name]):6.3f} s" if name in walls else ""
        print(f"  {name:34} {statistics.median(values):6.3f} ({min(values):.3f}-"
              f"{max(values):.3f}) {wall}")
    emit("store_create", repeat=args.repeat,
         cpu_median_s={name.strip(): statistics.median(v) for name, v in runs.items()})
    shutil.rmtree(args.dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
