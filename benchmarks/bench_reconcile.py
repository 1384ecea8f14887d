"""`usage reconcile` on the corpus against `usage daily` in the same run (issue 45: under 1 s).

Usage: PYTHONPATH=. python benchmarks/bench_reconcile.py [--repeat 7]
       [--tree /work/shared/corpora/claude-code]

Ingests the corpus into a new store, then a telemetry export with one ``api_request`` event
per transcript call (the calls' request ids, tokens and cost, written by
``brainlab.otel.export`` as the collector's file exporter writes them, every tenth call with
10% more output tokens: a store where every session is seen by two sources and some are
flagged). Then times, as a user runs them (a fresh ``python -m brainlab.cli`` per run, from
``/``), interleaved one of each per round: ``usage daily --json`` (the baseline) and ``usage
reconcile --json``. Prints median and range of each (wall and CPU seconds: on a loaded
machine the CPU figure is the one to compare), the rows and flagged rows, and the load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchkit import emit, load_average, median_span

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path("/work/shared/corpora/claude-code")


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    return subprocess.run([sys.executable, "-m", "brainlab.cli", *args], cwd="/", env=env,
                          check=True, capture_output=True, text=True)


def _telemetry(db: Path, out: Path) -> Path:
    """One api_request event per transcript call, every tenth with 10% more output tokens."""
    from brainlab.otel.export import Call, logs_requests, write_json_lines
    from brainlab.store.connection import rows

    _names, found = rows(db, "SELECT session_id, request_id, model, ts, input_tokens,"
                             " output_tokens, cache_read_tokens, cache_creation_tokens,"
                             " coalesce(cost_usd, 0) FROM cc_requests WHERE ts IS NOT NULL"
                             " AND request_id IS NOT NULL ORDER BY ts")
    calls = [Call(s, r, m or "", ts, i, o + (o // 10 if n % 10 == 0 else 0), cr, cw, cost)
             for n, (s, r, m, ts, i, o, cr, cw, cost) in enumerate(found)]
    return write_json_lines(out, logs_requests(calls))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--tree", type=Path, default=CORPUS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-reconcile-") as tmp:
        db = Path(tmp) / "b.duckdb"
        _cli("ingest", "claude", str(args.tree / "projects"), "--db", str(db))
        _cli("ingest", "otel", str(_telemetry(db, Path(tmp) / "otel.jsonl")), "--db", str(db))
        commands = {"usage daily --json (baseline)": ["usage", "daily", "--json"],
                    "usage reconcile --json": ["usage", "reconcile", "--json"]}
        times: dict[str, list[float]] = {label: [] for label in commands}
        cpu: dict[str, list[float]] = {label: [] for label in commands}
        load = load_average()
        for _ in range(args.repeat):
            for label, command in commands.items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.perf_counter()
                done = _cli(*command, "--db", str(db))
                times[label].append(time.perf_counter() - start)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[label].append(after.ru_utime - before.ru_utime
                                  + after.ru_stime - before.ru_stime)
        records = json.loads(done.stdout)
        for label, values in times.items():
            print(f"{label:<32} wall {median_span(values)}, CPU {median_span(cpu[label])}")
        print(f"reconcile rows {len(records)}, flagged {sum(r['flagged'] for r in records)};"
              f" load average {load} -> {load_average()}")
        emit("reconcile", **{label: statistics.median(v) for label, v in times.items()})


if __name__ == "__main__":
    main()
