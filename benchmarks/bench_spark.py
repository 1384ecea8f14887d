"""Benchmark: the Spark ingest against the local DuckDB ingest, fixed cost apart from per-GB rate.

Usage:
    PYTHONPATH=. python benchmarks/bench_spark.py [--sizes 1,5] [--repeat 2]
        [--dir /tmp/spark-bench] [--master local[2]] [--skip-large-repeat] [--keep-tree]

For each size, generates a team tree (three users on two machines,
``<user>/<machine>/projects/...``) with bench_claude_ingest's generator; then each round runs,
interleaved on the same tree (a busy machine slows all alike): the local cold ingest (a new
store), the Spark cold ingest (a new lake), a Spark run with nothing new, and a Spark run
after appending ~1% (undone after the round). Every run is its own process; CPU-s is the
whole process tree (driver Python, the JVM, Spark's Python workers, read by psutil before
the session stops; the local ingest by ``wait4``), the honest figure on a shared machine.

Prints per run: wall and CPU-s, the JVM / Python-worker split, the JVM's CPU by thread kind
(JIT compilers, GC, task threads, the rest: driver, planning, I/O; read from
``/proc/<pid>/task``), the phases of the ingest (plan+parse, write, roll-ups, wall) and,
from Spark's event log (``spark.eventLog``), where
executor time went: run time, CPU time, JVM GC, bytes between JVM and Python workers,
shuffle bytes. Then the FIXED cost per run (the nothing-new run: session start-up, listing,
manifest join, no parse) and the PER-GB rate of the parse ((cold - nothing new) / GB, and the
slope between sizes when two sizes ran). ``--skip-large-repeat`` runs the largest size once;
``--keep-tree`` keeps the generated trees under ``--dir`` and reuses them in the next run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

from bench_claude_ingest import append_and_undo, generate, measure
from benchkit import emit, load_average

HOMES = (("alice", "laptop"), ("bob", "laptop"), ("carol", "desktop"))
REPO = Path(__file__).resolve().parent.parent

LOCAL_CHILD = """
import sys
from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude
con = open_writer(sys.argv[1])
ingest_claude(con, sys.argv[2])
con.close()
"""

SPARK_CHILD = """
import json, os, sys, threading, time
import psutil
SEEN = {}  # pid -> (kind, own CPU-s, reaped CPU-s) at its last sample
def sample():
    me = psutil.Process()
    for p in [me] + me.children(recursive=True):
        try:
            c, name = p.cpu_times(), p.name()
        except psutil.NoSuchProcess:
            continue
        kind = "driver" if p.pid == me.pid else "jvm" if "java" in name else "workers"
        SEEN[p.pid] = (kind, c.user + c.system, c.children_user + c.children_system)
def poll():  # pyspark's daemon ignores SIGCHLD: a worker that exits is reaped by no one,
    while True:  # so its CPU is read while it lives (every 0.25 s) and kept after
        sample()
        time.sleep(0.25)
def tree_cpu():  # per kind: this driver, the JVM itself, Spark's Python workers
    sample()
    out = {"driver": 0.0, "jvm": 0.0, "workers": 0.0}
    for kind, own, reaped in SEEN.values():
        out[kind] += own
        if kind != "driver":  # the JVM reaps the daemons; the driver reaps the JVM at stop
            out["workers"] += reaped
    return out
threading.Thread(target=poll, daemon=True).start()
def jvm_threads():  # CPU-s of the JVM's threads by kind (/proc/<pid>/task/*/stat)
    out = {}
    tick = os.sysconf("SC_CLK_TCK")
    for p in psutil.Process().children(recursive=True):
        if "java" not in p.name():
            continue
        for task in os.scandir(f"/proc/{p.pid}/task"):
            try:
                with open(f"{task.path}/stat") as handle:
                    text = handle.read()
            except OSError:
                continue
            name = text[text.index("(") + 1:text.rindex(")")]
            fields = text[text.rindex(")") + 2:].split()
            kind = ("jit" if "Compiler" in name else "gc" if name.startswith(("GC ", "G1 ", "VM "))
                    else "tasks" if name.startswith("Executor task") else "other")
            out[kind] = out.get(kind, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out
t0 = time.perf_counter()
from brainlab.lake.spark_ingest import ingest_claude_spark, spark_session
spark = spark_session(sys.argv[3], {  # one plain JSON file per run
    "spark.eventLog.enabled": "true", "spark.eventLog.dir": "file://" + sys.argv[4],
    "spark.eventLog.compress": "false", "spark.eventLog.rolling.enabled": "false"})
t1 = time.perf_counter()
c1 = tree_cpu()
s = ingest_claude_spark(spark, sys.argv[1], sys.argv[2])
t2 = time.perf_counter()
c2 = tree_cpu()
threads = jvm_threads()
spark.stop()
print(json.dumps({"startup_s": t1 - t0, "startup_cpu": sum(c1.values()), "ingest_s": t2 - t1,
                  "cpu": {k: c2[k] - (c1[k] if k != "workers" else 0) for k in c2},
                  "cpu_total": sum(c2.values()), "read": s.read, "unchanged": s.unchanged,
                  "phases": getattr(s, "seconds", {}), "jvm_threads": threads,
                  "rows": s.rows.get("cc_request_lines", 0)}))
"""


def event_log_summary(folder: Path) -> dict:
    """Sum the task metrics of the run's event log in ``folder`` (SparkListenerTaskEnd)."""
    logs = sorted(p for p in folder.glob("*") if p.is_file() and not p.name.startswith("."))
    totals = {"tasks": 0, "stages": 0, "run_s": 0.0, "cpu_s": 0.0, "gc_s": 0.0,
              "deserialize_s": 0.0, "shuffle_read_mb": 0.0, "shuffle_write_mb": 0.0,
              "input_mb": 0.0, "output_mb": 0.0, "python_sent_mb": 0.0,
              "python_received_mb": 0.0}
    if not logs:
        return totals
    with open(logs[-1], encoding="utf-8") as handle:
        for line in handle:
            event = json.loads(line)
            kind = event.get("Event")
            if kind == "SparkListenerStageCompleted":
                totals["stages"] += 1
            if kind != "SparkListenerTaskEnd":
                continue
            m = event.get("Task Metrics") or {}
            totals["tasks"] += 1
            totals["run_s"] += m.get("Executor Run Time", 0) / 1e3
            totals["cpu_s"] += m.get("Executor CPU Time", 0) / 1e9
            totals["gc_s"] += m.get("JVM GC Time", 0) / 1e3
            totals["deserialize_s"] += m.get("Executor Deserialize Time", 0) / 1e3
            read = m.get("Shuffle Read Metrics") or {}
            totals["shuffle_read_mb"] += (read.get("Remote Bytes Read", 0)
                                          + read.get("Local Bytes Read", 0)) / 1e6
            totals["shuffle_write_mb"] += (m.get("Shuffle Write Metrics") or {}).get(
                "Shuffle Bytes Written", 0) / 1e6
            totals["input_mb"] += (m.get("Input Metrics") or {}).get("Bytes Read", 0) / 1e6
            totals["output_mb"] += (m.get("Output Metrics") or {}).get("Bytes Written", 0) / 1e6
            for acc in (event.get("Task Info") or {}).get("Accumulables", []):
                name, value = acc.get("Name", ""), acc.get("Update")
                if not isinstance(value, (int, str)) or not str(value).isdigit():
                    continue
                if name == "data sent to Python workers":
                    totals["python_sent_mb"] += int(value) / 1e6
                elif name == "data returned from Python workers":
                    totals["python_received_mb"] += int(value) / 1e6
    return {k: round(v, 2) for k, v in totals.items()}


def spark_run(root: Path, lake: Path, master: str, logs: Path) -> dict:
    """One Spark ingest in its own process, with its event log summary."""
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    out = measure([sys.executable, "-c", SPARK_CHILD, str(root), str(lake), master, str(logs)],
                  env={"PYTHONPATH": str(REPO)})
    result = json.loads(out["out"].strip().splitlines()[-1])
    result["wall"] = out["wall"]
    result["events"] = event_log_summary(logs)
    return result


def local_run(root: Path, db: Path) -> dict:
    """One cold local ingest into a new store (wall, CPU-s with its parse workers)."""
    db.unlink(missing_ok=True)
    return measure([sys.executable, "-c", LOCAL_CHILD, str(db), str(root)],
                   env={"PYTHONPATH": str(REPO)})


def show(label: str, r: dict, gb: float | None = None) -> None:
    """One line per Spark run, then where its executors' time went."""
    cpu = r["cpu_total"]
    rate = f" = {cpu / gb:.1f} CPU-s/GB" if gb else ""
    phases = ", ".join(f"{k} {v:.1f}" for k, v in r.get("phases", {}).items())
    print(f"  {label:<13} {r['wall']:7.1f} s wall {cpu:7.1f} CPU-s{rate} (start-up"
          f" {r['startup_s']:.1f} s / {r['startup_cpu']:.1f} CPU-s; JVM {r['cpu']['jvm']:.1f},"
          f" Python workers {r['cpu']['workers']:.1f}, driver {r['cpu']['driver']:.1f});"
          f" {r['read']} read {r['unchanged']} unchanged; phases s: {phases}")
    threads = ", ".join(f"{k} {v:.1f}" for k, v in sorted(r.get("jvm_threads", {}).items()))
    print(f"  {'':<13} JVM threads CPU-s (start-up included): {threads}")
    e = r["events"]
    print(f"  {'':<13} event log: {e['stages']} stages {e['tasks']} tasks, executor run"
          f" {e['run_s']:.1f} s (CPU {e['cpu_s']:.1f}, GC {e['gc_s']:.1f}), JVM->Python"
          f" {e['python_sent_mb']:.1f} MB, Python->JVM {e['python_received_mb']:.1f} MB,"
          f" shuffle write {e['shuffle_write_mb']:.1f} MB, Parquet in {e['input_mb']:.1f} /"
          f" out {e['output_mb']:.1f} MB")


def bench_size(size_gb: float, rounds: int, base: Path, master: str,
               keep_tree: bool = False) -> dict:
    """Generate one tree, run the interleaved rounds; return the medians."""
    work = base / f"{size_gb:g}gb"
    root = work / "team"
    marker = work / "team.json"  # a complete tree of an earlier run (--keep-tree): reused
    t0 = time.perf_counter()
    if marker.exists():
        files, total = json.loads(marker.read_text())
        how = "reused"
    else:
        shutil.rmtree(work, ignore_errors=True)
        total = files = 0
        for i, (user, machine) in enumerate(HOMES):
            n, size = generate(root / user / machine, int(size_gb * 1e9 / len(HOMES)),
                               seed=i + 1)
            files, total = files + n, total + size
        marker.write_text(json.dumps([files, total]))
        how = "generated"
    gb = total / 1e9
    print(f"\n{gb:.2f} GB: {files} files {how} in {time.perf_counter() - t0:.0f} s"
          f" ({len(HOMES)} users on 2 machines); load average {load_average()}")
    runs: dict[str, list] = {"local": [], "cold": [], "nothing": [], "increment": []}
    for k in range(rounds):
        print(f" round {k + 1} (load average {load_average()})")
        local = local_run(root, work / "local.duckdb")
        runs["local"].append(local)
        print(f"  {'local cold':<13} {local['wall']:7.1f} s wall {local['cpu']:7.1f} CPU-s ="
              f" {local['cpu'] / gb:.1f} CPU-s/GB")
        lake = work / "lake"
        shutil.rmtree(lake, ignore_errors=True)
        for name, label in (("cold", "spark cold"), ("nothing", "nothing new")):
            runs[name].append(spark_run(root, lake, master, work / "events"))
            show(label, runs[name][-1], gb if name == "cold" else None)
        undo = append_and_undo(root / HOMES[0][0] / HOMES[0][1], int(total / len(HOMES)))
        try:
            runs["increment"].append(spark_run(root, lake, master, work / "events"))
            show("+1% (1 home)", runs["increment"][-1])
        finally:
            undo()
    med = statistics.median
    out = {"gb": gb, "files": files,
           "local_cpu": med(r["cpu"] for r in runs["local"]),
           "local_wall": med(r["wall"] for r in runs["local"]),
           "cold_cpu": med(r["cpu_total"] for r in runs["cold"]),
           "cold_wall": med(r["wall"] for r in runs["cold"]),
           "nothing_cpu": med(r["cpu_total"] for r in runs["nothing"]),
           "nothing_wall": med(r["wall"] for r in runs["nothing"]),
           "increment_cpu": med(r["cpu_total"] for r in runs["increment"]),
           "startup_cpu": med(r["startup_cpu"] for r in runs["cold"]),
           "rounds": rounds}
    out["spark_parse_cpu_per_gb"] = (out["cold_cpu"] - out["nothing_cpu"]) / gb
    out["local_cpu_per_gb"] = out["local_cpu"] / gb
    print(f" medians of {rounds}: local {out['local_cpu']:.1f} CPU-s ({out['local_cpu_per_gb']:.1f}"
          f"/GB); spark cold {out['cold_cpu']:.1f}, nothing new (fixed) {out['nothing_cpu']:.1f},"
          f" +1% {out['increment_cpu']:.1f} CPU-s; spark parse"
          f" {out['spark_parse_cpu_per_gb']:.1f} CPU-s/GB ="
          f" {out['spark_parse_cpu_per_gb'] / out['local_cpu_per_gb']:.2f}x local")
    if keep_tree:  # the tree stays for the next run; stores and lakes go
        for path in (work / n for n in ("lake", "events", "local.duckdb", "local.duckdb.wal")):
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,5", help="GB per tree, comma-separated")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/spark-bench"))
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--skip-large-repeat", action="store_true",
                        help="run the largest size once (a shared machine, little time)")
    parser.add_argument("--keep-tree", action="store_true",
                        help="keep the generated trees under --dir and reuse them next run")
    args = parser.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    print(f"bench_spark {args.master}, sizes {sizes} GB, {args.repeat} rounds;"
          f" load average {load_average()}")
    results = []
    for size in sizes:
        rounds = 1 if args.skip_large_repeat and size == max(sizes) and len(sizes) > 1 \
            else args.repeat
        results.append(bench_size(size, rounds, args.dir, args.master, args.keep_tree))
    figures = {"sizes": [round(r["gb"], 2) for r in results],
               "local_cpu_per_gb": [round(r["local_cpu_per_gb"], 2) for r in results],
               "spark_fixed_cpu": [round(r["nothing_cpu"], 1) for r in results],
               "spark_parse_cpu_per_gb": [round(r["spark_parse_cpu_per_gb"], 2) for r in results],
               "spark_increment_cpu": [round(r["increment_cpu"], 1) for r in results]}
    if len(results) > 1:
        a, b = results[0], results[-1]
        slope = (b["cold_cpu"] - a["cold_cpu"]) / (b["gb"] - a["gb"])
        local_slope = (b["local_cpu"] - a["local_cpu"]) / (b["gb"] - a["gb"])
        print(f"\nslope {a['gb']:.1f} -> {b['gb']:.1f} GB: spark {slope:.1f} CPU-s/GB, local"
              f" {local_slope:.1f} CPU-s/GB ({slope / local_slope:.2f}x)")
        figures.update(spark_slope_cpu_per_gb=slope, local_slope_cpu_per_gb=local_slope)
    emit("spark", master=args.master, **figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
