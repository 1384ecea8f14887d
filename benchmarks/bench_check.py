"""Time ``brainlab check`` on a synthetic brain: the in-memory store without and with comments.

Run: PYTHONPATH=. python benchmarks/bench_check.py [--weeks 12] [--repeat 3]

Synthesizes a brain (seed 7), then for each of ``--repeat`` runs times: the store set-up alone
(``open_writer(':memory:')``) with ``describe=False`` (what ``brainlab check`` does) and with the
``COMMENT ON`` statements (the baseline, what a writer on a file does), and the whole check
(set-up, ingest of every brain source, the ``violations`` query). Prints each run and the range.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from benchkit import emit, timed

from brainlab.rules.check import check
from brainlab.store import open_writer
from brainlab.synth import SynthOptions, synthesize


def main() -> None:
    """Synthesize, time set-up with and without comments, and the whole check; print ranges."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--weeks", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "brain"
        synthesize(root, SynthOptions(weeks=args.weeks, seed=7))
        rows = {"setup, describe=False": [], "setup, with comments (baseline)": [],
                "whole check": []}
        found: list = []
        for run in range(args.repeat):
            rows["setup, describe=False"].append(
                timed(lambda: open_writer(":memory:", describe=False).close()))
            rows["setup, with comments (baseline)"].append(
                timed(lambda: open_writer(":memory:").close()))
            rows["whole check"].append(timed(lambda: found.append(check(root))))
            print(f"run {run + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in rows.items())
                  + f"; {len(found[-1].violations)} violations")
        for name, values in rows.items():
            print(f"{name:<34} {min(values):.2f} .. {max(values):.2f} s")
        emit("check", weeks=args.weeks, min_s={k: min(v) for k, v in rows.items()},
             max_s={k: max(v) for k, v in rows.items()})


if __name__ == "__main__":
    main()
