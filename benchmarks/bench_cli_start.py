"""Start-up of the read commands (issue 12 item 5): wall time of ``brainlab usage daily``,
``brainlab sql`` and ``brainlab errors`` on an ingested store, against ``python -c pass`` and
against importing the old import set (click, rich, duckdb and pandas, which ``query().df()``
pulled in before these commands fetched plain rows).

Usage: python benchmarks/bench_cli_start.py [--repeat 7] [--tree ../shared/corpora/claude-code]
       [--db AN_INGESTED_STORE]                     # instead of ingesting --tree
       [--before OTHER_CHECKOUT/.venv/bin/python]   # also time that checkout's commands

The commands run as a user runs them: the venv's ``brainlab`` console script (through this
python, so ``-X importtime`` applies; ``python -m brainlab.cli`` when there is no script).

Runs are interleaved (one of each per round) so machine load hits them alike; prints median
and range per command and the heavy modules each command imports (``python -X importtime``).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchkit import emit

ROOT = Path(__file__).resolve().parents[1]
NEUTRAL = "/"  # cwd of every run: `-m brainlab.cli` must import each python's own install
HEAVY = ("pandas", "numpy", "pyarrow", "yaml", "altair", "nbformat", "IPython", "rich",
         "duckdb")  # "duckdb": the package (its engine alone is "_duckdb")


def _tree() -> Path:
    for candidate in (ROOT.parent / "shared", Path("/work/shared")):
        if (candidate / "corpora" / "claude-code").is_dir():
            return candidate / "corpora" / "claude-code"
    return ROOT.parent / "shared" / "corpora" / "claude-code"


def wall(argv: list[str]) -> tuple[float, float]:
    """(wall s, CPU s) of one command, output discarded; a failing command stops the benchmark.

    CPU seconds (user + system of the child) hold up better than wall time on a loaded machine.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   cwd=NEUTRAL)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def modules(argv: list[str]) -> int:
    """How many modules a command imports (``-X importtime`` lines)."""
    done = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], capture_output=True,
                          text=True, check=True, cwd=NEUTRAL)
    return sum(line.startswith("import time:") for line in done.stderr.splitlines()) - 1


def heavy_imports(argv: list[str]) -> list[str]:
    """Top-level heavy packages a command imports (from ``-X importtime``)."""
    done = subprocess.run([sys.executable, "-X", "importtime", *argv[1:]], capture_output=True,
                          text=True, check=True, cwd=NEUTRAL)
    found = set()
    for line in done.stderr.splitlines():
        name = line.rsplit("|", 1)[-1].strip()
        top = name.split(".")[0]
        if top in HEAVY:
            found.add(top)
    return sorted(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--tree", type=Path, default=_tree())
    parser.add_argument("--db", type=Path, default=None,
                        help="an ingested store to read (default: ingest --tree into a temp one)")
    parser.add_argument("--before", type=Path, default=None,
                        help="python of another checkout (e.g. main's .venv) to time as before")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = str(args.db or Path(tmp) / "brainlab.duckdb")
        script = Path(sys.executable).with_name("brainlab")
        cli = [sys.executable, str(script)] if script.exists() else [sys.executable, "-m",
                                                                     "brainlab.cli"]
        if not args.db:
            subprocess.run([*cli, "ingest", "claude", str(args.tree), "--db", db], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "old import set": [sys.executable, "-c",
                               "import click, rich.console, rich.progress, duckdb, pandas"],
            "usage daily": [*cli, "usage", "daily", "--db", db],
            "usage sessions": [*cli, "usage", "sessions", "--db", db],
            "sql": [*cli, "sql", "SELECT count(*) FROM cc_requests", "--db", db],
            "errors": [*cli, "errors", "--db", db],
        }
        if args.before:
            old = [str(args.before), "-m", "brainlab.cli"]
            cases.update({"before: usage daily": [*old, "usage", "daily", "--db", db],
                          "before: sql": [*old, "sql", "SELECT count(*) FROM cc_requests",
                                          "--db", db],
                          "before: errors": [*old, "errors", "--db", db]})
        times: dict[str, list[float]] = {name: [] for name in cases}
        cpu: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.repeat):
            for name, argv in cases.items():
                seconds, cpu_s = wall(argv)
                times[name].append(seconds)
                cpu[name].append(cpu_s)
        print(f"start-up, {args.repeat} interleaved runs each, median [min-max];"
              f" store: {args.db or args.tree.name + ' ingested'};"
              f" load average {os.getloadavg()[0]:.1f}")
        for name, argv in cases.items():
            spans, cpus = times[name], cpu[name]
            mine = argv[:2] == cli[:2]
            heavy = (f"  heavy: {', '.join(heavy_imports(argv)) or 'none'}" if mine else "")
            count = f"  {modules(argv)} modules" if argv[1] in ("-m", cli[1]) else ""
            print(f"  {name:<20} wall {statistics.median(spans):.3f} [{min(spans):.3f}-"
                  f"{max(spans):.3f}] s  CPU {statistics.median(cpus):.3f} [{min(cpus):.3f}-"
                  f"{max(cpus):.3f}] s{count}{heavy}")
        usage = statistics.median(times["usage daily"])
        print(f"usage daily answers in {usage:.2f} s (target: well under 1 s);"
              f" old import set alone costs {statistics.median(times['old import set']):.2f} s")
        emit("cli_start", repeat=args.repeat,
             wall_median_s={name: statistics.median(times[name]) for name in cases})


if __name__ == "__main__":
    main()
