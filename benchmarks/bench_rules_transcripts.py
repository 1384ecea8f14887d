"""Time the transcript compliance rules (store/models/rules/rule_rows_boot_close.sql) on the demo store.

Run: PYTHONPATH=. python benchmarks/bench_rules_transcripts.py [--weeks 12] [--repeat 3]

Synthesizes a brain (seed 7) and ingests it with its transcripts into a temporary DuckDB file,
then for each of ``--repeat`` runs times, on a read-only connection: the union of the rules
that read only brain files (the baseline: ``violations`` as it was before the transcript
rules), the whole ``violations`` view, the transcript rules' shared relation
(``rule_rows_boot_close``) and each transcript rule's view alone. Prints each run
and the range.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from benchkit import emit

from brainlab.demo import build_store
from brainlab.rules.catalogue import RULES
from brainlab.store.connection import reader


def timed(con, sql: str) -> tuple[float, int]:
    start = time.perf_counter()
    rows = con.execute(sql).fetchall()
    return time.perf_counter() - start, len(rows)


def main() -> None:
    """Build the demo store, time the baseline union, the full view and each transcript rule."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--weeks", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    brain_only = [r for r in RULES if not r.needs_transcripts]
    transcript = [r for r in RULES if r.needs_transcripts]
    queries = {
        f"baseline: {len(brain_only)} brain-file rules": " UNION ALL ".join(
            f"SELECT '{r.id}' AS rule, * FROM {r.view}" for r in brain_only),
        f"violations: all {len(RULES)} rules": "SELECT * FROM violations",
        "rule_rows_boot_close (10 rules)": "SELECT * FROM rule_rows_boot_close",
    }
    queries.update({f"  {r.id} alone": f"SELECT * FROM {r.view}" for r in transcript})
    with tempfile.TemporaryDirectory() as tmp:
        root, db = Path(tmp) / "brain", Path(tmp) / "demo.duckdb"
        build_store(root, db, weeks=args.weeks, seed=7, workers=1)
        times: dict[str, list[float]] = {name: [] for name in queries}
        with reader(db) as con:
            for run in range(args.repeat):
                for name, sql in queries.items():
                    seconds, rows = timed(con, sql)
                    times[name].append(seconds)
                    if run == 0:
                        print(f"{name:<34} {rows:>4} rows")
        for name, values in times.items():
            print(f"{name:<34} {min(values):.3f} .. {max(values):.3f} s")
        emit("rules_transcripts", weeks=args.weeks,
             min_s={name.strip(): min(values) for name, values in times.items()})


if __name__ == "__main__":
    main()
