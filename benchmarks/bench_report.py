"""Benchmark: where a weekly report's time goes, in CPU seconds and wall seconds.

On a store (``--db``, e.g. the public transcripts corpus ingested) or on a synthetic brain it
builds (``--weeks N``), in one run:

- one week by ``render_weekly`` (papermill, a kernel of its own): wall and CPU-s of the whole
  process tree (this process + the kernel it starts, from ``getrusage``: the kernel is reaped
  before the figure is read);
- ``--many`` weeks (``--all``: every week holding a session) by ``render_weeks`` (one kernel
  for all of them): total and per week, wall and CPU-s;
- the baseline in the same run: the same weeks rendered with the per-render caches off
  (``BRAINLAB_REPORT_CACHE=0``: every query opens its own connection, ``violations`` is
  evaluated per query, as before issue 28 item 8);
- a breakdown of one week in this process: the imports, each section's CPU-s and wall (the
  same functions the notebook's cells call), then nbconvert's HTML and the summary;
- each notebook cell's wall time in the first and a later week (nbclient's timestamps).

CPU-s is the honest figure on a shared machine (wall grows with the load average, printed
beside every figure). Run:

    PYTHONPATH=. python benchmarks/bench_report.py --db corpus.duckdb --all
    PYTHONPATH=. python benchmarks/bench_report.py --weeks 6 --many 3
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import resource
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import nbformat
from benchkit import emit

SECTIONS = ("title", "headline", "health", "ratio", "conserve", "agents", "breath",
            "regulator", "usage", "telemetry", "limits", "logged_vs_measured", "hygiene",
            "compliance", "data_quality", "sessions")


def cpu() -> float:
    """CPU seconds of this process and of its reaped children (the kernels), user + sys."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@contextlib.contextmanager
def clock(into: dict, key: str):
    """Record wall and CPU-s of the block into ``into[key] = (wall, cpu)``."""
    wall, used = time.perf_counter(), cpu()
    yield
    into[key] = (time.perf_counter() - wall, cpu() - used)


@contextlib.contextmanager
def caches(on: bool):
    """Run the block with the report's per-render caches on or off (the baseline)."""
    old = os.environ.get("BRAINLAB_REPORT_CACHE")
    os.environ["BRAINLAB_REPORT_CACHE"] = "1" if on else "0"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("BRAINLAB_REPORT_CACHE", None)
        else:
            os.environ["BRAINLAB_REPORT_CACHE"] = old


def build(root: Path, weeks: int) -> Path:
    from brainlab.demo import build_store

    db = root / "brainlab.duckdb"
    build_store(root / "brain", db, weeks=weeks, seed=7, transcripts=False)
    return db


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


def breakdown(db: Path, week: str, cached: bool) -> dict:
    """One week's sections called in this process: (wall, CPU-s) per section."""
    from brainlab.report import sections

    found: dict = {}
    with caches(cached), contextlib.redirect_stdout(io.StringIO()):
        with clock(found, "open_report"):
            ctx = sections.open_report(db=str(db), week=week)
        for name in SECTIONS:
            with clock(found, name):
                getattr(sections, name)(ctx)
        with clock(found, "finish"):
            getattr(sections, "finish", lambda _ctx: None)(ctx)  # absent before the cut
    return found


def rendered(out: Path, week: str) -> Path:
    return out / week / "weekly_health.ipynb"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", type=Path, help="an existing store (default: build a demo)")
    parser.add_argument("--weeks", type=int, default=6, help="weeks of the demo brain")
    parser.add_argument("--many", type=int, default=3, help="weeks rendered in one kernel")
    parser.add_argument("--all", action="store_true", help="every week holding a session")
    parser.add_argument("--no-baseline", action="store_true")
    args = parser.parse_args()
    print(f"start ({load()})", flush=True)
    imports: dict = {}
    with clock(imports, "imports"):  # what the notebook's first cell pays in a new kernel
        from brainlab.report import sections  # noqa: F401
    with clock(imports, "runner"):  # what the command adds (papermill, nbformat, nbconvert)
        from brainlab.report import render_weekly, render_weeks, select_weeks
    from brainlab.report import html, weekly

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if args.db:
            db = args.db.resolve()
        else:
            started = time.perf_counter()
            db = build(root, args.weeks)
            print(f"synthesize + ingest {args.weeks} weeks: {time.perf_counter() - started:.1f} s")
        held = select_weeks(db, all_weeks=True)
        weeks = held if args.all else held[-args.many:]
        print(f"store {db.name}: {len(held)} week(s) with sessions; rendering {len(weeks)}:"
              f" {weeks[0]}..{weeks[-1]}", flush=True)
        figures: dict = {}
        modes = [("new", True)] + ([] if args.no_baseline else [("baseline", False)])
        for label, on in modes:
            with caches(on):
                with clock(figures, f"{label}_one"):
                    render_weekly(db, weeks[-1], root / label / "one", update_index=False)
                wall, used = figures[f"{label}_one"]
                print(f"{label:8s} one week ({weeks[-1]}, own kernel):   {wall:6.2f} s wall"
                      f" {used:6.2f} CPU-s  ({load()})", flush=True)
                with clock(figures, f"{label}_many"):
                    render_weeks(db, weeks, root / label / "many")
                wall, used = figures[f"{label}_many"]
                print(f"{label:8s} {len(weeks)} weeks, one kernel:  {wall:6.2f} s wall"
                      f" {used:6.2f} CPU-s = {wall / len(weeks):5.2f} s, {used / len(weeks):5.2f}"
                      f" CPU-s per week  ({load()})", flush=True)

        print(f"\nbreakdown of {weeks[-1]} in this process (wall s / CPU-s)  ({load()})")
        for key, what in (("imports", "imports cell (sections)"), ("runner", "runner imports")):
            print(f"  {what:34s} {imports[key][0]:6.2f} {imports[key][1]:6.2f}")
        for label, on in modes:
            found = breakdown(db, weeks[-1], on)
            notebook = nbformat.read(str(rendered(root / "new" / "one", weeks[-1])), 4)
            with clock(found, "html (nbconvert)"):
                html.report_html(notebook, "x")
            with caches(on), clock(found, "summary.json queries"):
                weekly._summary(db, weeks[-1], weekly.runner.Execution(notebook, db, "", 0.0),
                                {"thresholds_file": "", "ratio_window": 0, "basis": "best"})
            total = sum(c for _w, c in found.values())
            figures[f"{label}_breakdown_cpu"] = total
            print(f" {label}: sum {total:.2f} CPU-s")
            for key, (wall, used) in sorted(found.items(), key=lambda kv: -kv[1][1]):
                if used >= 0.02:
                    print(f"  {key:34s} {wall:6.2f} {used:6.2f}")
        for label, week in (("first week", weeks[0]), ("a later week", weeks[-1])):
            times = cell_times(rendered(root / "new" / "many", week))
            print(f"cells of the {label} ({week}), one kernel, wall: "
                  f"{sum(t for t, _ in times):.2f} s")
            for seconds, first in sorted(times, reverse=True)[:5]:
                print(f"  {seconds:6.2f} s  {first}")
    per = {k: [round(v[0], 2), round(v[1], 2)] for k, v in figures.items()
           if isinstance(v, tuple)}
    emit("report", store=db.name, weeks=len(weeks), wall_cpu=per,
         cpu_s_per_week_many=figures["new_many"][1] / len(weeks),
         cpu_s_one_week=figures["new_one"][1],
         baseline_cpu_s_per_week_many=(figures["baseline_many"][1] / len(weeks)
                                       if "baseline_many" in figures else None))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
