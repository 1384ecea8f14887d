"""How long each notebook takes on the demo, and ``brainlab notebooks export`` of them all: before and after.

Run: python benchmarks/bench_notebooks_export.py [--db data/demo/brainlab.duckdb]
     [--baseline main] [--rounds 1] [--jobs 2] [--notebooks 01 04]

Two trees are measured in the same run, alternately: the working tree ("after") and
``--baseline`` (a git revision, "before"; ``git archive`` of it unpacked in a scratch folder,
imported through ``PYTHONPATH``: its brainlab, its notebooks, its export). For each tree:

- each notebook executed alone as ``brainlab notebooks export`` executes it
  (``papermill NB out --cwd notebooks -k python3 --engine brainlab``, the store in
  ``BRAINLAB_DB``): wall seconds and CPU seconds (user + system of the papermill process, its
  kernel and everything they waited for: ``RUSAGE_CHILDREN``);
- ``brainlab notebooks export`` of every chosen notebook (``--jobs``): wall and CPU seconds.

The issue's budgets are wall seconds on the demo (a notebook under 20 s, the export of all
under 60 s); on a shared machine the wall figures are the load's as much as the code's, so the
load average is printed at the start and the end and the CPU seconds beside every wall figure.
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from benchkit import emit, load_average

ROOT = Path(__file__).resolve().parents[1]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _measured(command: list[str], env: dict, cwd: Path) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, return code) of one command and what it waited for."""
    cpu, start = _children_cpu(), time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    if done.returncode:
        print(f"  failed ({done.returncode}): {' '.join(command[-8:])}\n"
              f"  {done.stderr.strip().splitlines()[-1:] if done.stderr else ''}")
    return time.perf_counter() - start, _children_cpu() - cpu, done.returncode


def _tree(revision: str, scratch: Path) -> Path:
    """``revision`` of this repository unpacked into ``scratch/revision`` (no .git)."""
    archive = subprocess.run(["git", "archive", revision], cwd=ROOT, check=True,
                             capture_output=True).stdout
    where = scratch / revision.replace("/", "_")
    where.mkdir()
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(where, filter="data")
    return where


def _env(tree: Path, db: Path) -> dict:
    env = {**os.environ, "BRAINLAB_DB": str(db)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tree), env.get("PYTHONPATH")) if p)
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=str(ROOT / "data/demo/brainlab.duckdb"))
    parser.add_argument("--baseline", default="main", help="git revision measured as 'before'")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--notebooks", nargs="*", default=[])
    parser.add_argument("--no-export", action="store_true")
    args = parser.parse_args()
    db = Path(args.db).resolve()
    if not db.exists():
        sys.exit(f"Error: no store at {db}: run `brainlab demo` first")
    print(f"load average at start: {load_average()}")
    figures: dict = {"baseline": args.baseline, "rounds": args.rounds, "jobs": args.jobs}
    with tempfile.TemporaryDirectory(prefix="bench-export-") as scratch_name:
        scratch = Path(scratch_name)
        trees = {"before": _tree(args.baseline, scratch), "after": ROOT}
        names = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")
                       if not args.notebooks or p.stem[:2] in args.notebooks)
        runs: dict[str, dict[str, list]] = {side: {} for side in trees}
        for round_number in range(args.rounds):
            for name in names:
                for side, tree in trees.items():  # alternately: the load hits both alike
                    notebook = tree / "notebooks" / name
                    if not notebook.exists():
                        continue
                    out = scratch / f"{side}-{round_number}-{name}"
                    wall, cpu, code = _measured(
                        [sys.executable, "-m", "papermill", str(notebook), str(out), "--cwd",
                         str(tree / "notebooks"), "-k", "python3", "--engine", "brainlab",
                         "--log-level", "ERROR", "--no-progress-bar"], _env(tree, db), tree)
                    runs[side].setdefault(name, []).append((wall, cpu, code))
            if not args.no_export:
                for side, tree in trees.items():
                    chosen = [n[:2] for n in names if (tree / "notebooks" / n).exists()]
                    wall, cpu, code = _measured(
                        [sys.executable, "-m", "brainlab.cli", "notebooks", "export", *chosen,
                         "--db", str(db), "--out", str(scratch / f"pages-{side}-{round_number}"),
                         "--jobs", str(args.jobs)], _env(tree, db), tree)
                    runs[side].setdefault("export (all)", []).append((wall, cpu, code))
        print(f"{'':<34} {'before (' + args.baseline + ')':>24} {'after (working tree)':>24}")
        print(f"{'':<34} {'wall s':>11} {'CPU s':>11}  {'wall s':>11} {'CPU s':>11}")
        for name in [*names, "export (all)"]:
            cells, row = [], {}
            for side in trees:
                got = [r for r in runs[side].get(name, []) if r[2] == 0]
                if got:
                    wall = min(r[0] for r in got)
                    cpu = min(r[1] for r in got)
                    cells.append(f"{wall:>11.1f} {cpu:>11.1f}")
                    row[side] = {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1)}
                else:
                    cells.append(f"{'-':>11} {'-':>11}")
            print(f"{name:<34} {cells[0]}  {cells[1]}")
            figures[name] = row
    print("(each figure: the smallest of the rounds; CPU = user + system of the run and its kernels)")
    print(f"load average at end: {load_average()}")
    emit("notebooks_export", **figures)


if __name__ == "__main__":
    main()
