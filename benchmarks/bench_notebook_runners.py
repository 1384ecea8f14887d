"""Do stock papermill runs of the notebooks finish? Alone, and four at once beside a CPU hog.

Run: PYTHONPATH=. python benchmarks/bench_notebook_runners.py [--db data/demo/brainlab.duckdb]
     [--runs 10] [--at-once 4] [--notebooks 05 06] [--timeout 300] [--export]

Each notebook is executed ``--runs`` times by papermill's own engine exactly as a scheduler
runs it (``papermill NB out.ipynb --cwd notebooks -k python3``, the store in ``BRAINLAB_DB``),
one at a time ("quiet": nothing of this script beside it); then ``--at-once`` runs of each start
together beside ``python3 -c 'while True: pass'`` ("busy"). A run still going after
``--timeout`` seconds is killed and counted as stalled (issue 44 item 4: the stall waited
forever). Printed per notebook and condition: runs, stalled, seconds (median, min-max); the
baseline, in the same run, is one ``--engine brainlab`` run of each notebook alone (the belt:
it cannot wait on a missed reply). ``--export`` adds ``brainlab notebooks export`` of every
notebook (the issue's 60 s figure). The machine's load average is printed at the start and the
end: on a shared machine the "quiet" figures are as quiet as the others let them be.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchkit import emit, load_average, span

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


def _command(notebook: Path, out: Path, engine: str | None) -> list[str]:
    command = [sys.executable, "-m", "papermill", str(notebook), str(out), "--cwd",
               str(NOTEBOOKS), "-k", "python3", "--log-level", "ERROR", "--no-progress-bar"]
    return command + (["--engine", engine] if engine else [])


def _runs(notebooks: list[Path], copies: int, folder: Path, env: dict, timeout: float,
          engine: str | None = None) -> dict[str, list[float | None]]:
    """Start ``copies`` runs of each notebook at once; seconds of each (None: killed)."""
    started = []
    for notebook in notebooks:
        for copy in range(copies):
            out = folder / f"{notebook.stem}-{copy}-{time.monotonic_ns()}.ipynb"
            started.append((notebook.stem, time.monotonic(), subprocess.Popen(
                _command(notebook, out, engine), env=env, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)))
    result: dict[str, list[float | None]] = {}
    for stem, start, proc in started:
        try:
            proc.wait(timeout=max(1.0, timeout - (time.monotonic() - start)))
            seconds = time.monotonic() - start if proc.returncode == 0 else -1.0
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            seconds = None
        result.setdefault(stem, []).append(seconds)
    return result


def _line(condition: str, stem: str, times: list[float | None]) -> str:
    done = [t for t in times if t is not None and t >= 0]
    stalled = sum(t is None for t in times)
    failed = sum(t is not None and t < 0 for t in times)
    return (f"{condition:<26} {stem:<28} {len(times):>4} {stalled:>7} {failed:>6}  "
            f"{span(done) if done else '-'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=str(ROOT / "data/demo/brainlab.duckdb"))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--at-once", type=int, default=4)
    parser.add_argument("--notebooks", nargs="*", default=[])
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--export", action="store_true")
    args = parser.parse_args()
    notebooks = sorted(p for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")
                       if not args.notebooks or p.stem[:2] in args.notebooks)
    env = {**os.environ, "BRAINLAB_DB": str(Path(args.db).resolve())}
    print(f"load average at start: {load_average()}")
    print(f"{'condition':<26} {'notebook':<28} {'runs':>4} {'stalled':>7} {'failed':>6}  "
          "seconds median (min-max)")
    figures: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="bench-runners-") as scratch:
        folder = Path(scratch)
        for notebook in notebooks:  # baseline: the belt, once each, alone
            times = _runs([notebook], 1, folder, env, args.timeout, engine="brainlab")
            print(_line("brainlab engine, alone", notebook.stem, times[notebook.stem]))
        quiet: dict[str, list] = {}
        for _ in range(args.runs):
            for notebook in notebooks:
                times = _runs([notebook], 1, folder, env, args.timeout)
                quiet.setdefault(notebook.stem, []).extend(times[notebook.stem])
        for stem, times in quiet.items():
            print(_line("stock papermill, alone", stem, times))
        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        try:
            busy = _runs(notebooks, args.at_once, folder, env, args.timeout)
        finally:
            hog.kill()
            hog.wait()
        for stem, times in busy.items():
            print(_line(f"stock, {args.at_once} at once + hog", stem, times))
        for name, table in (("quiet", quiet), ("busy", busy)):
            figures[name] = {stem: {"runs": len(t), "stalled": sum(x is None for x in t),
                                    "max_s": max((x for x in t if x), default=None)}
                             for stem, t in table.items()}
        if args.export:
            start = time.monotonic()
            subprocess.run([sys.executable, "-m", "brainlab.cli", "notebooks", "export",
                            "--db", args.db, "--out", str(folder / "pages")], check=True,
                           env=env, stdout=subprocess.DEVNULL)
            figures["export_all_s"] = round(time.monotonic() - start, 1)
            pages = len(list((folder / "pages").glob("*.html")))
            print(f"brainlab notebooks export (every numbered notebook, {pages} pages, "
                  f"--jobs 2): {figures['export_all_s']} s")
    print(f"load average at end: {load_average()}")
    emit("notebook_runners", **figures)


if __name__ == "__main__":
    main()
