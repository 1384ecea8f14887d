"""The weekly report as a user runs it: ``brainlab report weekly --week W --db DB`` (issue 28
item 8, "a week in under 5 s").

Each run is the console script in a subprocess, with its own defaults (only ``--out`` points
into a temporary folder); its wall time and the CPU-s of its process tree (the command and the
kernel it starts and reaps: ``os.wait4``'s rusage) are read. Runs alternate between:

- ``new``: the code as it is (the kernel started first and importing while the command
  starts, checks the store and imports papermill: ``runner.early_kernel``);
- ``duckdb_threads``: the render's connection with DuckDB's default worker threads (all
  cores: ``BRAINLAB_REPORT_THREADS=0``) instead of one;
- ``no_chart_process``: the charts converted in the kernel's own process, its engine started
  in a thread (``BRAINLAB_REPORT_CHART_PROCESS=0``) instead of in a process of their own;
- ``baseline``: the same code with the early kernel off: ``BRAINLAB_REPORT_EARLY_KERNEL=0``
  (papermill starts the kernel once the notebook is about to run, as on main);
- ``before`` (``--before /work/main``): the command on that checkout's code (main's).

Medians and ranges per store and mode, the load average beside each run. ``--timeline``
then runs the command once more (new) in a wrapper that timestamps its phases (imports,
week plan, papermill's import, the wait for the kernel, the notebook's cells from nbclient's
timestamps, the HTML, the files) and the kernel's own (boot, warm-up), with CPU-s.

    PYTHONPATH=. python benchmarks/bench_report_command.py --db /tmp/demo/brainlab.duckdb \\
        --db /tmp/corpus.duckdb --repeats 5 --timeline --before /work/main
    PYTHONPATH=. python benchmarks/bench_report_command.py --demo   # builds `brainlab demo`

Measured in CPU-s first on a shared machine (wall grows with the load); the lead's quiet
2-core machine gives the wall figure the goal is about.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from benchkit import emit, load_average

MODES = {"new": {},
         "duckdb_threads": {"BRAINLAB_REPORT_THREADS": "0"},
         "no_chart_process": {"BRAINLAB_REPORT_CHART_PROCESS": "0"},
         "baseline": {"BRAINLAB_REPORT_EARLY_KERNEL": "0"}}
SWITCHES = ("BRAINLAB_REPORT_EARLY_KERNEL",
            "BRAINLAB_REPORT_THREADS", "BRAINLAB_REPORT_CHART_PROCESS", "PYTHONPATH")
ROOT = Path(__file__).resolve().parents[1]


def brainlab() -> list[str]:
    """The console script beside this python (``python -m``-less, as a user types it)."""
    script = Path(sys.executable).with_name("brainlab")
    return [str(script)] if script.exists() else [sys.executable, "-c",
                                                  "from brainlab.cli import run; run()"]


def environment(mode: str) -> dict:
    """The run's environment: this checkout's code (or ``--before``'s), the mode's switches."""
    env = {k: v for k, v in os.environ.items() if k not in SWITCHES}
    env["PYTHONPATH"] = str(ROOT)
    env.update(MODES[mode])
    return env


def timed_run(db: Path, week: str, out: Path, mode: str) -> tuple[float, float]:
    """(wall s, CPU-s) of one command: wall by the clock, CPU-s from ``wait4``."""
    args = [*brainlab(), "report", "weekly", "--week", week, "--db", str(db), "--out", str(out)]
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen(args, env=environment(mode), stdout=subprocess.DEVNULL,
                                 stderr=err, cwd=out.parent)
        _pid, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode:
            err.seek(0)
            raise SystemExit(f"{mode} run failed ({child.returncode}): "
                             f"{err.read().decode()[-600:]}")
    return wall, usage.ru_utime + usage.ru_stime


def latest_week(db: Path) -> str:
    from brainlab.report import select_weeks

    return select_weeks(db)[-1]


def compare(db: Path, week: str, repeats: int, root: Path) -> dict:
    """Alternate new and baseline runs ``repeats`` times; print each and the medians."""
    found: dict[str, list[tuple[float, float, float]]] = {m: [] for m in MODES}
    for round_ in range(repeats):
        for mode in (MODES if round_ % 2 == 0 else list(MODES)[::-1]):
            out = root / f"{mode}-{round_}" / "reports"
            out.parent.mkdir(parents=True)
            wall, used = timed_run(db, week, out, mode)
            load = os.getloadavg()[0]
            found[mode].append((wall, used, load))
            print(f"  {mode:8s} run {round_ + 1}: {wall:6.2f} s wall {used:6.2f} CPU-s"
                  f"  (load {load:.2f})", flush=True)
    summary = {}
    for mode, runs in found.items():
        walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
        loads = [r[2] for r in runs]
        summary[mode] = {"wall": round(statistics.median(walls), 2),
                         "cpu": round(statistics.median(cpus), 2),
                         "wall_range": [round(min(walls), 2), round(max(walls), 2)],
                         "load": [round(min(loads), 2), round(max(loads), 2)]}
        print(f" {mode:8s} median {summary[mode]['wall']:6.2f} s wall"
              f" ({min(walls):.2f}-{max(walls):.2f}), {summary[mode]['cpu']:.2f} CPU-s"
              f" ({min(cpus):.2f}-{max(cpus):.2f}); load {min(loads):.2f}-{max(loads):.2f}")
    new = summary["new"]
    for other in [m for m in summary if m != "new"]:
        print(f" new - {other}: {new['wall'] - summary[other]['wall']:+.2f} s wall,"
              f" {new['cpu'] - summary[other]['cpu']:+.2f} CPU-s", flush=True)
    return summary


# The wrapper of --timeline: the command itself (cli.run), with its phases timestamped.
TIMELINE = r'''
import functools, json, os, resource, sys, time
T0 = time.time()
marks = []
def cpu():
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime
def mark(what):
    marks.append((time.time() - T0, cpu(), what))
mark("python started, brainlab.cli importing")
from brainlab import cli
from brainlab.report import runner
mark("cli + runner imported")
runner.WARM_UP = (
    "def _brainlab_timeline():\n"
    "    import json, resource, time\n"
    "    def cpu():\n"
    "        own = resource.getrusage(resource.RUSAGE_SELF)\n"
    "        return own.ru_utime + own.ru_stime\n"
    "    began = (time.time(), cpu())\n"
    + "".join("    " + line + "\n" for line in runner.WARM_UP.splitlines())
    + "    with open(%r, 'w') as f:\n"
    "        json.dump([began, (time.time(), cpu())], f)\n"
    "_brainlab_timeline()\n"
    "del _brainlab_timeline\n") % os.environ["TIMELINE_KERNEL"]
def wrap(module, name):
    found = getattr(module, name)
    @functools.wraps(found)
    def timed(*args, **kwargs):
        mark("> " + name)
        try:
            return found(*args, **kwargs)
        finally:
            mark("< " + name)
    setattr(module, name, timed)
from brainlab.report import html, index, weekly
from brainlab.lab import kernels
for module, name in [(weekly, "plan_weeks"), (runner, "check_parameters"),
                     (kernels.EarlyKernel, "ready"), (runner, "_papermill"),
                     (html, "report_html"), (index, "write_index"),
                     (kernels.EarlyKernel, "close")]:
    wrap(module, name)
import brainlab.report
brainlab.report.__dict__.pop("plan_weeks", None)
sys.argv = ["brainlab"] + sys.argv[1:]
try:
    cli.run()
finally:
    mark("end")
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.environ["TIMELINE_PARENT"], "w") as f:
        json.dump({"t0": T0, "marks": marks, "kernel_cpu": kids.ru_utime + kids.ru_stime}, f)
'''


def timeline(db: Path, week: str, root: Path, mode: str = "new", n: int = 0) -> dict:
    """One run of the command (``mode``), its phases and the kernel's, wall and CPU-s."""
    here = root / f"timeline-{n}-{mode}"
    out = here / "reports"
    out.parent.mkdir(parents=True)
    env = environment(mode)
    env["TIMELINE_KERNEL"] = str(here / "kernel.json")
    env["TIMELINE_PARENT"] = str(here / "parent.json")
    done = subprocess.run([sys.executable, "-c", TIMELINE, "report", "weekly", "--week", week,
                           "--db", str(db), "--out", str(out)], env=env, capture_output=True,
                          text=True, cwd=out.parent)
    if done.returncode:
        raise SystemExit(f"timeline run failed: {done.stderr[-600:]}")
    parent = json.loads(Path(env["TIMELINE_PARENT"]).read_text())
    t0 = parent["t0"]
    rows = [(t, f"parent {c:5.2f} CPU-s", what) for t, c, what in parent["marks"]]
    kernel_path = Path(env["TIMELINE_KERNEL"])
    if kernel_path.exists():
        (began, kcpu0), (ended, kcpu1) = json.loads(kernel_path.read_text())
        rows.append((began - t0, f"kernel {kcpu0:5.2f} CPU-s", "kernel booted: warm-up starts"))
        rows.append((ended - t0, f"kernel {kcpu1:5.2f} CPU-s",
                     "kernel warm-up done (sections imported, chart engine starting)"))
    nb = json.loads((out / week / "weekly_health.ipynb").read_text())
    cells = []
    for cell in nb["cells"]:
        timing = cell["metadata"].get("execution", {})
        begin, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
        if cell["cell_type"] != "code" or not begin or not end:
            continue
        source = cell["source"]
        source = "".join(source) if isinstance(source, list) else source
        first = next((ln for ln in source.splitlines() if ln.strip()
                      and not ln.startswith("#")), "")
        stamp = [datetime.fromisoformat(x.replace("Z", "+00:00")).timestamp()
                 for x in (begin, end)]
        cells.append((stamp[0] - t0, stamp[1] - t0, first.strip()[:44]))
    if cells:
        rows.append((cells[0][0], "", "first cell starts"))
        rows.append((cells[-1][1], "", "last cell ends"))
    print(f"\ntimeline of one run ({week}, {mode}), seconds from the command's start"
          f" ({' '.join(map(str, load_average()))}):")
    for t, what_cpu, what in sorted(rows):
        print(f"  {t:6.2f}  {what_cpu:18s}  {what}")
    print(f"  kernel CPU-s in all: {parent['kernel_cpu']:.2f}")
    print("  cells (wall s, the slowest first):")
    for begin, end, first in sorted(cells, key=lambda c: c[0] - c[1])[:8]:
        print(f"   {end - begin:5.2f}  {first}")
    return {"marks": [[round(t, 2), w] for t, _c, w in sorted(rows)],
            "kernel_cpu": round(parent["kernel_cpu"], 2),
            "cells_wall": round(sum(e - b for b, e, _ in cells), 2)}


def build_demo(root: Path) -> Path:
    subprocess.run([*brainlab(), "demo", "--dir", str(root / "demo")], check=True,
                   stdout=subprocess.DEVNULL)
    return root / "demo" / "brainlab.duckdb"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", type=Path, action="append", default=[],
                        help="a store (repeatable); default: build `brainlab demo`")
    parser.add_argument("--demo", action="store_true", help="also build and time the demo")
    parser.add_argument("--week", help="the week (default: each store's latest)")
    parser.add_argument("--repeats", type=int, default=5, help="runs per mode (0: none)")
    parser.add_argument("--timeline", action="store_true")
    parser.add_argument("--timeline-modes", default="new",
                        help="the modes of the timeline runs, comma-separated (default: new)")
    parser.add_argument("--before", type=Path, help="also run the command on the code of this"
                        " checkout (e.g. /work/main): mode `before`")
    args = parser.parse_args()
    if args.before:
        MODES["before"] = {"PYTHONPATH": str(args.before.resolve())}
    print(f"start (load average {' '.join(map(str, load_average()))})", flush=True)
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-report-command-") as tmp:
        root = Path(tmp)
        stores = [db.resolve() for db in args.db]
        if args.demo or not stores:
            stores.append(build_demo(root))
        for n, db in enumerate(stores):
            week = args.week or latest_week(db)
            print(f"\n{db} week {week}: `brainlab report weekly --week {week} --db DB`,"
                  f" {args.repeats} runs per mode, alternating; modes: {MODES}",
                  flush=True)
            here = root / f"store{n}"
            results[str(db)] = compare(db, week, args.repeats, here) if args.repeats else {}
            if args.timeline:
                for k, mode in enumerate(args.timeline_modes.split(",")):
                    results[str(db)][f"timeline_{k}_{mode}"] = timeline(db, week, here, mode, k)
    emit("report_command", stores=results)


if __name__ == "__main__":
    main()
