"""Benchmark: regulator replay of 100,000 tickets, 1,000 bootstrap draws, three rule sets.

Target: under 60 s on this machine for the replay itself (journals compiled once, outside the
timed part, and that time is printed too). Baseline: a straightforward Python replay, one
ticket and one draw at a time (scalar loop over checkpoints, one donor drawn per continued
ticket, the same semantics), timed on a subset and extrapolated linearly to the full job.
The comparison stands for what the vectorised design (compiled arrays, walkers advanced
together with numpy, bootstrap as resample-count matrices) buys over the obvious
implementation of the same rules.

Issue 41: ``simulate regulator`` now also takes the paired differences to the recorded rules
and the back-test (the recorded rules' replay against each ticket's recorded figures); both
are timed after the replay in the same run and printed as a ratio to the replay alone
(target: at most 1.5x).
Run: PYTHONPATH=$PWD python benchmarks/bench_regulator.py [--tickets 100000] [--draws 1000]
"""

from __future__ import annotations

import argparse
import random
import time
from datetime import datetime

import numpy as np
import pandas as pd
from benchkit import emit

from brainlab.sim.circuit_arrays import (
    LOOPS,
    OUTCOMES,
    RANK_SLOTS,
    SESSIONS,
    TOKENS,
    WAKEUPS,
    compile_journals,
)
from brainlab.sim.regulator import donor_pools, replay, static_fires
from brainlab.sim.regulator_checks import backtest_rows
from brainlab.spec.regulator import RegulatorRules, parse_rules
from brainlab.synth.circuits import generate_tickets

RULES = ["default", "max_relance_same_stop=2", "lenient"]


def naive_ticket(c, t, rules, recorded, fr, fd, pools, rng):
    """One ticket, one draw: (sessions, wake-ups, outcome), plain Python."""
    acc_s = acc_w = 0.0
    base_s = base_w = 0.0
    j, end = int(c.cp_start[t]), int(c.cp_start[t + 1])
    chain0, delta, splices = -1, 0, 0
    while True:
        if j >= end:
            return acc_s + c.total[t, 0] - base_s, acc_w + c.total[t, 2] - base_w, int(c.outcome[t])
        rank = int(c.cp_rank[j]) + (delta if c.cp_chain[j] == chain0 else 0)
        review = bool(c.cp_is_review[j])

        def rank_fire(r, rank=rank, review=review, j=j):
            if review:
                return rank >= r.max_reviews
            fire = rank > r.max_relance_same_stop
            return fire or (r.escalate_without_new_fact and rank >= 2 and not c.cp_new_fact[j])

        r_arr, d_arr = fr.arrival[j] or rank_fire(rules), fd.arrival[j] or rank_fire(recorded)
        f_r, f_d = r_arr or fr.handling[j], d_arr or fd.handling[j]
        stopped = bool(c.cp_stopped[j])
        if f_r and not f_d and not stopped:
            pos = c.cp_before[j] if r_arr else fr.handling_at[j]
            ending = r_arr and (review or rank > rules.max_relance_same_stop)
            return acc_s + pos[0] - base_s, acc_w + pos[2] - base_w + 1, 1 if ending else 2
        if stopped and f_d and not f_r:
            acc_s += c.cp_before[j, 0] - base_s
            acc_w += c.cp_before[j, 2] - base_w
            key = pools.resolved[int(c.cp_slot[j]) * RANK_SLOTS + min(rank, RANK_SLOTS - 1)]
            k = pools.donors[pools.start[key] + int(rng.random() * pools.count[key])]
            t, j, end = int(c.cp_ticket[k]), int(k), int(c.cp_start[c.cp_ticket[k] + 1])
            base_s, base_w = c.cp_before[k, 0], c.cp_before[k, 2]
            chain0, delta = int(c.cp_chain[k]), rank - int(c.cp_rank[k])
            splices += 1
            if splices > 50:
                return acc_s, acc_w + 1, 2
            continue
        if stopped and f_r and f_d:
            pos_r = c.cp_before[j] if r_arr else fr.handling_at[j]
            pos_d = c.cp_before[j] if d_arr else fd.handling_at[j]
            acc_s -= max(pos_d[0] - pos_r[0], 0.0)
        j += 1


def naive(c, specs, draws, subset, seed):
    """Per draw: resample tickets, replay each in Python; return mean sessions per draw."""
    rng = random.Random(seed)
    recorded = RegulatorRules()
    pools = donor_pools(c)
    out = {}
    for spec in specs:
        rules = parse_rules(spec)
        fr, fd = static_fires(c, rules), static_fires(c, recorded)
        means = []
        for _ in range(draws):
            total = 0.0
            for _ in range(subset):
                t = rng.randrange(c.n)
                total += naive_ticket(c, t, rules, recorded, fr, fd, pools, rng)[0]
            means.append(total / subset)
        out[spec] = float(np.mean(means))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tickets", type=int, default=100_000)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    t0 = time.perf_counter()
    tickets = generate_tickets(random.Random(args.seed), datetime(2025, 1, 6),
                               datetime(2026, 12, 28), args.tickets)
    events = [e for t in tickets for e in t]
    frame = pd.DataFrame(events)  # what load_journals gets from DuckDB
    t1 = time.perf_counter()
    compiled = compile_journals(frame)
    t2 = time.perf_counter()
    print(f"synthetic journals: {args.tickets:,} tickets, {len(events):,} events"
          f" ({t1 - t0:.1f} s to generate and frame, not timed)")
    print(f"compile once: {t2 - t1:.1f} s ({len(compiled.cp_ticket):,} checkpoints,"
          f" {len(compiled.he_cp):,} handling events)")

    t3 = time.perf_counter()
    result = replay(compiled, RULES, draws=args.draws, seed=args.seed)
    t4 = time.perf_counter()
    replay_s = t4 - t3
    print(f"vectorised replay: {args.draws:,} draws x {len(RULES)} rule sets:"
          f" {replay_s:.1f} s (target < 60 s; compile + replay {t4 - t1:.1f} s)")
    t5 = time.perf_counter()
    result.compare("default")
    # what the tickets view records per ticket (here from the compiled journals' totals)
    tickets = pd.DataFrame({
        "ticket": compiled.tickets, "wakeups": compiled.total[:, WAKEUPS],
        "loop_sessions": compiled.total[:, LOOPS], "sessions": compiled.total[:, SESSIONS],
        "tokens": compiled.total[:, TOKENS],
        "outcome": np.array(OUTCOMES, dtype=object)[compiled.outcome]})
    checked = backtest_rows(result, tickets)
    checks_s = time.perf_counter() - t5
    print(f"paired differences + back-test: {checks_s:.1f} s; replay with them"
          f" {replay_s + checks_s:.1f} s = x{(replay_s + checks_s) / replay_s:.2f} the replay"
          f" alone (target <= 1.5x); back-test covered {int(checked['covered'].sum())} of"
          f" {len(checked)} figures")
    cont = result.per_ticket.groupby("rules", sort=False).continued.mean()
    for row in result.summary.itertuples(index=False):
        print(f"  {row.rules:<26} sessions/ticket {row.sessions_per_ticket:7.3f}"
              f" [{row.sessions_per_ticket_lo:.3f}, {row.sessions_per_ticket_hi:.3f}]"
              f"  wake-ups/ticket {row.wakeups_per_ticket:.4f}"
              f"  continued {cont[row.rules]:.1%}")

    subset, draws = 2000, 5
    t7 = time.perf_counter()
    naive_means = naive(compiled, RULES, draws, subset, args.seed)
    t6 = time.perf_counter()
    per_ticket_draw = (t6 - t7) / (subset * draws * len(RULES))
    full = per_ticket_draw * args.tickets * args.draws * len(RULES)
    print(f"naive Python baseline: {subset:,} tickets x {draws} draws x {len(RULES)} rule sets"
          f" in {t6 - t7:.1f} s = {per_ticket_draw * 1e6:.1f} us per ticket-draw;"
          f" extrapolated to the full job: {full:,.0f} s ({full / 3600:.1f} h)")
    print(f"speed-up of the vectorised replay over the baseline: {full / replay_s:,.0f}x")
    for spec, value in naive_means.items():
        est = result.summary.set_index("rules").loc[spec, "sessions_per_ticket"]
        print(f"  check {spec:<26} naive sessions/ticket {value:.3f} vs vectorised {est:.3f}"
              " (naive: few draws on a small resample, so only roughly equal)")
    emit("regulator", tickets=args.tickets, draws=args.draws, compile_s=t2 - t1,
         replay_s=replay_s, checks_s=checks_s, checked_ratio=(replay_s + checks_s) / replay_s,
         baseline_extrapolated_s=full, speedup=full / replay_s)


if __name__ == "__main__":
    main()
