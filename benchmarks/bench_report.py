"""Benchmark: render one week's report from a year of synthetic data (SynthOptions(weeks=52)).

Figures printed:
- full render: ``render_weekly`` = papermill run (kernel start included), HTML conversion,
  atomic writes, summary and index. Target: under 20 s.
- baseline A, plain nbclient: the same notebook, same parameters, executed by nbclient with
  no papermill and no HTML conversion -> the cost papermill + conversion add on top.
- baseline B, in-process: the notebook's section calls run in this Python process (no kernel,
  no notebook at all) -> the cost of the queries and the SVG charts alone.
- HTML size with the default 12-week trend and with a whole-year (52-week) trend (< 3 MB).

Run: PYTHONPATH=. python benchmarks/bench_report.py [--weeks 52]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import nbformat
from benchkit import emit


def build(root: Path, weeks: int) -> tuple[Path, str]:
    from brainlab.demo import build_store
    from brainlab.report import latest_week

    db = root / "brainlab.duckdb"
    build_store(root / "brain", db, weeks=weeks, seed=7, transcripts=False)
    return db, latest_week(db)


def plain_nbclient(db: Path, week: str, cwd: Path) -> float:
    from nbclient import NotebookClient

    from brainlab.report.runner import weekly_notebook

    nb = nbformat.read(weekly_notebook(), as_version=4)
    # the same parameter values papermill would inject, in a plain cell after the tagged one
    at = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
    nb.cells.insert(at + 1, nbformat.v4.new_code_cell(f"db = {str(db)!r}\nweek = {week!r}"))
    started = time.perf_counter()
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(cwd)}}).execute()
    return time.perf_counter() - started


def in_process(db: Path, week: str) -> float:
    from brainlab.report import sections

    sections.show = lambda fragment: None  # no IPython display outside a kernel
    started = time.perf_counter()
    ctx = sections.open_report(str(db), week)
    for name in ("title", "headline", "health", "ratio", "conserve", "agents", "breath",
                 "regulator", "hygiene", "data_quality", "sessions"):
        getattr(sections, name)(ctx)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--weeks", type=int, default=52)
    args = parser.parse_args()
    from brainlab.report import render_weekly

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        db, week = build(root, args.weeks)
        print(f"synthesize + ingest {args.weeks} weeks: {time.perf_counter() - started:.1f} s"
              f" (week reported: {week})")

        started = time.perf_counter()
        page = render_weekly(db, week, root / "reports")
        full = time.perf_counter() - started
        size12 = page.stat().st_size

        nbc = plain_nbclient(db, week, root)
        inproc = in_process(db, week)

        started = time.perf_counter()
        page52 = render_weekly(db, week, root / "reports52", history_weeks=52)
        full52 = time.perf_counter() - started
        size52 = page52.stat().st_size

    print(f"full render (papermill + HTML + index), 12-week trend: {full:6.2f} s  target < 20 s")
    print(f"baseline A: plain nbclient, no papermill, no HTML:     {nbc:6.2f} s"
          f"  (papermill + conversion add {full - nbc:+.2f} s)")
    print(f"baseline B: section calls in-process, no kernel:       {inproc:6.2f} s"
          f"  (kernel start + imports + notebook machinery: {full - inproc:+.2f} s)")
    print(f"full render, 52-week trend:                            {full52:6.2f} s")
    print(f"HTML size: 12-week trend {size12 / 1024:.0f} KiB, 52-week trend "
          f"{size52 / 1024:.0f} KiB  (limit 3 MB)")
    emit("report", weeks=args.weeks, render_s=full, nbclient_s=nbc, in_process_s=inproc,
         render52_s=full52, html_kib=size12 / 1024, html52_kib=size52 / 1024)


if __name__ == "__main__":
    main()
