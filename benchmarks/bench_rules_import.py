"""What importing the secret rules costs a process (every hook, every ingest imports them).

Usage: python benchmarks/bench_rules_import.py [--before COMMIT] [--repeat 9]

Each run is a fresh ``python`` that imports ``brainlab.sources.redact`` (which builds the
rules and their hint scanners) and prints the CPU-seconds the import took; then it redacts
the same few texts (hints found, so the lazily worked-out tables are used). The baseline is
``--before`` (default 8d6fab7: the scanners' tables built for every hint at import), from
``git archive`` into a temporary folder; runs are interleaved (one of each per round) so the
machine's load hits both alike. Prints the median and range of each, and their difference.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchkit import checkout, emit, span

ROOT = Path(__file__).resolve().parents[1]
PROBE = """
import json, time
start = time.process_time()
import brainlab.sources.redact as r
imported = time.process_time() - start
texts = ["export AWS_SECRET_ACCESS_KEY=abc", "Authorization: Bearer x", "password = 'hunter2'",
         "git push origin main", "ghp_" + "a" * 36]
out = [r.redact(t) for t in texts]
print(json.dumps({"import": imported, "total": time.process_time() - start, "out": out}))
"""



def probe(tree: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          check=True, cwd=tree, env={"PYTHONPATH": str(tree), "PATH": "/usr/bin"})
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="8d6fab7")
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"now": ROOT, f"before ({args.before})": checkout(args.before, Path(tmp))}
        runs: dict[str, list[dict]] = {name: [] for name in trees}
        for _ in range(args.repeat):
            for name, tree in trees.items():
                runs[name].append(probe(tree))
    outs = {json.dumps(r[0]["out"]) for r in runs.values()}
    print(f"import brainlab.sources.redact, then redact 5 texts; {args.repeat} fresh processes"
          " each, interleaved; CPU-s (median (min-max))")
    for name, found in runs.items():
        print(f"  {name:22} import {span([r['import'] for r in found])}"
              f"   import+redact {span([r['total'] for r in found])}")
    now, before = (statistics.median(r["import"] for r in found) for found in runs.values())
    print(f"  import: {before - now:.3f} CPU-s less a process now;"
          f" same redactions: {'yes' if len(outs) == 1 else 'NO'}")
    emit("rules_import", import_now=now, import_before=before, same_output=len(outs) == 1)


if __name__ == "__main__":
    main()
