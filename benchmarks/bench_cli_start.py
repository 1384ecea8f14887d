"""Start-up of the read commands (issue 12 item 5): wall time of ``brainlab usage daily``,
``brainlab sql`` and ``brainlab errors`` on an ingested store, against ``python -c pass`` and
against importing the old import set (click, rich, duckdb and pandas, which ``query().df()``
pulled in before these commands fetched plain rows).

Usage: python benchmarks/bench_cli_start.py [--repeat 7] [--tree ../shared/corpora/claude-code]
       [--before OTHER_CHECKOUT/.venv/bin/python]   # also time that checkout's commands

Runs are interleaved (one of each per round) so machine load hits them alike; prints median
and range per command and the heavy modules each command imports (``python -X importtime``).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pandas", "numpy", "pyarrow", "yaml", "altair", "nbformat", "IPython")


def _tree() -> Path:
    for candidate in (ROOT.parent / "shared", Path("/work/shared")):
        if (candidate / "corpora" / "claude-code").is_dir():
            return candidate / "corpora" / "claude-code"
    return ROOT.parent / "shared" / "corpora" / "claude-code"


def wall(argv: list[str]) -> float:
    """Seconds one command takes, output discarded; a failing command stops the benchmark."""
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def heavy_imports(argv: list[str]) -> list[str]:
    """Top-level heavy packages a command imports (from ``-X importtime``)."""
    done = subprocess.run([sys.executable, "-X", "importtime", *argv[1:]], capture_output=True,
                          text=True, check=True)
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
    parser.add_argument("--before", type=Path, default=None,
                        help="python of another checkout (e.g. main's .venv) to time as before")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "brainlab.duckdb")
        cli = [sys.executable, "-m", "brainlab.cli"]
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
        for _ in range(args.repeat):
            for name, argv in cases.items():
                times[name].append(wall(argv))
        print(f"start-up, {args.repeat} interleaved runs each (median [min-max] s wall),"
              f" store: {args.tree.name} ingested")
        for name, argv in cases.items():
            spans = times[name]
            mine = argv[0] == sys.executable and argv[1] == "-m"
            heavy = heavy_imports(argv) if mine else []
            print(f"  {name:<20} {statistics.median(spans):.3f} [{min(spans):.3f}-"
                  f"{max(spans):.3f}]" + (f"  heavy imports: {', '.join(heavy) or 'none'}"
                                          if mine else ""))
        usage = statistics.median(times["usage daily"])
        print(f"usage daily answers in {usage:.2f} s (target: well under 1 s);"
              f" old import set alone costs {statistics.median(times['old import set']):.2f} s")


if __name__ == "__main__":
    main()
