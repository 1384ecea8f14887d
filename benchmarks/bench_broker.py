"""Replay one million agent-sprints under four broker policies; compare with a per-row baseline.

Run: PYTHONPATH=. python benchmarks/bench_broker.py [--rows 1000000] [--baseline-rows 20000]
     [--repeat 3] [--before REV] [--parts]

Prints, for each of ``--repeat`` runs, the time to encode the sprint frames (SprintSet.build)
and the vectorised replay time for protocol, greedy-domain, on-demand and history (per-agent
rows, per-sprint breath, per-file counts, per-policy summary), then their range; the same
replay as ``simulate broker`` runs it since issue 41 (the recorded baseline added, paired
bootstrap intervals over sprints, the back-test against printed metrics) timed in the same
run, and its ratio to the replay alone (target: at most 1.5x); with ``--before REV``, the
CPU time of both under REV's code and this checkout's (child processes, alternating); and the
straightforward per-row Python replay (brainlab.sim.broker_reference) on a subset,
extrapolated linearly to the full size (it is not run at full size).

Memory decides much of a ratio here: a replay whose arrays land on pages a freed one left
costs user time only, one that faults fresh pages in (zeroed, huge pages compacted by the
kernel) pays as much again in system time, and how much moves with the machine. So every
timed run of this process reuses memory (a warm-up first, the replay alone's result freed
before the checked replay), and the ``--before`` children time both ways: cold, as a fresh
process runs them (both fault fresh pages), with the system time's share, then warm.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from benchkit import emit

from brainlab.sim import broker_checks
from brainlab.sim.broker import replay
from brainlab.sim.broker_reference import replay_reference
from brainlab.sim.sprintset import SprintSet

POLICIES = ["protocol", "greedy-domain", "on-demand", "history:k=3"]
ROLES = np.array(["developer", "testwriter", "reviewer"], dtype=object)


def make_frames(n_rows: int, seed: int = 1):
    """Synthetic agent-sprints: 3 agents per sprint, 20 projects x 8 domains x 2-5 files."""
    rng = np.random.default_rng(seed)
    n_sprints = n_rows // 3
    projects = np.array([f"p{i:02d}" for i in range(20)], dtype=object)
    contract_rows = []
    for p in projects:
        for d in range(8):
            for i in range(int(rng.integers(2, 6))):
                contract_rows.append((p, f"d{d}", f"src/d{d}/f{i}.ts", i, False))
    contracts = pd.DataFrame(contract_rows, columns=["project", "domain", "path", "position",
                                                     "inferred"])
    sprint_project = projects[rng.integers(0, 20, n_sprints)]
    sprint_domain = np.array([f"d{d}" for d in range(8)], dtype=object)[
        rng.integers(0, 8, n_sprints)]
    start = pd.Timestamp("2024-01-01") + pd.to_timedelta(np.arange(n_sprints) * 600, unit="s")
    sprint_ids = np.array([f"s{i}" for i in range(n_sprints)], dtype=object)
    agents = pd.DataFrame({
        "sprint_id": np.repeat(sprint_ids, 3), "project": np.repeat(sprint_project, 3),
        "domain": np.repeat(sprint_domain, 3), "agent": np.tile(ROLES, n_sprints),
        "session_id": None, "started_at": np.repeat(start, 3),
        "ended_at": np.repeat(start + pd.Timedelta(minutes=50), 3),
        "open_todos": None, "loaded": None, "released": None,
        "seq": np.arange(3 * n_sprints),
    })
    # the broker's recorded source map: the first file of the domain (the back-test replays it)
    first = "src/" + agents["domain"].to_numpy(object) + "/f0.ts"
    agents["loaded"] = [[p] for p in first]
    todo = rng.random(n_sprints) < 0.3
    agents["open_todos"] = np.where(np.repeat(todo, 3) & (agents["agent"] == "developer"),
                                    agents["domain"], None)
    agents["open_todos"] = [[x] if x else [] for x in agents["open_todos"].to_numpy(object)]
    # each agent references 1-4 files of its domain (f0..f3), developers edit them
    k = rng.integers(1, 5, len(agents))
    row = np.repeat(np.arange(len(agents)), k)
    idx = np.arange(len(row)) - np.repeat(np.cumsum(k) - k, k)
    refs = pd.DataFrame({
        "sprint_id": agents["sprint_id"].to_numpy()[row], "agent": agents["agent"].to_numpy()[row],
        "path": ("src/" + agents["domain"].to_numpy()[row] + "/f" + idx.astype(str) + ".ts"),
        "kind": np.where(agents["agent"].to_numpy()[row] == "developer", "edit", "read"),
    })
    return agents, refs, contracts


DRAWS = broker_checks.DEFAULT_DRAWS

# --before REV: the same replay and checked replay timed in a child process running that
# revision's brainlab (benchkit.checkout) beside one running this checkout's, round after
# round, so a busy machine slows both alike. The child prints one JSON line per round.
# Cold: as a fresh process runs them (the replay's result kept while the checked replay
# runs, so both fault their pages in fresh). Warm: once more after both were freed, so both
# reuse the memory the first pass left (CPU of the work, less the kernel's page faults).
CHILD = """
import json, os, sys
from bench_broker import POLICIES, checked_replay, make_frames
from brainlab.sim import broker_checks
from brainlab.sim.broker import replay
from brainlab.sim.sprintset import SprintSet

def cpu():
    t = os.times()
    return t.user, t.system

def spent(a, b):
    return b[0] - a[0] + b[1] - a[1], b[1] - a[1]

agents, refs, contracts = make_frames(int(sys.argv[1]))
for _ in range(int(sys.argv[2])):
    result = checked = None
    ss = SprintSet.build(agents, refs, contracts)
    ss.printed = broker_checks.sprint_breath(ss).drop(columns="known")
    c0 = cpu(); result = replay(ss, POLICIES); c1 = cpu()
    checked = checked_replay(ss); c2 = cpu()
    result = checked = None
    c3 = cpu(); result = replay(ss, POLICIES); c4 = cpu()
    result = None
    c5 = cpu(); checked = checked_replay(ss); c6 = cpu()
    (r, r_sys), (c, c_sys) = spent(c0, c1), spent(c1, c2)
    print(json.dumps({"replay": r, "checked": c, "replay_sys": r_sys, "checked_sys": c_sys,
                      "warm_replay": spent(c3, c4)[0], "warm_checked": spent(c5, c6)[0]}),
          flush=True)
"""


# --parts: the user CPU of each part of the checked replay, best of ``--repeat`` in one
# process on reused memory (the work, without the page faults' spread), under REV's code
# (with --before) and this checkout's.
PARTS = """
import json, os, sys
from bench_broker import DRAWS, POLICIES, make_frames
from brainlab.sim import broker_checks
from brainlab.sim.broker import replay
from brainlab.sim.sprintset import SprintSet

def best(func):
    out = []
    for _ in range(int(sys.argv[2])):
        t = os.times(); result = func(); out.append(os.times().user - t.user); result = None
    return min(out)

ss = SprintSet.build(*make_frames(int(sys.argv[1])))
ss.printed = broker_checks.sprint_breath(ss).drop(columns="known")
replay(ss, POLICIES)
alone = best(lambda: replay(ss, POLICIES))
five = best(lambda: replay(ss, [*POLICIES, "recorded"]))
result = replay(ss, [*POLICIES, "recorded"])
print(json.dumps({"replay": alone, "recorded": five - alone,
                  "intervals": best(lambda: broker_checks.intervals(result, draws=DRAWS)),
                  "backtest": best(lambda: broker_checks.backtest(ss, draws=DRAWS,
                                                                  result=result))}))
"""


def parts(rev: str | None, rows: int, repeat: int) -> None:
    """Print the user CPU of the checked replay's parts under ``rev`` and this checkout."""
    from benchkit import REPO, checkout

    with tempfile.TemporaryDirectory() as tmp:
        sides = ([("before", rev, checkout(rev, Path(tmp)))] if rev else []) \
            + [("after", "this checkout", REPO)]
        for side, name, code in sides:
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(
                [str(code), str(Path(__file__).resolve().parent)]))
            done = subprocess.run([sys.executable, "-c", PARTS, str(rows), str(repeat)],
                                  env=env, capture_output=True, text=True, check=True)
            p = json.loads(done.stdout.splitlines()[-1])
            extra = p["recorded"] + p["intervals"] + p["backtest"]
            print(f"{side:6s} ({name}): user CPU, best of {repeat}: replay alone "
                  f"{p['replay']:.2f} s; checked replay's extra work {extra:.2f} s (recorded "
                  f"policy {p['recorded']:.2f} s, intervals {p['intervals']:.2f} s, back-test "
                  f"{p['backtest']:.2f} s): x{(p['replay'] + extra) / p['replay']:.2f}"
                  f" (load average {os.getloadavg()[0]:.1f})")


def child_runs(code: Path, rows: int, rounds: int) -> list[dict]:
    """CPU seconds (user + system) of the replay alone and the checked replay, per round."""
    # the revision's brainlab, then benchmarks/ (this bench's frames and checked replay)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(code),
                                                       str(Path(__file__).resolve().parent)]))
    done = subprocess.run([sys.executable, "-c", CHILD, str(rows), str(rounds)],
                          env=env, capture_output=True, text=True, check=True)
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def before_after(rev: str, rows: int, repeat: int) -> dict:
    """The checked replay's CPU time and ratio under ``rev`` and this checkout, alternating."""
    from benchkit import REPO, checkout

    runs: dict[str, list[dict]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as tmp:
        code = {"before": checkout(rev, Path(tmp)), "after": REPO}
        for _ in range(repeat):
            for side in ("before", "after"):
                runs[side] += child_runs(code[side], rows, 1)
    out = {}
    for side, values in runs.items():
        replay_cpu = statistics.median(r["replay"] for r in values)
        checked_cpu = statistics.median(r["checked"] for r in values)
        ratio = statistics.median(r["checked"] / r["replay"] for r in values)
        sys_share = statistics.median((r["replay_sys"] + r["checked_sys"])
                                      / (r["replay"] + r["checked"]) for r in values)
        warm = statistics.median(r["warm_checked"] / r["warm_replay"] for r in values)
        warm_replay = statistics.median(r["warm_replay"] for r in values)
        warm_checked = statistics.median(r["warm_checked"] for r in values)
        out[side] = (replay_cpu, checked_cpu, ratio, warm)
        print(f"{side:6s} ({rev if side == 'before' else 'this checkout'}): CPU of the replay"
              f" alone {replay_cpu:5.2f} s, of simulate broker's checked replay"
              f" {checked_cpu:5.2f} s, ratio x{ratio:.2f} ({sys_share:.0%} of it system time:"
              f" page faults); warm, memory reused: {warm_replay:.2f} s and"
              f" {warm_checked:.2f} s, ratio x{warm:.2f} (medians of {len(values)} rounds,"
              f" load average {os.getloadavg()[0]:.1f})")
    return out


def checked_replay(ss: SprintSet) -> dict:
    """What ``simulate broker`` computes: the replay with its baseline, intervals, back-test."""
    result = replay(ss, [*POLICIES, "recorded"])
    iv = broker_checks.intervals(result, draws=DRAWS, seed=0)
    bt = broker_checks.backtest(ss, draws=DRAWS, seed=0, result=result)
    tokens = iv.table[iv.table["figure"] == "tokens"]
    width = float(((tokens["high"] - tokens["low"]) / tokens["value"]).median())
    return {"intervals": f"tokens +-{width / 2:.2%} (median half-width)",
            "covered": int(bt["covered"].sum())}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--baseline-rows", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (the machine is shared)")
    parser.add_argument("--before", metavar="REV", help="also time REV's code (a git revision)"
                        " and this checkout in child processes, round after round")
    parser.add_argument("--parts", action="store_true", help="only the user CPU of the checked"
                        " replay's parts (with --before: under REV too), best of --repeat")
    args = parser.parse_args()
    if args.parts:
        parts(args.before, args.rows, args.repeat)
        return
    agents, refs, contracts = make_frames(args.rows)
    print(f"agent-sprints: {len(agents):,}  references: {len(refs):,}  policies: {POLICIES}")
    runs, cpu_ratios = [], []
    # warm-up: every timed replay below then reuses memory a previous one freed (the replay
    # alone's result is freed before the checked replay, or it would fault fresh pages in)
    replay(SprintSet.build(agents, refs, contracts), POLICIES)
    for run in range(args.repeat):
        result = None  # free the previous run's frames first
        t0 = time.perf_counter()
        ss = SprintSet.build(agents, refs, contracts)
        t_build = time.perf_counter() - t0
        # what the broker printed (an input, read from the store by simulate broker): what
        # its recorded maps give, so the back-test covers it
        ss.printed = broker_checks.sprint_breath(ss).drop(columns="known")
        t0, c0 = time.perf_counter(), time.process_time()
        result = replay(ss, POLICIES)
        t_replay = time.perf_counter() - t0
        cpu_replay = time.process_time() - c0
        summary, n_rows = result.summary, len(result.rows)
        result = None
        t0, c0 = time.perf_counter(), time.process_time()
        checked = checked_replay(ss)
        t_checked = time.perf_counter() - t0
        cpu_checked = time.process_time() - c0
        runs.append((t_build, t_replay, t_build + t_replay, t_checked))
        cpu_ratios.append(cpu_checked / cpu_replay)
        print(f"run {run + 1}: encode (SprintSet.build) {t_build:5.2f} s + replay, 4 policies "
              f"{t_replay:5.2f} s = {t_build + t_replay:5.2f} s; with recorded, intervals and "
              f"back-test {t_checked:5.2f} s (x{t_checked / t_replay:.2f} the replay alone;"
              f" CPU time x{cpu_checked / cpu_replay:.2f}, which a shared machine disturbs less)")
    t_build, t_replay, t_total, t_checked = (sorted(x)[len(x) // 2]
                                             for x in zip(*runs, strict=True))
    print(f"simulate broker's replay (4 policies + recorded, {DRAWS} draws, back-test): "
          f"median {t_checked:.2f} s = x{t_checked / t_replay:.2f} the replay alone "
          f"(target <= 1.5x); intervals: {checked['intervals']}, back-test covered: "
          f"{checked['covered']}")
    after = sorted(cpu_ratios)[len(cpu_ratios) // 2]
    print(f"CPU time of simulate broker's replay over the replay alone, median: x{after:.2f}"
          f" (target <= 1.5x)")
    compared = before_after(args.before, args.rows, args.repeat) if args.before else None

    def spread(i: int) -> str:
        values = [r[i] for r in runs]
        return f"{min(values):6.2f} - {max(values):6.2f} s"

    print(f"encode (SprintSet.build):      {spread(0)}")
    print(f"vectorised replay, 4 policies: {spread(1)}  "
          f"({n_rows:,} rows, {t_replay / n_rows * 1e6:.2f} us/row, median)")
    print(f"total:                         {spread(2)}  (target < 20 s; median {t_total:.2f} s)")
    print(summary[["policy", "tokens_total", "miss_rate", "waste_rate",
                   "alerts_fired"]].to_string(index=False))

    sub = args.baseline_rows
    a_sub = agents.iloc[:sub]
    r_sub = refs[refs["sprint_id"].isin(set(a_sub["sprint_id"]))]
    ss_sub = SprintSet.build(a_sub, r_sub, contracts)
    t0 = time.perf_counter()
    replay_reference(ss_sub, POLICIES)
    t_ref = time.perf_counter() - t0
    t0 = time.perf_counter()
    replay(ss_sub, POLICIES)
    t_fast_sub = time.perf_counter() - t0
    scale = len(agents) / len(a_sub)
    print(f"per-row baseline on {len(a_sub):,} rows: {t_ref:.2f} s "
          f"(vectorised on the same subset: {t_fast_sub:.2f} s, x{t_ref / t_fast_sub:.0f})")
    print(f"per-row baseline extrapolated linearly to {len(agents):,}: {t_ref * scale:.0f} s "
          f"(not run at full size) -> vectorised encode + replay (median) is "
          f"x{t_ref * scale / t_total:.0f} faster, replay alone x{t_ref * scale / t_replay:.0f}")
    emit("broker", rows=len(agents), encode_s=t_build, replay_s=t_replay, total_s=t_total,
         checked_replay_s=t_checked, checked_ratio=t_checked / t_replay,
         checked_cpu_ratio=after,
         **({f"{side}_{name}": value for side, figures in compared.items()
             for name, value in zip(("replay_cpu_s", "checked_cpu_s", "checked_cpu_ratio",
                                     "warm_checked_cpu_ratio"),
                                    figures, strict=True)} if compared else {}),
         baseline_extrapolated_s=t_ref * scale, speedup=t_ref * scale / t_total)


if __name__ == "__main__":
    main()
