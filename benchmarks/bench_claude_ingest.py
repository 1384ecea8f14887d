"""Benchmark: Claude Code transcript ingest on generated transcripts (1 GB by default).

Usage:
    PYTHONPATH=. python benchmarks/bench_claude_ingest.py [--size-gb 1.0] [--dir /tmp/cc-bench]
        [--ccusage-dir /work/ccusage]

Prints, on the same tree: brainlab's cold ingest (MB/s, peak RSS of the ingesting process),
a daily report on the result, an incremental run after appending 1% (as new tails of existing
files and a few new files), ccusage's `claude daily --json --offline` (when installed), and a
bare DuckDB read_ndjson count of the same files (the floor: parsing alone, nothing kept).
Targets: cold + daily faster than ccusage; incremental < 5% of cold; peak < 2 GB for 5 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

FILLER = "".join(random.Random(0).choice("abcdefghij klmnop\n") for _ in range(64_000))


def _ts(day: int, second: int) -> str:
    h, rest = divmod(second % 86_400, 3600)
    m, s = divmod(rest, 60)
    return f"2026-{1 + day // 28:02d}-{1 + day % 28:02d}T{h:02d}:{m:02d}:{s:02d}.000Z"


def session_lines(rng: random.Random, sid: str, day: int, calls: int, start_call: int = 0,
                  agent: str | None = None):
    """Yield JSONL lines of one session: each API call as 2-3 lines plus a tool result."""
    base = {"sessionId": sid, "cwd": "/home/user/projets/bench", "version": "2.0.42",
            "userType": "external", "isSidechain": agent is not None}
    if agent:
        base["agentId"] = agent
    for c in range(start_call, start_call + calls):
        t = _ts(day, 30_000 + c * 7)
        msg, req = f"msg_{sid[:8]}{agent or ''}{c:06d}", f"req_{sid[:8]}{agent or ''}{c:06d}"
        u = {"input_tokens": rng.randint(1, 20),
             "cache_creation_input_tokens": rng.randint(0, 4000),
             "cache_read_input_tokens": rng.randint(10_000, 150_000),
             "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
             "output_tokens": 0}
        u["cache_creation"]["ephemeral_5m_input_tokens"] = u["cache_creation_input_tokens"]
        blocks = [{"type": "text", "text": FILLER[: rng.randint(50, 2000)]},
                  {"type": "tool_use", "id": f"toolu_{msg}", "name": "Read",
                   "input": {"file_path": f"/home/user/projets/bench/src/f{c % 50}.py"}}]
        for i, block in enumerate(blocks):
            u = dict(u, output_tokens=rng.randint(100, 3000) if i == len(blocks) - 1 else 5)
            yield json.dumps({**base, "type": "assistant", "timestamp": t, "requestId": req,
                              "message": {"id": msg, "type": "message", "role": "assistant",
                                          "model": "claude-opus-4-5-20251101",
                                          "content": [block], "usage": u}},
                             separators=(",", ":"))
        size = int(rng.paretovariate(1.2) * 1500)
        body = (FILLER * (1 + size // len(FILLER)))[:size]
        yield json.dumps({**base, "type": "user", "timestamp": t, "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{msg}",
                                         "content": body}]}}, separators=(",", ":"))


def generate(root: Path, size_bytes: int, seed: int = 1) -> tuple[int, int]:
    """Write sessions (with subagent files) until ``size_bytes``; return (files, bytes)."""
    rng = random.Random(seed)
    projects = root / "projects"
    files = written = n = 0
    while written < size_bytes:
        sid = f"{rng.getrandbits(128):032x}"
        folder = projects / f"-home-user-projets-p{n % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{sid}.jsonl"
        with open(path, "w") as handle:
            for line in session_lines(rng, sid, n % 300, rng.randint(200, 1200)):
                handle.write(line + "\n")
        written += path.stat().st_size
        files += 1
        if n % 3 == 0:
            sub = folder / sid / "subagents"
            sub.mkdir(parents=True, exist_ok=True)
            agent = f"a{rng.getrandbits(40):010x}"
            sub_path = sub / f"agent-{agent}.jsonl"
            with open(sub_path, "w") as handle:
                for line in session_lines(rng, sid, n % 300, rng.randint(20, 200), agent=agent):
                    handle.write(line + "\n")
            (sub / f"agent-{agent}.meta.json").write_text('{"agentType":"Explore"}')
            written += sub_path.stat().st_size
            files += 1
        n += 1
    return files, written


def append_one_percent(root: Path, total: int, seed: int = 2) -> int:
    """Grow some files by new tails and add new files: about 1% of ``total`` bytes."""
    rng = random.Random(seed)
    target, added = total // 100, 0
    mains = sorted(p for p in root.rglob("*.jsonl") if "subagents" not in p.parts)
    for path in rng.sample(mains, k=min(10, len(mains))):
        with open(path, "a") as handle:
            for line in session_lines(rng, path.stem, 1, 40, start_call=100_000):
                handle.write(line + "\n")
                added += len(line) + 1
    while added < target:
        sid = f"{rng.getrandbits(128):032x}"
        path = root / "projects" / "-home-user-projets-new" / f"{sid}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w") as handle:
            for line in session_lines(rng, sid, 299, 60):
                handle.write(line + "\n")
        added += path.stat().st_size
    return added


CHILD = """
import time
START = time.perf_counter()
import json, resource, sys
from brainlab.store.claude_ingest import ingest_claude
from brainlab.store import open_writer
t = time.perf_counter()
con = open_writer(sys.argv[1])
t0 = time.perf_counter()
s = ingest_claude(con, sys.argv[2])
t1 = time.perf_counter()
rows = con.execute("SELECT count(*), sum(total_tokens) FROM usage_daily").fetchone()
t2 = time.perf_counter()
con.close()
print(json.dumps({"ingest_s": t1 - t0, "daily_s": t2 - t1, "open_s": t0 - t,
                  "process_s": t2 - START, "cpu_s": time.process_time(), "bytes": s.bytes_read,
                  "files": s.read, "days": rows[0], "tokens": int(rows[1] or 0),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "worker_peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                  "worker_cpu_s": sum(resource.getrusage(resource.RUSAGE_CHILDREN)[:2])}))
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_child(db: Path, root: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    out = subprocess.run([sys.executable, "-c", CHILD, str(db), str(root)], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-gb", type=float, default=1.0)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/cc-bench"))
    parser.add_argument("--ccusage-dir", type=Path, default=Path("/work/ccusage"))
    parser.add_argument("--keep", action="store_true", help="Keep the generated tree.")
    args = parser.parse_args()

    tree, db = args.dir / "config", args.dir / "bench.duckdb"
    if args.dir.exists():
        shutil.rmtree(args.dir)
    t0 = time.perf_counter()
    files, total = generate(tree, int(args.size_gb * 1e9))
    print(f"generated {files} files, {total / 1e9:.2f} GB in {time.perf_counter() - t0:.0f} s"
          f" under {tree}")

    cold = run_child(db, tree)
    mb = cold["bytes"] / 1e6
    print(f"brainlab cold ingest : {cold['ingest_s']:7.1f} s  {mb / cold['ingest_s']:6.0f} MB/s"
          f"  peak RSS {cold['peak_mb']:.0f} MB (parse workers {cold['worker_peak_mb']:.0f} MB"
          f" each at most)  ({cold['files']} files)")
    print(f"brainlab daily report: {cold['daily_s']:7.2f} s  ({cold['days']} days,"
          f" {cold['tokens']:,} tokens)")
    print(f"brainlab whole process (imports, store open {cold['open_s']:.1f} s, ingest, daily):"
          f" {cold['process_s']:.1f} s wall, {cold['cpu_s'] + cold['worker_cpu_s']:.1f} s CPU")
    cold_total = cold["process_s"]

    ccusage_s = None
    if (args.ccusage_dir / "node_modules" / ".bin" / "ccusage").exists():
        t0, c0 = time.perf_counter(), _children_cpu()
        out = subprocess.run(["npx", "--no-install", "ccusage", "claude", "daily", "--json",
                              "--offline", "--timezone", "UTC"], cwd=args.ccusage_dir,
                             env=dict(os.environ, CLAUDE_CONFIG_DIR=str(tree)),
                             capture_output=True, text=True)
        ccusage_s, ccusage_cpu = time.perf_counter() - t0, _children_cpu() - c0
        tokens = json.loads(out.stdout)["totals"]["totalTokens"] if out.returncode == 0 else None
        print(f"ccusage daily        : {ccusage_s:7.1f} s wall, {ccusage_cpu:.1f} s CPU"
              f"  (totalTokens {tokens:,};"
              f" same as brainlab: {tokens == cold['tokens']})")
    else:
        print(f"ccusage daily        : not installed in {args.ccusage_dir} (npm install"
              " ccusage@20.0.24 there to compare)")

    import duckdb  # the floor: DuckDB parsing every line, keeping nothing
    t0 = time.perf_counter()
    lines = duckdb.connect().execute(
        "SELECT count(*) FROM read_json(?, format = 'newline_delimited', ignore_errors = true,"
        " columns = {'type': 'VARCHAR'}, maximum_object_size = 268435456)",
        [str(tree / "projects" / "**" / "*.jsonl")]).fetchone()[0]
    floor_s = time.perf_counter() - t0
    print(f"duckdb read_ndjson   : {floor_s:7.1f} s  {total / 1e6 / floor_s:6.0f} MB/s"
          f"  ({lines:,} lines; the floor)")

    added = append_one_percent(tree, total)
    incr = run_child(db, tree)
    print(f"incremental (+{added / 1e6:.0f} MB): {incr['ingest_s']:5.2f} s"
          f" = {100 * incr['ingest_s'] / cold['ingest_s']:.1f} % of cold ingest"
          f"  (read {incr['bytes'] / 1e6:.0f} MB in {incr['files']} files; whole process"
          f" {incr['process_s']:.1f} s of which store open {incr['open_s']:.1f} s)")

    print("\ntargets:")
    if ccusage_s is not None:
        print(f"  cold ingest + daily, whole process ({cold_total:.1f} s) faster than ccusage"
              f" ({ccusage_s:.1f} s): {cold_total < ccusage_s}")
    print(f"  incremental < 5% of cold: {incr['ingest_s'] < 0.05 * cold['ingest_s']}")
    peak = cold["peak_mb"] + cold["worker_peak_mb"] * (os.cpu_count() or 1)
    print(f"  peak RSS {peak:.0f} MB, main + workers, for {total / 1e9:.2f} GB"
          f" (target < 2 GB for 5 GB input)")
    if not args.keep:
        shutil.rmtree(args.dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
