"""Brain ingest speed: cold and re-ingest of a synthetic brain, against a naive baseline.

The baseline is the straightforward design (one transaction and one INSERT per file), run in
the same script on the same tree, so the ratio says what batching per source buys.
Run: .venv/bin/python benchmarks/bench_ingest_brain.py [--weeks 52]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from benchkit import emit

from brainlab.sources import brain_sources
from brainlab.store import ingest, open_writer
from brainlab.synth import SynthOptions, synthesize


def timed_ingest(root: Path, db: Path, per_file: bool) -> float:
    con = open_writer(db)
    try:
        start = time.perf_counter()
        if per_file:
            for source in brain_sources():
                for path in source.discover(root.resolve()):
                    data = path.read_bytes()
                    parsed = ingest._parse_safely(source, path, data, root)
                    ingest.write_files(con, source, [(str(path.resolve()),
                                                      ingest.file_digest(data), parsed)])
        else:
            ingest.ingest_brain(con, root)
        return time.perf_counter() - start
    finally:
        con.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--weeks", type=int, default=52)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "brain"
        manifest = synthesize(root, SynthOptions(weeks=args.weeks, seed=1))
        files = sum(1 for p in root.rglob("*") if p.is_file())
        size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 1e6
        print(f"tree: {args.weeks} weeks, {len(manifest.sessions)} sessions, {files} files, "
              f"{size:.1f} MB")
        cold = timed_ingest(root, Path(tmp) / "a.duckdb", per_file=False)
        again = timed_ingest(root, Path(tmp) / "a.duckdb", per_file=False)
        naive = timed_ingest(root, Path(tmp) / "b.duckdb", per_file=True)
        print(f"cold ingest (batched per source): {cold:6.2f} s  {files / cold:7.0f} files/s")
        print(f"re-ingest, nothing changed:       {again:6.2f} s")
        print(f"baseline, one transaction a file: {naive:6.2f} s  {files / naive:7.0f} files/s")
        print(f"batched vs baseline: {naive / cold:.1f}x faster")
        emit("ingest_brain", weeks=args.weeks, files=files, cold_s=cold, again_s=again,
             baseline_s=naive, speedup=naive / cold)


if __name__ == "__main__":
    main()
