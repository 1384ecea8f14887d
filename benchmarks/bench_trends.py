"""What the change-point scans add to a report render and to notebook 01 (issue 43, speed).

On a synthetic brain of ``--weeks`` weeks (52 by default, every plant, its transcripts:
built once into ``--cache``), in one process, for the last week:

- **report, before**: what the report's trend sections computed before issue 43 (the
  headline's ``weekly_health_for`` rows, the health section's ``weekly_category_health_for``);
- **report, after**: the same sections now (the headline's per-session figures with their
  intervals, the trend observations up to the week's end, every series scanned for change
  points, the health points with their intervals);
- **notebook 01, added**: the notebook's new cells' work (observations, weekly changes,
  points, the comparison, agent classes and indexed agents, per-project points).

Each is timed ``--repeats`` times, every query on its own read-only connection (``--held``:
all on one connection with the views a render materializes, ``report.once.store``, as a
render's sections query them; the materializing is timed apart); medians and ranges, wall
and CPU seconds. With ``--baseline REV`` the same timings run twice in
fresh interpreters, one importing brainlab of git revision ``REV`` (``benchkit.checkout``)
and one this tree's, on the same store, and both are printed with the difference.

    PYTHONPATH=. python benchmarks/bench_trends.py --weeks 52
    PYTHONPATH=. python benchmarks/bench_trends.py --weeks 52 --repeats 3 --baseline main
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchkit import MARKER, REPO, checkout, emit, load_average

from brainlab import metrics
from brainlab.demo import build_store
from brainlab.metrics import report as data
from brainlab.metrics import trends, week_over_week
from brainlab.spec.thresholds import Thresholds
from brainlab.spec.weeks import Week
from brainlab.store import reader


def build(folder: Path, weeks: int) -> Path:
    """The synthetic store (built once)."""
    db = folder / "brainlab.duckdb"
    if (folder / "done").exists():
        return db
    shutil.rmtree(folder, ignore_errors=True)
    build_store(folder / "brain", db, weeks=weeks, seed=7, workers=1)
    shutil.rmtree(folder / "brain")
    (folder / "done").write_text("")
    return db


def timed(work, repeats: int) -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        work()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return walls, cpus


IMPORTS = {  # what a process pays before its first scan: the package, or its routine alone
    "import_package": "import ruptures; from scipy.special import ndtri",
    "import_routine": "from brainlab.metrics import changepoints; changepoints._pelt_routine()",
}


def imports(repeats: int) -> dict:
    """CPU seconds of each way to reach the scan, each in a fresh interpreter (numpy, pandas
    loaded first, as in a report kernel): the scan's start-up cost before and after."""
    import subprocess
    import sys

    figures = {}
    for name, code in IMPORTS.items():
        cpus = []
        for _ in range(repeats):
            done = subprocess.run([sys.executable, "-c",
                                   "import numpy, pandas, time; t = time.process_time(); "
                                   f"{code}; print(time.process_time() - t)"],
                                  capture_output=True, text=True, check=True)
            cpus.append(float(done.stdout.split()[-1]))
        print(f"  {name:16} CPU {span(cpus)}   ({code})")
        figures[name + "_cpu"] = statistics.median(cpus)
    return figures


def span(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} s ({min(values):.3f}-{max(values):.3f})"


def main() -> None:
    """Build, time, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weeks", type=int, default=52)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/brainlab-trend-speed"))
    parser.add_argument("--baseline", help="git revision timed beside this tree, in one run")
    parser.add_argument("--held", action="store_true",
                        help="query on one connection with the render's materialized views")
    args = parser.parse_args()
    db = build(args.cache / f"weeks-{args.weeks}", args.weeks)
    if args.baseline:
        compare(args)
        return
    t = Thresholds()
    with reader(db) as con:
        last = con.execute("SELECT max(started_at) FROM metabolism_sessions").fetchone()[0]
    if args.held:  # as a render: one connection, the views it materializes (timed apart)
        from brainlab.report import once

        db = once.store(db)
        walls, cpus = timed(db.connection, 1)
        print(f"  held connection + materialized views: wall {walls[0]:.3f} s, CPU"
              f" {cpus[0]:.3f} s (a render pays it whatever its trend sections)")
    week = Week.of(last.date())
    history = 12

    def before() -> None:
        data.headline(db, week, t)
        data.category_health(db, week, history)

    def after() -> None:
        week_over_week.headline(db, week, t)
        obs = trends.observations(db, t, until=week.end_at)
        trends.since_line(trends.changes(obs, "week"))
        first = week.shifted(-(history - 1)).start
        trends.points(obs[obs["series"].str.startswith("health:")
                          & (obs["week_start"] >= first)], "week")

    weekly = metrics.weekly_health(db, t)  # notebook 01's first cells (not added by issue 43)

    def notebook() -> None:
        obs = trends.observations(db, t)
        trends.weekly_table(weekly, obs)  # the weekly table's n and intervals
        trends.points(obs, "week", series=["ratio"])  # the ratio chart's weekly means
        found = trends.changes(obs, "week")
        if not found.empty:  # the notebook draws the first three changed series
            trends.points(obs, "week", series=list(dict.fromkeys(found["series"]))[:3])
        trends.compare(obs, [week], [week.shifted(-3), week.shifted(-2), week.shifted(-1)])
        classes = trends.agent_classes(obs)
        trends.indexed_agents(obs, classes["agent"].head(9).tolist())
        trends.by_project(obs)

    print(f"{args.weeks}-week synthetic store, week {week.label}, {args.repeats} runs each "
          f"(load average {load_average()})")
    figures = imports(args.repeats)
    for name, work in (("report_before", before), ("report_after", after),
                       ("notebook_added", notebook)):
        walls, cpus = timed(work, args.repeats)
        print(f"  {name:16} wall {span(walls)}   CPU {span(cpus)}")
        figures[name] = statistics.median(walls)
        figures[name + "_cpu"] = statistics.median(cpus)
    added = figures["report_after"] - figures["report_before"]
    added_cpu = figures["report_after_cpu"] - figures["report_before_cpu"]
    start = figures["import_routine_cpu"]  # once per process (report kernel, notebook)
    print(f"added to a report render: {added:.3f} s wall, {added_cpu + start:.3f} CPU-s with"
          f" the scan's start-up (budget 1 s); to notebook 01: {figures['notebook_added']:.3f}"
          f" s wall, {figures['notebook_added_cpu'] + start:.3f} CPU-s (budget 2 s); the"
          f" start-up: {start:.3f} CPU-s, {figures['import_package_cpu']:.3f} with the whole"
          " package")
    emit("trends", weeks=args.weeks, held=args.held, report_added_s=added, **figures)


def compare(args) -> None:
    """The timings of ``--baseline`` and of this tree, each in a fresh interpreter, side by side."""
    runs = {}
    with tempfile.TemporaryDirectory(prefix="bench-trends-") as scratch:
        trees = {"before": checkout(args.baseline, Path(scratch)), "after": REPO}
        for side, tree in trees.items():
            env = {**os.environ, "PYTHONPATH": str(tree)}
            done = subprocess.run([sys.executable, __file__, "--weeks", str(args.weeks),
                                   "--repeats", str(args.repeats), "--cache", str(args.cache),
                                   *(["--held"] if args.held else [])],
                                  env=env, capture_output=True, text=True, check=True)
            print(f"--- {side} ({args.baseline if side == 'before' else 'this tree'})")
            print(done.stdout.rstrip())
            line = next(x for x in done.stdout.splitlines() if x.startswith(MARKER + " "))
            runs[side] = json.loads(line[len(MARKER) + 1:])
    print(f"CPU-s, before ({args.baseline}) -> after (this tree):")
    for key in ("report_after_cpu", "notebook_added_cpu", "import_routine_cpu"):
        a, b = runs["before"][key], runs["after"][key]
        print(f"  {key:20s} {a:6.3f} -> {b:6.3f}  ({b - a:+.3f})")
    added = {side: r["report_after_cpu"] - r["report_before_cpu"] + r["import_routine_cpu"]
             for side, r in runs.items()}
    notebook = {side: r["notebook_added_cpu"] + r["import_routine_cpu"]
                for side, r in runs.items()}
    print(f"added to a report render: {added['before']:.3f} -> {added['after']:.3f} CPU-s"
          f" (budget 1 s); to notebook 01: {notebook['before']:.3f} -> {notebook['after']:.3f}"
          " CPU-s (budget 2 s)")
    emit("trends_compare", weeks=args.weeks, baseline=args.baseline,
         report_added_cpu=added, notebook_added_cpu=notebook)


if __name__ == "__main__":
    main()
