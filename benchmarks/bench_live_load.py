"""Benchmark: the live hooks under a sprint's load, before and after (issue 46 item 1).

Usage:
    python benchmarks/bench_live_load.py [--before REV] [--sessions 24] [--seconds 120]
        [--quick] [--dir /tmp/brainlab-live-load] [--seed 46]

For each code version (with ``--before REV`` first git revision REV's ``brainlab`` package,
checked out apart as bench_claude_incremental does; then this checkout), in a folder of its
own (its Claude config folder, live cache, home and store):

* ``--sessions`` sessions' transcripts start with a few messages and a first
  ``ingest claude`` makes the store; then for ``--seconds`` each session, in its own
  thread, thinks 2-8 s, appends 1-4 messages (now and then to a subagent's transcript too)
  and fires its hook as Claude Code does: the hook object as JSON on the stdin of a
  subprocess, waited for. Half the sessions run the command ``hooks install`` wrote (the
  ``python -S`` launcher, through ``sh -c``), half the ``brainlab`` console script;
  Stop, or SubagentStop naming the agent's transcript, and SessionEnd at the end.
* beside them: ``usage daily`` (a reader) every 10-20 s and ``ingest claude`` (a manual
  ingest) every 15-25 s, each timed; a killer SIGKILLs a random running drain worker
  every 1-4 s; a sampler counts the drain workers (processes ``brainlab.live.hook_ingest``
  on this store) every 0.1 s.
* then: the killer stops, every session fires SessionEnd, and the run waits (up to 180 s)
  for the workers to finish; the spool's bytes left are counted; a fresh ``ingest claude``
  of the same tree into a new store, and every relation of both stores is compared (row
  count and an order-free hash of the rows: compare_stores.SUMMARISE).

Prints per version: hook return p50/p95/max and exit codes, reads and manual ingests
served within 10 s (exit 0 in at most 10 s of wall time), the peak of concurrent drain
workers, the kills, spool bytes left, how long the workers took to settle, relations equal
to a fresh ingest, and the load average at the start and the end (the machine is shared:
every figure moves with it). ``--quick``: 6 sessions for 25 s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from bench_claude_ingest import REPO, checkout
from benchkit import emit, load_average
from compare_stores import SUMMARISE

SERVED_S = 10.0  # a read or a manual ingest counts as served when it exits 0 within this
WORKER_MODULE = "brainlab.live.hook_ingest"
# what a fresh ingest cannot equal, by their grain: cc_files counts the reads of each file
# (``runs``), cc_spans has one row per read of a file; the views over them (session
# starts and durations) are compared like every other relation
BOOKKEEPING = ("cc_files", "cc_spans")

SUMMARY_SCRIPT = SUMMARISE + r"""
import json, sys
print(json.dumps({"live": summarise_store(sys.argv[1]), "fresh": summarise_store(sys.argv[2])}))
"""


def percentile(values: list[float], q: float) -> float | None:
    """The ``q`` quantile (0-1) of ``values``, nearest rank; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


class Session:
    """One Claude Code session's transcript (and a subagent's) growing line by line."""

    def __init__(self, root: Path, n: int, rng: random.Random) -> None:
        self.id = f"5e55{n:04d}-0000-4000-8000-{n:012d}"
        folder = root / "projects" / f"-home-u-sprint-agent{n:02d}"
        self.path = folder / f"{self.id}.jsonl"
        self.agent_path = folder / self.id / "subagents" / f"agent-a{n:04d}.jsonl"
        self.n, self.rng, self.count, self.clock = n, rng, 0, 1_775_000_000 + n * 7

    def _stamp(self) -> str:
        self.clock += self.rng.randint(1, 30)
        return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(self.clock))

    def _lines(self, k: int, agent: bool) -> str:
        out = []
        for _ in range(k):
            self.count += 1
            ts = self._stamp()
            msg = f"msg_{self.n:02d}_{self.count:05d}{'a' if agent else ''}"
            user = {"type": "user", "sessionId": self.id, "timestamp": ts,
                    "cwd": f"/home/u/sprint/agent{self.n:02d}", "isSidechain": agent,
                    "message": {"role": "user", "content": f"step {self.count}"}}
            reply = {"type": "assistant", "sessionId": self.id, "timestamp": ts,
                     "cwd": f"/home/u/sprint/agent{self.n:02d}", "isSidechain": agent,
                     "uuid": f"u-{msg}", "requestId": f"req_{msg}",
                     "message": {"id": msg, "role": "assistant",
                                 "model": "claude-haiku-4-5-20251001" if agent
                                 else "claude-opus-4-5-20251101",
                                 "content": [{"type": "text", "text": "ok"}],
                                 "usage": {"input_tokens": self.rng.randint(1, 900),
                                           "output_tokens": self.rng.randint(1, 2000),
                                           "cache_creation_input_tokens":
                                               self.rng.randint(0, 5000),
                                           "cache_read_input_tokens":
                                               self.rng.randint(0, 90000)}}}
            if agent:
                reply["agentId"] = user["agentId"] = f"a{self.n:04d}"
            out += [json.dumps(user), json.dumps(reply)]
        return "".join(line + "\n" for line in out)

    def grow(self, k: int, agent: bool = False) -> None:
        path = self.agent_path if agent else self.path
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(self._lines(k, agent))

    def hook(self, event: str) -> dict:
        value = {"session_id": self.id, "transcript_path": str(self.path),
                 "cwd": f"/home/u/sprint/agent{self.n:02d}", "hook_event_name": event}
        if event == "Stop":
            value["stop_hook_active"] = False
        elif event == "SubagentStop":
            value.update(stop_hook_active=False, agent_id=f"a{self.n:04d}",
                         agent_transcript_path=str(self.agent_path))
        else:
            value["reason"] = "other"
        return value


def workers(db: Path) -> list[int]:
    """The pids of drain workers on ``db`` (``python -m brainlab.live.hook_ingest DB``)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            args = Path("/proc", entry, "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if WORKER_MODULE.encode() in args and str(db).encode() in args:
            found.append(int(entry))
    return found


def timed_run(cmd, env, stdin: bytes | None = None, cwd=None) -> dict:
    """Run ``cmd``: its wall seconds, CPU seconds (its own, from ``wait4``), exit code."""
    start = time.monotonic()
    # its own session, as a hook of a Claude Code session running in its own terminal, or a
    # command typed in one: with the kernel's autogroup scheduling each session shares the
    # CPU as a whole, so 24 sessions' hooks run from this script's one session would share
    # one session's CPU
    process = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env, cwd=cwd,
                               start_new_session=True)
    try:
        process.stdin.write(stdin or b"")
        process.stdin.close()
    except BrokenPipeError:
        pass
    out = process.stdout.read()  # the commands here print little on stderr: read after
    err = process.stderr.read()
    _pid, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return {"seconds": time.monotonic() - start, "cpu": usage.ru_utime + usage.ru_stime,
            "rc": process.returncode, "quiet": not out and not err,
            "stderr": err[-300:].decode("utf-8", "replace")}


def run_version(label: str, code: Path, work: Path, args) -> dict:
    """The load on ``code``'s brainlab in ``work``; its figures."""
    shutil.rmtree(work, ignore_errors=True)
    claude, cache, home = work / "claude", work / "cache", work / "home"
    for folder in (claude, cache, home):
        folder.mkdir(parents=True)
    db = work / "store.duckdb"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("BRAINLAB_") and k != "PYTHONPATH"}
    env.update(BRAINLAB_CACHE_DIR=str(cache), HOME=str(home), CLAUDE_CONFIG_DIR=str(claude),
               PYTHONPATH=str(code))
    shell_env = {k: v for k, v in env.items() if k != "PYTHONPATH"}  # the launcher finds its own
    script = str(Path(sys.executable).with_name("brainlab"))
    rng = random.Random(args.seed)
    sessions = [Session(claude, n, random.Random(args.seed * 1000 + n))
                for n in range(args.sessions)]
    for session in sessions:
        session.grow(20)
    settings = work / "settings.json"
    settings.write_text("{}")
    for cmd in ([script, "hooks", "install", "--settings", str(settings), "--db", str(db)],
                [script, "ingest", "claude", "--db", str(db)]):
        done = subprocess.run(cmd, env=env, capture_output=True, cwd=work, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{label}: {' '.join(cmd[1:3])} failed: {done.stderr[-2000:]}")
    installed = json.loads(settings.read_text())["hooks"]["Stop"][0]["hooks"][0]["command"]
    hooks: list[dict] = []
    reads: list[dict] = []
    ingests: list[dict] = []
    kills, peak = [0], [0]
    stop = threading.Event()
    end = time.monotonic() + args.seconds
    load_start = load_average()

    def fire(session: Session, event: str) -> None:
        data = json.dumps(session.hook(event)).encode()
        via = "launcher" if session.n % 2 == 0 else "console"
        cmd = (["sh", "-c", installed] if via == "launcher"
               else [script, "hook", "ingest", "--db", str(db)])
        result = timed_run(cmd, shell_env if via == "launcher" else env, data, work)
        hooks.append({**result, "event": event, "via": via})

    def drive(session: Session) -> None:
        srng = random.Random(args.seed * 7919 + session.n)
        while time.monotonic() < end:
            time.sleep(srng.uniform(2, 8))
            if time.monotonic() >= end:
                break
            session.grow(srng.randint(1, 4))
            if srng.random() < 0.25:
                session.grow(srng.randint(1, 3), agent=True)
                fire(session, "SubagentStop")
            else:
                fire(session, "Stop")

    def every(low: float, high: float, cmd, into: list) -> None:
        prng = random.Random(rng.random())
        while not stop.wait(prng.uniform(low, high)):
            into.append(timed_run(cmd, env, None, work))

    def killer() -> None:
        krng = random.Random(args.seed + 1)
        while not stop.wait(krng.uniform(1, 4)):
            pids = workers(db)
            if pids:
                try:
                    os.kill(krng.choice(pids), signal.SIGKILL)
                    kills[0] += 1
                except ProcessLookupError:
                    pass

    def sampler() -> None:
        while not stop.wait(0.1):
            peak[0] = max(peak[0], len(workers(db)))

    drivers = [threading.Thread(target=drive, args=(s,)) for s in sessions]
    beside = [threading.Thread(target=every, args=(10, 20, [script, "usage", "daily", "--db",
                                                           str(db)], reads)),
              threading.Thread(target=every, args=(15, 25, [script, "ingest", "claude", "--db",
                                                           str(db)], ingests)),
              threading.Thread(target=killer)]
    watch = threading.Thread(target=sampler)
    for thread in [*drivers, *beside, watch]:
        thread.start()
    for thread in drivers:
        thread.join()
    stop.set()
    for thread in beside:
        thread.join()
    ends = [threading.Thread(target=fire, args=(s, "SessionEnd")) for s in sessions]
    for thread in ends:
        thread.start()
    for thread in ends:
        thread.join()
    settle_start = time.monotonic()
    live = cache / "live"
    while time.monotonic() - settle_start < 180:
        spooled = [p for p in live.glob("spool.jsonl*")] if live.is_dir() else []
        if not workers(db) and not spooled:
            break
        peak[0] = max(peak[0], len(workers(db)))
        time.sleep(0.2)
    settled = time.monotonic() - settle_start
    spool_bytes = sum(p.stat().st_size for p in live.glob("spool.jsonl*")) \
        if live.is_dir() else 0
    load_end = load_average()
    # the same commands on the store nobody else holds now, for scale on this machine
    alone_read = timed_run([script, "usage", "daily", "--db", str(db)], env, None, work)
    for session in sessions[:3]:
        session.grow(2)
    alone_ingest = timed_run([script, "ingest", "claude", "--db", str(db)], env, None, work)
    alone_hook = timed_run([script, "hook", "ingest", "--db", str(db)], env,
                           json.dumps(sessions[0].hook("Stop")).encode(), work)
    while workers(db):
        time.sleep(0.2)
    fresh = work / "fresh.duckdb"
    done = subprocess.run([script, "ingest", "claude", "--db", str(fresh)], env=env,
                          capture_output=True, cwd=work, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{label}: the fresh ingest failed: {done.stderr[-2000:]}")
    done = subprocess.run([sys.executable, "-c", SUMMARY_SCRIPT, str(db), str(fresh)],
                          env=env, capture_output=True, cwd=work, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{label}: summarising the stores failed: {done.stderr[-2000:]}")
    both = json.loads(done.stdout)
    names = sorted(set(both["live"]) | set(both["fresh"]))
    differ = [n for n in names if both["live"].get(n, [None])[:2] != both["fresh"].get(n, [None])[:2]]
    hook_s = [h["seconds"] for h in hooks]
    read_ok = sum(r["rc"] == 0 and r["seconds"] <= SERVED_S for r in reads)
    ingest_ok = sum(r["rc"] == 0 and r["seconds"] <= SERVED_S for r in ingests)
    return {
        "label": label, "hooks": len(hooks),
        "hooks_exit_0_quiet": sum(h["rc"] == 0 and h["quiet"] for h in hooks),
        "hook_p50_s": percentile(hook_s, 0.5), "hook_p95_s": percentile(hook_s, 0.95),
        "hook_max_s": max(hook_s, default=None),
        "hook_cpu_p50_s": percentile([h["cpu"] for h in hooks], 0.5),
        "hook_cpu_p95_s": percentile([h["cpu"] for h in hooks], 0.95),
        "alone_s": {"hook": alone_hook["seconds"], "read": alone_read["seconds"],
                    "ingest": alone_ingest["seconds"]},
        "hook_p95_by_via": {via: percentile([h["seconds"] for h in hooks if h["via"] == via], 0.95)
                            for via in ("launcher", "console")},
        "reads_served": read_ok, "reads": len(reads),
        "read_s": [round(r["seconds"], 2) for r in reads],
        "ingests_served": ingest_ok, "ingests": len(ingests),
        "reads_got_in": sum(r["rc"] == 0 for r in reads),
        "ingests_got_in": sum(r["rc"] == 0 for r in ingests),
        "ingest_s": [round(r["seconds"], 2) for r in ingests],
        "refusals": sorted({r["stderr"].strip().splitlines()[-1][:160] for r in reads + ingests
                            if r["rc"] != 0 and r["stderr"].strip()}),
        "peak_workers": peak[0], "kills": kills[0], "spool_bytes_left": spool_bytes,
        "settle_s": settled, "relations": len(names), "relations_differ": differ,
        "relations_differ_beyond_bookkeeping": [n for n in differ if n not in BOOKKEEPING],
        "load_start": load_start, "load_end": load_end,
    }


def show(result: dict) -> None:
    def sec(value):
        return "-" if value is None else f"{value:.2f} s"

    print(f"\n{result['label']}: load average {result['load_start']} at the start,"
          f" {result['load_end']} at the end")
    print(f"  hooks: {result['hooks']} fired, {result['hooks_exit_0_quiet']} exit 0 and silent;"
          f" return p50 {sec(result['hook_p50_s'])}, p95 {sec(result['hook_p95_s'])},"
          f" max {sec(result['hook_max_s'])} (p95 via the launcher"
          f" {sec(result['hook_p95_by_via']['launcher'])}, via the console script"
          f" {sec(result['hook_p95_by_via']['console'])}); CPU per hook p50"
          f" {sec(result['hook_cpu_p50_s'])}, p95 {sec(result['hook_cpu_p95_s'])}")
    alone = result["alone_s"]
    print(f"  alone afterwards (nothing else on the store): a hook {alone['hook']:.2f} s,"
          f" usage daily {alone['read']:.2f} s, ingest claude {alone['ingest']:.2f} s")
    print(f"  reads (usage daily) served within {SERVED_S:g} s: {result['reads_served']} of"
          f" {result['reads']}; {result['reads_got_in']} got in (exit 0: the store had within"
          f" the command's lock wait) (seconds: {result['read_s']})")
    print(f"  manual `ingest claude` served within {SERVED_S:g} s: {result['ingests_served']} of"
          f" {result['ingests']}; {result['ingests_got_in']} got in (seconds:"
          f" {result['ingest_s']})")
    for line in result["refusals"]:
        print(f"    refused: {line}")
    print(f"  drain workers: peak {result['peak_workers']} at once; {result['kills']} killed")
    print(f"  spool left: {result['spool_bytes_left']} bytes (workers settled in"
          f" {result['settle_s']:.1f} s)")
    beyond = result["relations_differ_beyond_bookkeeping"]
    print(f"  store vs a fresh ingest: {result['relations']} relations,"
          f" {len(result['relations_differ'])} differ"
          + (f" ({', '.join(result['relations_differ'])})" if result["relations_differ"] else "")
          + f"; beyond the per-read bookkeeping ({', '.join(BOOKKEEPING)}): {len(beyond)}"
          + (f" ({', '.join(beyond)})" if beyond else ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", default="", help="also this git revision's code, first")
    parser.add_argument("--sessions", type=int, default=24)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--quick", action="store_true", help="6 sessions for 25 s")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/brainlab-live-load"))
    parser.add_argument("--seed", type=int, default=46)
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.seconds = 6, 25.0
    args.dir.mkdir(parents=True, exist_ok=True)
    versions = {}
    if args.before:
        shutil.rmtree(args.dir / "before-code", ignore_errors=True)
        versions[f"before ({args.before})"] = checkout(args.before, args.dir / "before-code")
    versions["this checkout"] = REPO
    print(f"{args.sessions} sessions for {args.seconds:g} s per version; load average"
          f" {load_average()}", flush=True)
    results = []
    for n, (label, code) in enumerate(versions.items()):
        results.append(run_version(label, code, args.dir / f"run-{n}", args))
        show(results[-1])
    emit("live_load", sessions=args.sessions, seconds=args.seconds,
         versions={r["label"]: {k: v for k, v in r.items()
                                if k not in ("label", "read_s", "ingest_s", "refusals")}
                   for r in results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
