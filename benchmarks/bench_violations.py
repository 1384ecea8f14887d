"""Evaluate ``violations`` and every ``rule_<id>`` view with the old SQL and the new, per store.

Run: PYTHONPATH=. python benchmarks/bench_violations.py [--base 70519fd] [--repeat 5]
     [--store NAME=PATH ...]

The baseline is the ``brainlab`` package of commit ``--base`` (by default the commit before
the rows views shared their bases; ``git archive`` into a temporary folder). Each store
(``--store``, repeatable; without it the demo store is built here, plus an empty store) is
copied once per side; a subprocess with ``PYTHONPATH`` on that side's code writes its views
into its copy (``open_writer``) and then, on a warm read-only connection, times ``SELECT *
FROM violations`` and, apart, the 37 ``rule_<id>`` views one after the other: median of
``--repeat`` runs in CPU-seconds (user + sys of the process: DuckDB's threads included) and
wall seconds. It also prints the rows, whether both sides return the same rows (a digest of
``violations`` ordered by every column), and DuckDB's peak buffer memory and total
allocation for one ``violations`` query (its JSON profile). The old side runs first, the new
right after, store by store; the load average is printed with each store.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from benchkit import emit, load_average

REPO = Path(__file__).resolve().parents[1]
BASE = "70519fd"  # main before the rows views shared their bases (issue 28)


def _cpu() -> float:
    """CPU-seconds of this process so far (all its threads)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _timed(con, sql: str) -> tuple[float, float, int]:
    """CPU-seconds, wall seconds and rows of one query, fetched."""
    cpu, wall = _cpu(), time.perf_counter()
    rows = len(con.execute(sql).fetchall())
    return _cpu() - cpu, time.perf_counter() - wall, rows


def child(db: str, repeat: int) -> None:
    """Write this code's views into ``db``, time the queries, print one JSON line."""
    import duckdb

    from brainlab.store import open_writer

    open_writer(db).close()
    con = duckdb.connect(db, read_only=True)
    views = [f"rule_{r.lower()}" for (r,) in con.execute(
        "SELECT rule FROM rule_catalogue ORDER BY rule").fetchall()]
    ordered = con.execute("SELECT * FROM violations ORDER BY ALL").fetchall()
    digest = hashlib.sha256(repr(ordered).encode()).hexdigest()[:16]
    cpu, wall, rule_cpu = [], [], []
    for _ in range(repeat):
        seconds, elapsed, rows = _timed(con, "SELECT * FROM violations")
        cpu.append(seconds)
        wall.append(elapsed)
        rule_cpu.append(sum(_timed(con, f"SELECT * FROM {v}")[0] for v in views))
    profile = Path(db).with_suffix(".profile.json")
    con.execute("PRAGMA enable_profiling = 'json'")
    con.execute(f"PRAGMA profiling_output = '{profile}'")
    con.execute("SELECT * FROM violations").fetchall()
    con.execute("PRAGMA disable_profiling")
    system = json.loads(profile.read_text())["system"]
    con.close()
    print(json.dumps({"rows": rows, "digest": digest, "cpu": cpu, "wall": wall,
                      "rule_views": len(views), "rule_cpu": rule_cpu,
                      "peak_mb": system["peak_buffer_memory"] / 1e6,
                      "alloc_mb": system["total_memory_allocated"] / 1e6}))


def run_side(code: Path, store: Path, copy: Path, repeat: int) -> dict:
    """Copy ``store``, run :func:`child` on it with ``code`` first on PYTHONPATH."""
    shutil.copyfile(store, copy)
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run([sys.executable, __file__, "--child", str(copy), "--repeat",
                           str(repeat)], env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the run on {copy} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def extract(rev: str, into: Path) -> Path:
    """The ``brainlab`` package of commit ``rev`` under ``into`` (git archive)."""
    data = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", rev, "brainlab"],
                          capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into


def stores(args, tmp: Path) -> dict[str, Path]:
    """The stores given, else the demo store and an empty store built here."""
    if args.store:
        return {name: Path(path) for name, _, path in (s.partition("=") for s in args.store)}
    from brainlab.demo import build_store
    from brainlab.store import open_writer

    demo, empty = tmp / "demo.duckdb", tmp / "empty.duckdb"
    build_store(tmp / "brain", demo, weeks=12, seed=7, workers=1)
    open_writer(empty).close()
    return {"demo": demo, "empty": empty}


def _span(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def main() -> None:
    """Time the old and the new SQL store by store; print the table and the ratios."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default=BASE, help="commit of the old SQL")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--store", action="append", help="NAME=PATH of a store (repeatable)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.repeat)
        return
    figures = {}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        sides = {"old": extract(args.base, tmp / "base"), "new": REPO}
        print(f"old: brainlab of {args.base}; new: {REPO}; median (min-max) of {args.repeat}"
              " runs, warm connection")
        print(f"{'store':<8} {'side':<4} {'rows':>5} {'violations CPU-s':>22}"
              f" {'wall s':>22} {'every rule_<id> CPU-s':>22} {'peak MB':>8} {'alloc MB':>9}")
        for store, path in stores(args, tmp).items():
            load = load_average()
            got = {side: run_side(code, path, tmp / f"{store}-{side}.duckdb", args.repeat)
                   for side, code in sides.items()}
            for side, r in got.items():
                print(f"{store:<8} {side:<4} {r['rows']:>5} {_span(r['cpu']):>22}"
                      f" {_span(r['wall']):>22} {_span(r['rule_cpu']):>22}"
                      f" {r['peak_mb']:>8.0f} {r['alloc_mb']:>9.0f}")
            old, new = (statistics.median(got[s]["cpu"]) for s in ("old", "new"))
            rule_old, rule_new = (statistics.median(got[s]["rule_cpu"]) for s in ("old", "new"))
            same = got["old"]["digest"] == got["new"]["digest"]
            print(f"{store:<8} old/new: violations {old / new:.2f}x, rule views"
                  f" {rule_old / rule_new:.2f}x; same rows: {'yes' if same else 'NO'};"
                  f" load average {load}")
            figures[store] = {side: {"cpu_s": statistics.median(r["cpu"]),
                                     "rule_views_cpu_s": statistics.median(r["rule_cpu"]),
                                     "wall_s": statistics.median(r["wall"]),
                                     "rows": r["rows"], "peak_mb": r["peak_mb"]}
                              for side, r in got.items()} | {"same_rows": same}
    emit("violations", base=args.base, repeat=args.repeat, stores=figures)


if __name__ == "__main__":
    main()
