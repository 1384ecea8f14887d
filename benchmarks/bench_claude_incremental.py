"""Benchmark: `brainlab ingest claude` after appending 1% to an ingested tree (issue 12).

Usage:
    PYTHONPATH=. python benchmarks/bench_claude_incremental.py --dir /tmp/readfast/bench
        [--trees synthetic,corpus] [--repeat 5] [--before REV]

Reuses the trees a ``bench_claude_ingest.py --keep --dir DIR`` run left in DIR (or builds
them the same way: 1 GB synthetic, the corpus copied 30 times) and never writes into them
except the 1% it appends and removes again each round. For each code version (this
checkout; with ``--before REV`` also git revision REV's ``brainlab`` package, checked out
apart) a base store is made once by a cold ingest; then each round, interleaved across
versions so machine load hits them alike: copy that version's base store, append 1%
(``append_one_percent``: tails of 10 sessions and new sessions), run ``ingest claude`` as
``python -m brainlab.cli`` (as bench_claude_ingest's incremental step) and, for this
checkout, as the venv's ``brainlab`` console script, then undo the append. Prints median
and range of wall, CPU seconds (with worker processes) and peak RSS, and the incremental
run as a share of a cold ingest's wall time measured here (``--cold`` rounds), and the
load average at the start and end of each tree's rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from pathlib import Path

from bench_claude_ingest import (
    REPO,
    append_and_undo,
    checkout,
    copy_corpus,
    generate,
    measure,
)
from benchkit import emit, median_span


def tree_for(name: str, work: Path, corpus: Path) -> tuple[Path, int]:
    """The kept tree ``name`` under ``work`` (built as bench_claude_ingest builds it)."""
    tree, built = work / name, work / f"{name}.built.json"
    if tree.is_dir() and built.is_file():
        return tree, json.loads(built.read_text())[1]
    shutil.rmtree(tree, ignore_errors=True)
    files, total = copy_corpus(corpus, tree, 30) if name == "corpus" else generate(tree, 10**9)
    built.write_text(json.dumps([files, total]))
    return tree, total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", type=Path, required=True, help="where the kept trees are")
    parser.add_argument("--trees", default="synthetic,corpus")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cold", type=int, default=1, help="cold ingests measured per tree")
    parser.add_argument("--before", default="", help="also this git revision's code")
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpora"
                        / "claude-code")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        args.corpus = Path("/work/shared/corpora/claude-code")
    work = args.dir / "incremental"
    work.mkdir(parents=True, exist_ok=True)
    script = Path(sys.executable).with_name("brainlab")
    versions = {"this checkout": REPO}
    if args.before:
        shutil.rmtree(work / "before-code", ignore_errors=True)
        versions[f"before ({args.before})"] = checkout(args.before, work / "before-code")
    for name in filter(None, args.trees.split(",")):
        tree, total = tree_for(name, args.dir, args.corpus)
        steps: dict[str, list[dict]] = {}
        load = os.getloadavg()[0]  # a busy machine slows every step: said with the figures
        bases = {}
        for n, (label, code) in enumerate(versions.items()):  # a cold ingest: the base store
            base = work / f"{name}-{n}.duckdb"
            base.unlink(missing_ok=True)
            for _ in range(args.cold):
                base.unlink(missing_ok=True)
                steps.setdefault(f"{label}: cold ingest", []).append(measure(
                    [sys.executable, "-m", "brainlab.cli", "ingest", "claude", str(tree),
                     "--db", str(base)], {"PYTHONPATH": str(code)}, cwd=code))
            bases[label] = base
        db = work / "round.duckdb"
        for _ in range(args.repeat):
            for label, code in versions.items():
                runs = [("python -m brainlab.cli", [sys.executable, "-m", "brainlab.cli"])]
                if code == REPO and script.exists():
                    runs.append(("console script", [str(script)]))
                for how, cmd in runs:
                    shutil.copy(bases[label], db)
                    undo = append_and_undo(tree, total)
                    try:
                        steps.setdefault(f"{label}: +1%, {how}", []).append(measure(
                            [*cmd, "ingest", "claude", str(tree), "--db", str(db)],
                            {"PYTHONPATH": str(code)}, cwd=code))
                    finally:
                        undo()
        print(f"\n{name}: {total / 1e9:.2f} GB; {args.repeat} interleaved rounds, median (min-max);"
              f" load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
        for step, runs in steps.items():
            print(f"  {step:48} wall {median_span([r['wall'] for r in runs])}  CPU"
                  f" {median_span([r['cpu'] for r in runs])}"
                  f"  RSS {median_span([r['rss'] for r in runs], 'MB')}")
        for label in versions:
            cold = statistics.median(r["wall"] for r in steps[f"{label}: cold ingest"])
            incr = statistics.median(r["wall"] for r in steps[f"{label}: +1%, python -m brainlab.cli"])
            print(f"  {label}: incremental / cold = {100 * incr / cold:.1f} %")
        emit("claude_incremental", tree=name, gb=total / 1e9, load_at_start=load,
             wall_median_s={step: statistics.median(r["wall"] for r in runs)
                            for step, runs in steps.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
