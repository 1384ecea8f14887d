"""What capping jsonschema below 4.25 saves each process that starts (pyproject.toml).

Usage: python benchmarks/bench_jsonschema_cap.py [--repeat 5] [--uncapped 4.26.0]

jsonschema 4.25+ imports rfc3987-syntax, whose import compiles a lark grammar. The baseline
is this venv with ``jsonschema==UNCAPPED``, ``rfc3987-syntax`` and ``lark`` installed by pip
into a temporary folder put first on ``PYTHONPATH`` (what an install without the cap has).
Each entry point runs as a fresh process, interleaved with its baseline (one of each per
round, so the machine's load hits both alike); prints CPU-s (user + sys of the child) as
median and range, and the difference.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from importlib.metadata import version

from benchkit import emit, span

ENTRY_POINTS = {
    "papermill --help": ["-m", "papermill", "--help"],
    "JupyterLab's server (import)": ["-c", "import jupyter_server.serverapp"],
    "import nbformat": ["-c", "import nbformat"],
    "import altair": ["-c", "import altair"],
}


def child_cpu(args: list[str], env: dict) -> float:
    """CPU-s (user + sys) of one fresh ``python ARGS``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, *args], env=env, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--uncapped", default="4.26.0", help="jsonschema release of the baseline")
    args = parser.parse_args()
    capped_version = version("jsonschema")  # the venv's own, for the header
    with tempfile.TemporaryDirectory() as extra:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                        "--target", extra, f"jsonschema=={args.uncapped}", "rfc3987-syntax",
                        "lark"], check=True)
        capped = {**os.environ, "PYTHONPATH": ""}
        uncapped = {**os.environ, "PYTHONPATH": extra}
        times = {name: ([], []) for name in ENTRY_POINTS}
        for _ in range(args.repeat):
            for name, entry in ENTRY_POINTS.items():
                times[name][0].append(child_cpu(entry, capped))
                times[name][1].append(child_cpu(entry, uncapped))
    print(f"CPU-s of a fresh process, {args.repeat} each, interleaved: jsonschema "
          f"{capped_version} (capped) against {args.uncapped} + rfc3987-syntax")
    figures = {}
    for name, (now, before) in times.items():
        saved = statistics.median(before) - statistics.median(now)
        figures[name] = round(saved, 3)
        print(f"  {name:30} capped {span(now)}   uncapped {span(before)}   saved {saved:.2f}")
    emit("jsonschema_cap", saved_cpu_s=figures, capped=capped_version,
         uncapped=args.uncapped)


if __name__ == "__main__":
    main()
