"""Benchmark: `brainlab statusline` against `ccusage statusline` on the same input (issue 25).

Usage:
    PYTHONPATH=. python benchmarks/bench_statusline.py [--runs 200] [--ccusage-runs 20]
        [--copies 30] [--corpus ../shared/corpora/claude-code] [--dir /tmp/sl-bench]
        [--ccusage-dir /work/ccusage] [--trees 1,30] [--keep]

For each tree (the real corpus copied 1 and ``--copies`` times with rewritten ids, as
benchmarks/bench_claude_ingest.py builds it) the store is ingested once, a "current
session" transcript is added, and the hook's ingest writes the digest. Then each round
appends one assistant message to that transcript (as Claude Code does before it runs the
status line) and runs, one after the other, brainlab's ``statusline`` as ``brainlab hooks
install`` writes it (``python -S .../launch.py statusline``), the console script ``brainlab
statusline``, and ccusage 20.0.24's ``ccusage statusline --offline``, with the same JSON on
stdin (ccusage's own cache on, as installed; the new message makes its file cache stale as
in a real session). ccusage runs in the first ``--ccusage-runs`` rounds only (it re-reads
every transcript: seconds per run at 30x). Then ``brainlab hook ingest`` after one new
message, in the foreground (the whole ingest) and detached (what the session waits for),
through the console script and as installed (``python -S .../launch.py hook ingest``).
Prints p50 / p95 wall time, the ratio, and the load average beside the figures.

``--baseline CHECKOUT`` (issue 40: the status line costs no more CPU per call than before)
also runs, in every round and right after this checkout's, the installed status line of
another checkout of brainlab (e.g. a worktree of main before the change) on the same input,
each with its own live cache (the digest copied), once in a folder without settings and
once in a folder holding a brainlab.toml with ``[thresholds]``; it prints the CPU seconds
(user + system of the child) per call of both, p50 and mean, and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_claude_ingest import copy_corpus, user_env  # this folder: first on the path
from benchkit import emit  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SCRIPT = Path(sys.executable).with_name("brainlab")
SID = "bench-live-0000-0000-0000-000000000000"


def timed(cmd: list[str], stdin: bytes, env: dict) -> tuple[float, bytes]:
    """Wall seconds of one run of ``cmd`` fed ``stdin``, and its stdout."""
    t0 = time.perf_counter()
    done = subprocess.run(cmd, input=stdin, env=env, capture_output=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}")
    return wall, done.stdout


def cpu_timed(cmd: list[str], stdin: bytes, env: dict, cwd: Path | None = None) -> float:
    """CPU seconds (user + system) of one run of ``cmd`` fed ``stdin``."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, input=stdin, env=env, capture_output=True, cwd=cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) of ``values``, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


def message(i: int) -> str:
    """One assistant line with usage, as Claude Code appends after a call."""
    return json.dumps({
        "type": "assistant", "sessionId": SID, "isSidechain": False, "cwd": "/home/u/bench",
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        "requestId": f"req_bench{i:06d}", "uuid": f"u-bench-{i}",
        "message": {"id": f"msg_bench{i:06d}", "role": "assistant", "type": "message",
                    "model": "claude-opus-4-5-20251101",
                    "content": [{"type": "text", "text": "ok " * 50}],
                    "usage": {"input_tokens": 10, "output_tokens": 200,
                              "cache_creation_input_tokens": 500,
                              "cache_read_input_tokens": 60_000 + i}}},
        separators=(",", ":")) + "\n"


def status_input(transcript: Path, i: int) -> bytes:
    now = int(time.time())
    return json.dumps({
        "session_id": SID, "transcript_path": str(transcript), "cwd": "/home/u/bench",
        "model": {"id": "claude-opus-4-5", "display_name": "Opus 4.5"},
        "workspace": {"current_dir": "/home/u/bench", "project_dir": "/home/u/bench"},
        "cost": {"total_cost_usd": 0.5 + i / 100, "total_duration_ms": 1000 * i},
        "context_window": {"total_input_tokens": 60_510 + i, "total_output_tokens": 200 * i,
                           "context_window_size": 200000, "used_percentage": 30 + i % 50,
                           "current_usage": {"input_tokens": 10, "output_tokens": 200,
                                             "cache_creation_input_tokens": 500,
                                             "cache_read_input_tokens": 60_000 + i}},
        "rate_limits": {"five_hour": {"used_percentage": 10 + i % 80, "resets_at": now + 9000},
                        "seven_day": {"used_percentage": 40, "resets_at": now + 300_000}},
    }).encode()


def bench_tree(label: str, tree: Path, work: Path, args) -> dict:
    env = user_env({"BRAINLAB_CACHE_DIR": str(work / "cache"), "CLAUDE_CONFIG_DIR": str(tree),
                    "COLUMNS": "120"})
    db = work / f"{label}.duckdb"
    t0 = time.perf_counter()
    subprocess.run([str(SCRIPT), "ingest", "claude", str(tree / "projects"), "--db", str(db)],
                   env=env, check=True, capture_output=True)
    print(f"[{label}] store built in {time.perf_counter() - t0:.1f} s"
          f" ({sum(p.stat().st_size for p in tree.rglob('*.jsonl')) / 1e6:.0f} MB of"
          " transcripts)", flush=True)
    transcript = tree / "projects" / "-home-u-bench" / f"{SID}.jsonl"
    transcript.parent.mkdir(parents=True, exist_ok=True)
    transcript.write_text(json.dumps({"type": "user", "sessionId": SID, "isSidechain": False,
                                      "timestamp": "2026-12-01T10:00:00.000Z",
                                      "message": {"role": "user",
                                                  "content": "brain work +sprint"}}) + "\n")
    hook = json.dumps({"session_id": SID, "transcript_path": str(transcript),
                       "hook_event_name": "Stop"}).encode()
    timed([str(SCRIPT), "hook", "ingest", "--foreground", "--db", str(db)], hook, env)
    ccusage = [str(Path(args.ccusage_dir) / "node_modules" / ".bin" / "ccusage"),
               "statusline", "--offline"]
    ours, script, theirs = [], [], []
    sample, cpu = {}, {}
    installed = [sys.executable, "-S", str(REPO / "brainlab" / "live" / "launch.py"),
                 "statusline"]  # what `brainlab hooks install` writes
    versus = _versus(args, work, env)
    for i in range(args.runs):
        with open(transcript, "a") as handle:
            handle.write(message(i))
        data = status_input(transcript, i)
        for name, (command, its_env, cwd) in versus.items():
            result_cpu = cpu_timed(command, data, its_env, cwd)
            cpu.setdefault(name, []).append(result_cpu)
        wall, out = timed(installed, data, env)
        ours.append(wall)
        sample.setdefault("brainlab", out.decode().strip())
        script.append(timed([str(SCRIPT), "statusline"], data, env)[0])
        if i < args.ccusage_runs:
            wall, out = timed(ccusage, data, env)
            theirs.append(wall)
            sample.setdefault("ccusage", out.decode().strip())
    fg, bg = [], []
    for i in range(args.hook_runs):
        with open(transcript, "a") as handle:
            handle.write(message(args.runs + i))
        fg.append(timed([str(SCRIPT), "hook", "ingest", "--foreground", "--db", str(db)],
                        hook, env)[0])
    launched = []
    for i in range(args.hook_runs):
        with open(transcript, "a") as handle:
            handle.write(message(args.runs + args.hook_runs + i))
        bg.append(timed([str(SCRIPT), "hook", "ingest", "--db", str(db)], hook, env)[0])
        time.sleep(3.0)  # let the detached worker finish before the next round
        with open(transcript, "a") as handle:
            handle.write(message(args.runs + 2 * args.hook_runs + i))
        launched.append(timed([*installed[:3], "hook", "ingest", "--db", str(db)], hook,
                              env)[0])
        time.sleep(3.0)
    return {"label": label, "ours": ours, "script": script, "theirs": theirs, "fg": fg,
            "bg": bg, "launched": launched, "sample": sample, "cpu": cpu}


def _versus(args, work: Path, env: dict) -> dict:
    """``--baseline``: {name: (installed status line command, env, folder)} of both checkouts.

    Each gets its own live cache holding the digest the hook just wrote, so neither sees the
    other's per-session state; "settings" runs in a folder whose brainlab.toml sets thresholds.
    """
    if not args.baseline:
        return {}
    settings_folder = work / "with-settings"
    settings_folder.mkdir(exist_ok=True)
    (settings_folder / "brainlab.toml").write_text(
        "[thresholds]\ncoach_ratio = 0.3\nsaturation_peak_use = 75\n", encoding="utf-8")
    digest = Path(env["BRAINLAB_CACHE_DIR"]) / "live" / "digest.json"
    out = {}
    for who, root in (("after", REPO), ("before", args.baseline.resolve())):
        for where, cwd in (("no settings", work), ("brainlab.toml", settings_folder)):
            cache = work / f"cache-{who}-{where.replace(' ', '-')}"
            (cache / "live").mkdir(parents=True, exist_ok=True)
            if digest.exists():
                shutil.copy(digest, cache / "live" / "digest.json")
            its_env = {**env, "BRAINLAB_CACHE_DIR": str(cache), "PWD": str(cwd)}
            out[f"{who}, {where}"] = ([sys.executable, "-S", str(root / "brainlab" / "live" /
                                                                 "launch.py"), "statusline"],
                                      its_env, cwd)
    return out


def report(result: dict) -> None:
    ours, theirs = result["ours"], result["theirs"]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\n== {result['label']} (load average {load}) ==")
    print(f"brainlab (installed)    n={len(ours):>3}  p50 {pct(ours, .5) * 1e3:7.1f} ms"
          f"  p95 {pct(ours, .95) * 1e3:7.1f} ms")
    script = result["script"]
    print(f"brainlab statusline     n={len(script):>3}  p50 {pct(script, .5) * 1e3:7.1f} ms"
          f"  p95 {pct(script, .95) * 1e3:7.1f} ms  (console script, with site)")
    if theirs:
        print(f"ccusage statusline      n={len(theirs):>3}  p50 {pct(theirs, .5) * 1e3:7.1f} ms"
              f"  p95 {pct(theirs, .95) * 1e3:7.1f} ms")
        print(f"ratio ccusage/brainlab  p50 {pct(theirs, .5) / pct(ours, .5):5.1f}x"
              f"  p95 {pct(theirs, .95) / pct(ours, .95):5.1f}x")
    for name, values in (("hook ingest --foreground", result["fg"]),
                         ("hook ingest (detached)  ", result["bg"]),
                         ("hook ingest (installed) ", result["launched"])):
        if values:
            print(f"{name} n={len(values):>3}  median {statistics.median(values) * 1e3:7.1f}"
                  f" ms  max {max(values) * 1e3:7.1f} ms")
    for tool, line in result["sample"].items():
        print(f"  {tool}: {line}")
    cpu = result.get("cpu") or {}
    for name, values in cpu.items():
        print(f"CPU per call, {name:<26} n={len(values):>3}  p50 {pct(values, .5) * 1e3:6.1f} ms"
              f"  mean {statistics.mean(values) * 1e3:6.1f} ms")
    for where in ("no settings", "brainlab.toml"):
        after, before = cpu.get(f"after, {where}"), cpu.get(f"before, {where}")
        if after and before:
            print(f"CPU after/before, {where}: p50 {pct(after, .5) / pct(before, .5):.3f}x"
                  f"  mean {statistics.mean(after) / statistics.mean(before):.3f}x")
    emit("statusline", label=result["label"], p50_s=pct(ours, .5), p95_s=pct(ours, .95),
         ccusage_p95_s=pct(theirs, .95) if theirs else None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--ccusage-runs", type=int, default=20)
    parser.add_argument("--hook-runs", type=int, default=5)
    parser.add_argument("--copies", type=int, default=30)
    parser.add_argument("--trees", default="1,30", help="Copies of the corpus per tree.")
    parser.add_argument("--corpus", type=Path,
                        default=REPO.parent.parent / "shared" / "corpora" / "claude-code")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/sl-bench"))
    parser.add_argument("--ccusage-dir", type=Path, default=Path("/work/ccusage"))
    parser.add_argument("--keep", action="store_true", help="Keep the trees and stores.")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="Another checkout whose status line runs beside this one's (CPU).")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        args.corpus = Path("/work/shared/corpora/claude-code")
    for root in (REPO, *([args.baseline] if args.baseline else [])):  # both start from .pyc
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "brainlab")],
                       check=True, env=user_env(), stdout=subprocess.DEVNULL)
    results = []
    try:
        for copies in (int(c) for c in args.trees.split(",")):
            copies = args.copies if copies == 30 else copies
            work = args.dir / f"x{copies}"
            shutil.rmtree(work, ignore_errors=True)
            tree = work / "tree"
            files, size = copy_corpus(args.corpus, tree, copies)
            results.append(bench_tree(f"corpus x{copies}: {files} files, {size / 1e6:.0f} MB",
                                      tree, work, args))
            report(results[-1])
    finally:
        if not args.keep:
            shutil.rmtree(args.dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
