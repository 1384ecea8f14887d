"""Benchmark: the Spark ingest (local[2]) against the local DuckDB ingest, on generated transcripts.

Usage:
    PYTHONPATH=. python benchmarks/bench_spark.py [--size-gb 1.0] [--dir /tmp/spark-bench]
        [--master local[2]]

Generates a team tree (three users on two machines, ``<user>/<machine>/projects/...``) with
bench_claude_ingest's generator, then on the same tree prints: the local ingest (wall, CPU-s,
per GB), the Spark ingest (session start-up apart; wall and CPU-s of the whole process tree,
per GB), the lake's size against the input, ``usage daily`` over the attached lake against
the local store, and an incremental Spark run after appending ~1%. The machine may be shared:
figures are single runs, and CPU-s is the steadier measure.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench_claude_ingest import append_one_percent, generate
from benchkit import emit

HOMES = (("alice", "laptop"), ("bob", "laptop"), ("carol", "desktop"))

LOCAL_CHILD = """
import json, resource, sys, time
from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude
con = open_writer(sys.argv[1])
t0 = time.perf_counter()
ingest_claude(con, sys.argv[2])
t1 = time.perf_counter()
con.close()
print(json.dumps({"ingest_s": t1 - t0, "cpu_s": time.process_time(),
                  "worker_cpu_s": sum(resource.getrusage(resource.RUSAGE_CHILDREN)[:2])}))
"""

SPARK_CHILD = """
import json, sys, time
t0 = time.perf_counter()
from brainlab.lake.spark_ingest import ingest_claude_spark, spark_session
spark = spark_session(sys.argv[3])
t1 = time.perf_counter()
import psutil
def tree_cpu():  # this process, the JVM and its Python workers (alive ones)
    procs = [psutil.Process()] + psutil.Process().children(recursive=True)
    total = 0.0
    for p in procs:
        try:
            c = p.cpu_times()
            total += c.user + c.system + c.children_user + c.children_system
        except psutil.NoSuchProcess:
            pass
    return total
c1 = tree_cpu()
s = ingest_claude_spark(spark, sys.argv[1], sys.argv[2])
t2 = time.perf_counter()
c2 = tree_cpu()
spark.stop()
print(json.dumps({"startup_s": t1 - t0, "ingest_s": t2 - t1, "cpu_s": c2 - c1, "read": s.read,
                  "unchanged": s.unchanged, "rows": s.rows.get("cc_request_lines", 0)}))
"""

DAILY_CHILD = """
import json, sys, time
from brainlab.store import query
t = time.perf_counter()
frame = query(sys.argv[1], "SELECT * FROM usage_daily ORDER BY day")
print(json.dumps({"daily_s": time.perf_counter() - t, "days": len(frame),
                  "tokens": int(frame.total_tokens.sum())}))
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(code: str, *args: str) -> tuple[dict, float, float]:
    """Run a child python; return (its JSON line, wall s, CPU s of its process tree)."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    cpu, wall = _children_cpu(), time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                         text=True, check=True)
    return (json.loads(out.stdout.strip().splitlines()[-1]), time.perf_counter() - wall,
            _children_cpu() - cpu)


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-gb", type=float, default=1.0)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/spark-bench"))
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    base = args.dir
    shutil.rmtree(base, ignore_errors=True)
    root = base / "team"
    t0 = time.perf_counter()
    total = files = 0
    for i, (user, machine) in enumerate(HOMES):
        n, size = generate(root / user / machine, int(args.size_gb * 1e9 / len(HOMES)), seed=i + 1)
        files, total = files + n, total + size
    gb = total / 1e9
    print(f"generated {files} files, {gb:.2f} GB in {time.perf_counter() - t0:.0f} s"
          f" ({len(HOMES)} users on 2 machines)")

    local, local_wall, _ = run(LOCAL_CHILD, str(base / "local.duckdb"), str(root))
    local_cpu = local["cpu_s"] + local["worker_cpu_s"]  # the ingesting process + its workers
    print(f"local ingest   : {local['ingest_s']:.1f} s wall, {local_cpu:.1f} CPU-s"
          f" -> {local['ingest_s'] / gb:.1f} s/GB, {local_cpu / gb:.1f} CPU-s/GB"
          f" (process {local_wall:.1f} s)")

    lake = base / "lake"
    spark, _, _ = run(SPARK_CHILD, str(root), str(lake), args.master)
    spark_cpu = spark["cpu_s"]
    print(f"spark {args.master}: {spark['ingest_s']:.1f} s wall (+{spark['startup_s']:.1f} s"
          f" session start-up), {spark_cpu:.1f} CPU-s (driver, JVM, Python workers)"
          f" -> {spark['ingest_s'] / gb:.1f} s/GB, {spark_cpu / gb:.1f} CPU-s/GB;"
          f" {spark['ingest_s'] / local['ingest_s']:.2f}x the local wall")
    lake_bytes = du(lake)
    store_mb = (base / "local.duckdb").stat().st_size / 1e6
    print(f"lake size      : {lake_bytes / 1e6:.1f} MB = {100 * lake_bytes / total:.2f}% of the"
          f" input; local DuckDB file {store_mb:.1f} MB")

    attached = base / "attached.duckdb"
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "brainlab.cli", "attach", "--lake", str(lake), "--db",
                    str(attached)], check=True, capture_output=True,
                   env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent)))
    attach_s = time.perf_counter() - t
    over_lake, _, _ = run(DAILY_CHILD, str(attached))
    over_store, _, _ = run(DAILY_CHILD, str(base / "local.duckdb"))
    same = over_lake["tokens"] == over_store["tokens"] and over_lake["days"] == over_store["days"]
    print(f"usage daily    : {over_lake['daily_s']:.2f} s over the attached lake (attach"
          f" {attach_s:.1f} s) vs {over_store['daily_s']:.2f} s on the local store;"
          f" same figures: {same}")

    added = 0
    for user, machine in HOMES:
        added += append_one_percent(root / user / machine, int(total / len(HOMES)))
    inc, _, _ = run(SPARK_CHILD, str(root), str(lake), args.master)
    inc_cpu = inc["cpu_s"]
    print(f"spark increment: +{added / 1e6:.1f} MB -> {inc['ingest_s']:.1f} s wall"
          f" ({inc['read']} files read, {inc['unchanged']} unchanged), {inc_cpu:.1f} CPU-s;"
          f" {100 * inc['ingest_s'] / spark['ingest_s']:.0f}% of the cold run")
    emit("spark", gb=gb, local_s=local["ingest_s"], spark_s=spark["ingest_s"],
         spark_cpu_s=spark_cpu, lake_mb=lake_bytes / 1e6, daily_lake_s=over_lake["daily_s"],
         daily_store_s=over_store["daily_s"], same_figures=same, increment_s=inc["ingest_s"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
