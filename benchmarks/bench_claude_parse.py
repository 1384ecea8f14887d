"""Benchmark: CPU seconds per GB the transcript parse workers spend, before/after, interleaved.

Usage:
    PYTHONPATH=. python benchmarks/bench_claude_parse.py [TREE ...] [--before REV]
        [--repeat 3] [--files N] [--same-rows]

Each measurement is a child process that parses a transcript tree as the ingest's workers do
(``claude_read.parse_group`` on groups of up to 16 MB or 64 files, rows converted to Arrow,
the cyclic collector tuned and pandas kept out as in ``claude_pool``), and prints the CPU
seconds of the parse alone (imports and start-up excluded). With ``--before REV``, the same
child runs with the ``brainlab`` package of git revision REV (checked out apart), alternating
with this checkout in every round, so a busy machine slows both alike. ``--same-rows`` also
checks that both give the same rows, errors and offsets for every file (a digest of each).
Default tree: the real corpus (``../shared/corpora/claude-code``); the ingest benchmark
(``bench_claude_ingest.py --keep --dir D``) leaves its 1 GB trees in ``D/corpus`` and
``D/synthetic``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchkit import checkout, emit, span

REPO = Path(__file__).resolve().parent.parent

CHILD = """
import gc, hashlib, pickle, sys, time
from pathlib import Path
from brainlab.transcripts import scan as cr, rows as claude_rows
from brainlab.transcripts.pool import _arrow_without_pandas
tree, limit, digest = Path(sys.argv[1]), int(sys.argv[2]) or None, sys.argv[3] == "1"
claude_rows.schema_types()
files = sorted(tree.rglob("*.jsonl"))[:limit]
jobs = [cr.FileJob(str(p), 0, 0, p.stat().st_size, False, True, 0, 0, 0) for p in files]
if digest:  # rows, errors and offsets of each file, in column-list form
    h = hashlib.sha256()
    for job in jobs:
        group = cr.parse_group([job], arrow=False)
        read = group.reads[0]
        rows = sorted((k, v.names, v.values) for k, v in group.rows.items())
        h.update(pickle.dumps((job.path, read.errors, read.bytes_done, read.lines_done,
                               read.pending, read.layout, read.counts, rows)))
    print(h.hexdigest())
    sys.exit(0)
groups, group, size = [], [], 0
for job in jobs:  # as claude_pool.groups: up to 16 MB or 64 files per task
    group.append(job)
    size += job.size
    if size >= 16 << 20 or len(group) >= 64:
        groups.append(group)
        group, size = [], 0
if group:
    groups.append(group)
_arrow_without_pandas()
gc.freeze()
gc.set_threshold(200_000, 20, 20)
start = time.process_time()
for group in groups:
    cr.parse_group(group, arrow=True)
print(time.process_time() - start, sum(job.size for job in jobs))
"""



def child(code: Path, tree: Path, files: int, digest: bool) -> str:
    """Run the CHILD with the brainlab package under ``code``; its output line."""
    env = dict(os.environ, PYTHONPATH=str(code))
    done = subprocess.run([sys.executable, "-c", CHILD, str(tree), str(files),
                           "1" if digest else "0"], env=env, capture_output=True, text=True,
                          cwd=code)
    if done.returncode != 0:
        raise SystemExit(f"child failed for {code}:\n{done.stderr[-2000:]}")
    return done.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trees", nargs="*", type=Path)
    parser.add_argument("--before", default="", help="git revision to compare with")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--files", type=int, default=0, help="first N files only (0: all)")
    parser.add_argument("--same-rows", action="store_true",
                        help="also check that both revisions give the same rows")
    args = parser.parse_args()
    trees = args.trees or [REPO.parent / "shared" / "corpora" / "claude-code"]
    with tempfile.TemporaryDirectory() as tmp:
        sides = {"this checkout": REPO}
        if args.before:
            sides[f"before ({args.before})"] = checkout(args.before, Path(tmp))
        for tree in trees:
            cpu: dict[str, list[float]] = {name: [] for name in sides}
            size = 0
            for _ in range(args.repeat):
                for name, code in sides.items():
                    seconds, size = child(code, tree, args.files, False).split()
                    size = int(size)
                    cpu[name].append(float(seconds) / (size / 1e9))
            print(f"{tree} ({size / 1e9:.2f} GB), {args.repeat} interleaved rounds,"
                  " parse CPU-s per GB, median (min-max):")
            for name, values in cpu.items():
                print(f"  {name:24} {span(values)}")
            if args.before:
                now, before = (statistics.median(v) for v in cpu.values())
                print(f"  change of the median: {100 * (now - before) / before:+.0f}%")
            if args.same_rows and args.before:
                digests = {child(code, tree, args.files, True) for code in sides.values()}
                print(f"  same rows, errors and offsets: {len(digests) == 1}")
            emit("claude_parse", tree=str(tree), gb=size / 1e9,
                 cpu_s_per_gb={name: statistics.median(v) for name, v in cpu.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
