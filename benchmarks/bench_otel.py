"""Benchmark: `ingest otel` of an OTLP/JSON logs file against DuckDB's own read_json of it.

Usage:
    PYTHONPATH=. python benchmarks/bench_otel.py [--mb 20] [--repeat 3] [--dir /tmp/otel-bench]

The file is written as the collector's file exporter writes Claude Code's events (one
ExportLogsServiceRequest per line, 50 api_request records each, ~1 KB per record), with one
broken line per 100 so the error-row path is exercised. Per round, interleaved, wall time
of: the baseline, DuckDB ``read_json`` of the file with its records unnested and counted
(``ignore_errors``: it skips the broken lines and cannot say where they were); and
``ingest_otel`` into a new store (opened before the clock: the store's creation is not
the ingest), which keeps every record, every attribute and one error row per broken line.
Goal (issue 26): at most 1.5x the baseline's time. The load average is printed beside.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import orjson
from benchkit import emit  # noqa: E402

from brainlab.otel import export
from brainlab.otel.ingest import ingest_otel
from brainlab.store import open_writer


def write_file(path: Path, megabytes: float) -> tuple[int, int]:
    """Write about ``megabytes`` of OTLP/JSON logs; return (records, broken lines)."""
    start = datetime(2026, 11, 2, 9)
    records = broken = line = 0
    with open(path, "wb") as handle:
        while handle.tell() < megabytes * 1e6:
            calls = [export.Call(f"session-{(records + i) // 200:05d}", f"req_{records + i:08d}",
                                 "claude-sonnet-4-5-20250929",
                                 start + timedelta(seconds=7 * (records + i)), 3 + i, 400 + i,
                                 50_000 + i, 1_200 + i, 0.02, agent_name="reviewer")
                     for i in range(50)]
            line += 1
            if line % 100 == 0:
                handle.write(b'{"resourceLogs": [ broken\n')
                broken += 1
                line += 1
            handle.write(orjson.dumps(export.logs_requests(calls, batch=50)[0]) + b"\n")
            records += len(calls)
    return records, broken


def duckdb_read_json(path: Path) -> int:
    """The baseline: DuckDB parses the file and unnests every log record."""
    con = duckdb.connect()
    try:
        return con.execute(
            "SELECT count(*) FROM (SELECT unnest(s.logRecords) AS r FROM"
            " (SELECT unnest(sl.scopeLogs) AS s FROM (SELECT unnest(resourceLogs) AS sl"
            " FROM read_json(?, format = 'newline_delimited', ignore_errors = true,"
            " maximum_object_size = 100000000))))", [str(path)]).fetchone()[0]
    finally:
        con.close()


def ingest(path: Path, folder: Path) -> tuple[int, int]:
    db = folder / "bench.duckdb"
    for stale in (db, Path(str(db) + ".wal")):
        stale.unlink(missing_ok=True)
    con = open_writer(db)
    try:
        started = time.perf_counter()
        summary = ingest_otel(con, [path])
        elapsed = time.perf_counter() - started
        assert summary.rows["otel_events"] > 0
        return summary.rows["otel_events"], summary.errors, elapsed
    finally:
        con.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", default="/tmp/otel-bench")
    args = parser.parse_args()
    folder = Path(args.dir)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    path = folder / "logs.json"
    records, broken = write_file(path, args.mb)
    size_gb = path.stat().st_size / 1e9
    print(f"file: {path.stat().st_size / 1e6:.1f} MB, {records:,} records, {broken} broken"
          f" lines; load average {os.getloadavg()[0]:.2f}")
    base, ours = [], []
    for _ in range(args.repeat):
        started = time.perf_counter()
        counted = duckdb_read_json(path)
        base.append(time.perf_counter() - started)
        kept, errors, elapsed = ingest(path, folder)
        ours.append(elapsed)
        assert counted == kept == records and errors == broken, (counted, kept, errors)
    b, o = statistics.median(base), statistics.median(ours)
    print(f"duckdb read_json : {b:6.2f} s  ({size_gb / b * 3600:7.1f} GB/h)  [baseline]")
    print(f"ingest otel      : {o:6.2f} s  ({size_gb / o * 3600:7.1f} GB/h)  {o / b:.2f}x"
          f" (goal <= 1.5x), {errors} error rows")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    emit("otel", read_json_s=b, ingest_s=o, ratio=o / b, error_rows=errors)


if __name__ == "__main__":
    main()
