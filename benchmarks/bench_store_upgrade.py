"""Upgrade a transcript store to a new schema; compare with ingesting its files into a new store.

Run: PYTHONPATH=. python benchmarks/bench_store_upgrade.py [--corpus DIR] [--repeat 3]

Builds one store of ``--corpus`` (default: shared/corpora/claude-code), then per round: a
copy made to look written by an older brainlab (another schema fingerprint, one column
fewer in cc_request_lines), timed through ``open_writer`` (the upgrade: recorded tables
carried over, derived tables dropped) and then through the ingest that re-reads every file
and recomputes the derived tables. Baselines in the same round: a copy whose views alone
changed (what any catalogue change costs ``open_writer`` without an upgrade: views, the
violations union, comments) and a fresh ingest of the same files into a new store.
Prints the load average beside the figures.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import duckdb
from benchkit import emit  # noqa: E402

from brainlab.store import open_writer, upgrade
from brainlab.transcripts.ingest import ingest_claude

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "claude-code"


def make_old(source: Path, target: Path, schema: bool = True) -> None:
    """A copy of ``source`` from an older brainlab: other tables, or (schema=False) views only."""
    shutil.copy(source, target)
    con = duckdb.connect(str(target))
    con.execute("DELETE FROM brainlab_meta WHERE key IN ('catalog', 'catalog_files')")
    if schema:
        con.execute("UPDATE brainlab_meta SET value = '0ld0ld0ld0ld0ld0' WHERE key = 'schema'")
        con.execute("ALTER TABLE cc_request_lines DROP COLUMN speed")
    con.close()


def reopen(db: Path) -> float:
    start = time.perf_counter()
    open_writer(db).close()
    return time.perf_counter() - start


def ingest(db: Path, corpus: Path) -> float:
    start = time.perf_counter()
    con = open_writer(db)
    try:
        ingest_claude(con, corpus, workers=1)
    finally:
        con.close()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path("/work/shared/corpora/claude-code")
                        if not DEFAULT_CORPUS.is_dir() else DEFAULT_CORPUS)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base.duckdb"
        ingest(base, args.corpus)
        rows = duckdb.connect(str(base), read_only=True).execute(
            "SELECT count(*) FROM cc_request_lines").fetchone()[0]
        print(f"corpus {args.corpus}: {base.stat().st_size / 1e6:.1f} MB store,"
              f" {rows:,} request lines; load average {os.getloadavg()[0]:.2f}")
        for round_ in range(args.repeat):
            old, fresh = Path(tmp) / f"old{round_}.duckdb", Path(tmp) / f"fresh{round_}.duckdb"
            make_old(base, old)
            upgraded = reopen(old)
            line = upgrade.DONE.pop().line()
            views = Path(tmp) / f"views{round_}.duckdb"
            make_old(base, views, schema=False)
            catalog = reopen(views)
            reread = ingest(old, args.corpus)
            baseline = ingest(fresh, args.corpus)
            print(f"round {round_ + 1}: upgrade {upgraded:.2f} s (a views-only catalogue"
                  f" change: {catalog:.2f} s) + re-read ingest {reread:.2f} s; fresh ingest"
                  f" (baseline) {baseline:.2f} s; load average {os.getloadavg()[0]:.2f}")
        print(line)
        emit("store_upgrade", upgrade_s=upgraded, views_only_s=catalog, reread_s=reread,
             fresh_s=baseline)


if __name__ == "__main__":
    main()
