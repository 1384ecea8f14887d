"""CPU-s of brainlab's processes with the package's bytecode written (``make bytecode``) and without.

Where ``PYTHONDONTWRITEBYTECODE`` is set (this machine, many containers) Python never writes
``__pycache__``, and an editable install (``pip install -e .``, what ``make`` does) writes
none either, unlike a wheel's install: every ``brainlab`` command, notebook kernel and test
worker then compiled the brainlab modules it imports, on each start. ``make test`` and ``make
demo`` now run ``compileall`` first (stop 28, docs/testing.md).

Two copies of this checkout's package (``git archive HEAD``), one compiled with
``compileall`` and one left as source, run the frequent commands of
``bench_cli_cpu.py`` and a notebook kernel's imports, interleaved (one of each per round, so
machine load hits both alike), with ``PYTHONDONTWRITEBYTECODE=1`` on both sides. Prints the
median CPU-s (user + system of the process) with its range per case and side, the
difference, and whether both printed the same bytes.

Usage: python benchmarks/bench_bytecode.py [--repeat 5] [--only check]
       [--demo data/demo/brainlab.duckdb]   # built with `brainlab demo --dir` when missing
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import sys
import tempfile
from pathlib import Path

from bench_cli_cpu import Case, cases, demo_store, isolated_env, run
from benchkit import REPO, checkout, emit, span

KERNEL_IMPORTS = ("from brainlab.lab import notebook_db, notebook_settings, record; "
                  "from brainlab import metrics; from brainlab.store import query; "
                  "from brainlab.viz import explore, frames, holdings, widgets; "
                  "explore.use_theme()")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="", help="only the cases whose name contains this")
    parser.add_argument("--demo", type=Path, default=REPO / "data" / "demo" / "brainlab.duckdb")
    args = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="bench-bytecode-") as name:
        tmp = Path(name)
        cwd = tmp / "cwd"
        cwd.mkdir()
        env = {**isolated_env(tmp), "PYTHONDONTWRITEBYTECODE": "1"}  # as on this machine
        trees = {"source": checkout("HEAD", tmp / "source"),
                 "compiled": checkout("HEAD", tmp / "compiled")}
        if not compileall.compile_dir(trees["compiled"] / "brainlab", quiet=1):
            sys.exit("Error: compileall failed on the package")
        demo = demo_store(args.demo, python, tmp, cwd, env)
        todo = [(case, ["-m", "brainlab.cli", *case.args]) for case in cases(tmp, demo)]
        todo.append((Case("a notebook kernel's imports", []), ["-c", KERNEL_IMPORTS]))
        todo = [(case, argv) for case, argv in todo if args.only in case.name]
        for case, argv in todo:  # warm-up: the template built, the stores the cases read
            run(python, trees["compiled"], case, cwd, env, argv)
        for _ in range(args.repeat):
            for case, argv in todo:
                for side, tree in trees.items():
                    cpu, output = run(python, tree, case, cwd, env, argv)
                    case.runs.setdefault(side, []).append(cpu)
                    for path in (*trees.values(), tmp):
                        output = output.replace(str(path).encode(), b"TREE")
                    case.outputs.setdefault(side, set()).add(output)
        print(f"CPU-s per process, median (min-max) of {args.repeat} interleaved runs,"
              f" PYTHONDONTWRITEBYTECODE=1; load average {os.getloadavg()[0]:.1f}")
        figures = {}
        for case, _ in todo:
            source, compiled = (statistics.median(case.runs[s]) for s in trees)
            same = case.outputs["source"] == case.outputs["compiled"]
            print(f"  {case.name:<42} source {span(case.runs['source'])}  compiled"
                  f" {span(case.runs['compiled'])}  {compiled - source:+.3f}"
                  f" ({compiled / source - 1:+.0%})  output {'same' if same else 'DIFFERS'}")
            figures[case.name] = {"source": source, "compiled": compiled, "same_output": same}
        emit("bytecode", repeat=args.repeat, cases=figures)


if __name__ == "__main__":
    main()
