"""Benchmark: where a weekly report's time goes, and many weeks in one kernel against the old path.

Builds a synthetic brain (SynthOptions(weeks=N), default 12), then in the same run:
- old path: ``render_weekly`` once per week (papermill, a new kernel each week), ``--many``
  weeks, total and per week;
- new path: ``render_weeks`` for the same weeks (one kernel over IPC for all of them);
- kernel start alone (IPC, until it answers), and each notebook cell's time in the first and
  in a later week of the new path (the imports cell, each section: queries, altair and
  vl-convert's SVG), from nbclient's execution timestamps.
The load average is printed beside the figures (the machine is shared).

Run: PYTHONPATH=. python benchmarks/bench_report.py [--weeks 12] [--many 4]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
import time
from datetime import datetime
from pathlib import Path

import nbformat
from benchkit import emit


def build(root: Path, weeks: int) -> Path:
    from brainlab.demo import build_store

    db = root / "brainlab.duckdb"
    build_store(root / "brain", db, weeks=weeks, seed=7, transcripts=False)
    return db


def kernel_start() -> float:
    from brainlab import kernels

    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        km = kernels.start_kernel(stack)
        client = km.client()
        client.start_channels()
        client.wait_for_ready(timeout=120)
        seconds = time.perf_counter() - started
        client.stop_channels()
    return seconds


def cell_times(notebook: Path) -> list[tuple[float, str]]:
    """(seconds, first line) of each code cell, from nbclient's execution timestamps."""
    nb = nbformat.read(str(notebook), as_version=4)
    out = []
    for cell in nb.cells:
        timing = cell.metadata.get("execution", {})
        begin, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
        if cell.cell_type != "code" or not begin or not end:
            continue
        seconds = (datetime.fromisoformat(end.replace("Z", "+00:00"))
                   - datetime.fromisoformat(begin.replace("Z", "+00:00"))).total_seconds()
        first = next((ln for ln in cell.source.splitlines() if ln.strip()
                      and not ln.startswith("#")), "")
        out.append((seconds, first.strip()[:52]))
    return out


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--weeks", type=int, default=12)
    parser.add_argument("--many", type=int, default=4)
    args = parser.parse_args()
    from brainlab.report import render_weekly, render_weeks, select_weeks

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        db = build(root, args.weeks)
        weeks = select_weeks(db, all_weeks=True)[-args.many:]
        print(f"synthesize + ingest {args.weeks} weeks: {time.perf_counter() - started:.1f} s;"
              f" rendering {', '.join(weeks)}  ({load()})")

        started = time.perf_counter()
        for week in weeks:
            render_weekly(db, week, root / "old", update_index=False)
        old = time.perf_counter() - started
        print(f"old path, a kernel per week ({len(weeks)} x render_weekly): {old:6.2f} s,"
              f" {old / len(weeks):5.2f} s/week  ({load()})")

        started = time.perf_counter()
        render_weeks(db, weeks, root / "new")
        new = time.perf_counter() - started
        print(f"new path, one kernel (render_weeks):                {new:6.2f} s,"
              f" {new / len(weeks):5.2f} s/week  ({load()})")
        print(f"kernel start alone (IPC, until ready): {kernel_start():.2f} s")
        for label, week in (("first week", weeks[0]), ("a later week", weeks[-1])):
            times = cell_times(root / "new" / week / "weekly_health.ipynb")
            print(f"cells of the {label} ({week}), new path: {sum(t for t, _ in times):.2f} s")
            for seconds, first in sorted(times, reverse=True)[:8]:
                print(f"  {seconds:6.2f} s  {first}")
    emit("report", weeks=len(weeks), old_s_per_week=old / len(weeks),
         new_s_per_week=new / len(weeks))


if __name__ == "__main__":
    main()
