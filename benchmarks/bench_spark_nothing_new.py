"""Benchmark: `brainlab spark ingest-claude` with nothing new, no JVM against a session started.

Usage:
    PYTHONPATH=. python benchmarks/bench_spark_nothing_new.py [--repeat 3] [--dir /tmp/nn-bench]

Lays out the two smallest corpus projects as two users, ingests them once (a JVM), then runs,
interleaved, the CLI with nothing new (the plan reads the manifest with pyarrow and starts no
JVM) and the baseline, the same library call with a session started first, as the CLI did
before (issue 28 item 1). Each run is its own process; its CPU-s are those of every process
carrying a marker variable, the JVM included (pyspark never reaps it), read with psutil.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
from benchkit import emit, load_average

REPO = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("BRAINLAB_CORPUS", "/work/shared/corpora/claude-code"))
BRAINLAB = str(Path(sys.executable).parent / "brainlab")
BASELINE = """
import sys
from brainlab.lake.spark_ingest import ingest_claude_spark, spark_session
print(ingest_claude_spark(spark_session("local[2]"), sys.argv[1], sys.argv[2]).unchanged)
"""


def sampled(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """(wall s, CPU-s of every process the command started, orphans included)."""
    mark = f"{os.getpid()}-{time.time()}"
    env = {**os.environ, "BENCH_MARK": mark, "PYTHONPATH": str(REPO)}
    seen: dict[tuple, float] = {}

    def scan() -> int:
        alive = 0
        for proc in psutil.process_iter():
            try:
                if proc.environ().get("BENCH_MARK") != mark:
                    continue
                cpu = proc.cpu_times()
                seen[(proc.pid, proc.create_time())] = cpu.user + cpu.system
                alive += 1
            except (psutil.Error, OSError):
                pass
        return alive

    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    while proc.poll() is None:
        scan()
        time.sleep(0.2)
    wall = time.perf_counter() - start
    for _ in range(50):  # the JVM outlives its driver for a moment
        if not scan():
            break
        time.sleep(0.2)
    if proc.returncode:
        raise SystemExit(f"{cmd} failed ({proc.returncode})")
    return wall, sum(seen.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    base = args.dir or Path(tempfile.mkdtemp(prefix="nn-bench-"))
    projects = sorted((p for p in (CORPUS / "projects").iterdir() if p.is_dir()),
                      key=lambda p: sum(f.stat().st_size for f in p.rglob("*.jsonl")))[:2]
    shutil.rmtree(base / "team", ignore_errors=True)
    shutil.rmtree(base / "lake", ignore_errors=True)
    for user, project in zip(("ada", "bob"), projects, strict=True):
        shutil.copytree(project, base / "team" / user / "box" / "projects" / project.name)
    cli = [BRAINLAB, "spark", "ingest-claude", "team", "--lake", "lake"]
    print(f"load before: {load_average()}")
    print(f"first run (a JVM): wall {sampled(cli, base)[0]:.1f} s")
    figures: dict[str, list[tuple[float, float]]] = {"no_jvm": [], "session_first": []}
    for _ in range(args.repeat):
        figures["no_jvm"].append(sampled(cli, base))
        figures["session_first"].append(
            sampled([sys.executable, "-c", BASELINE, "team", "lake"], base))
    for name, runs in figures.items():
        print(f"{name:14} wall " + " ".join(f"{w:5.1f}" for w, _ in runs) + " s   CPU "
              + " ".join(f"{c:5.1f}" for _, c in runs) + " s")
    new, old = (statistics.median(c for _, c in figures[k]) for k in ("no_jvm", "session_first"))
    print(f"median CPU-s: {new:.1f} without a JVM, {old:.1f} with a session started"
          f" (baseline); load after: {load_average()}")
    emit("spark_nothing_new", no_jvm_cpu_s=round(new, 2), session_first_cpu_s=round(old, 2))
    if args.dir is None:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
