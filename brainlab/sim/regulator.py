"""Replay recorded ticket circuits under other regulator rule sets (SPEC §6.5, docs/regulator.md).

Each ticket is walked checkpoint by checkpoint (a stop, a rendered review; see
:mod:`brainlab.sim.circuit_arrays`). At each one, the rule set being replayed (``R``) and the
rules the journals were recorded under (``D``, the SPEC defaults) are both evaluated:

- **follow**: nothing differs; the walk takes the journal's next checkpoint.
- **cut**: ``R`` fires where the journal went on. The ticket stops there and lands on the
  supervisor (one wake-up); sessions and tokens after the firing event are saved.
- **continue**: the journal handed over here because ``D`` fired, and ``R`` does not fire.
  The walk draws a donor: a recorded checkpoint of the same stop code and relaunch rank that
  the circuit passed (bootstrap over tickets), and goes on with the donor's journal from there.

Results per rule set carry 90% percentile-bootstrap intervals over ``draws`` resamples of the
tickets, each resample with its own donor draws. Everything is seeded and vectorised.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from brainlab.common.errors import SimulationError
from brainlab.sim.circuit_arrays import (
    ADMISSION_REASONS,
    CODE_SLOTS,
    LOOPS,
    N_SLOTS,
    OUTCOMES,
    RANK_SLOTS,
    REVIEW_SLOT,
    SESSIONS,
    TOKENS,
    WAKEUPS,
    CompiledJournals,
    compile_journals,
    describe_not_replayed,
)
from brainlab.sim.output import write_frame  # noqa: F401  (the CLI writes --out with it)
from brainlab.spec.regulator import RegulatorRules, named_rule_sets

METRICS = ("wakeups_per_ticket", "loop_sessions_per_ticket", "integrated_share",
           "sessions_per_ticket", "tokens_per_ticket")
MAX_SPLICES = 50  # a walk spliced this many times is cut (escalated): no loop runs forever
DRAW_CHUNK = 50  # draws walked together (memory: chunk x continued tickets walkers)
INT, END, ESC = 0, 1, 2  # outcome indexes in OUTCOMES


@dataclass
class StaticFires:
    """What one rule set says at each checkpoint, apart from the rank rules."""

    arrival: np.ndarray  # (m) fires on arrival (regulator stops, reviews)
    handling: np.ndarray  # (m) fires during the handling (refusals, missing decisions, rounds)
    handling_at: np.ndarray  # (m, 4) running costs at the handling event that fires
    handling_order: np.ndarray  # (m) index of that handling event (earlier = smaller)


def static_fires(c: CompiledJournals, rules: RegulatorRules) -> StaticFires:
    """Evaluate the SPEC §6.5 limits that do not depend on the relaunch rank, per checkpoint."""
    m = len(c.cp_ticket)
    # SPEC §6.5 "the regulator rules on at most three stops" per arbitration (step, component).
    table_kinds = rules.table_kinds()
    kind_in_table = np.array([k in table_kinds for k in c.stop_kinds] + [False], dtype=bool)
    # A stop is bound for a regulator unless the table decides it (a table kind, or its
    # escalation of a stop back without a new fact), it is a question (18) or the circuit
    # ended on it; one sent to the supervisor over the limit was bound for a regulator too.
    code18 = c.cp_slot == CODE_SLOTS[18]
    ruled = ~c.cp_is_review & (
        (c.cp_by == 2) | ((c.cp_by == 3) & ~code18)
        | ((c.cp_by == 1) & ~kind_in_table[c.cp_kind] & ~c.cp_first_monte))
    reg_count = np.zeros(m, dtype=np.int64)
    idx = np.flatnonzero(ruled)
    if len(idx):
        grp = c.cp_group[idx]
        order = np.lexsort((idx, grp))
        g = grp[order]
        starts = np.r_[0, np.flatnonzero(np.diff(g)) + 1]
        counts = np.arange(len(g)) - np.repeat(starts, np.diff(np.r_[starts, len(g)])) + 1
        reg_count[idx[order]] = counts
    arrival = ruled & (reg_count > rules.max_regulator_stops)

    # SPEC §6.5 refusals, missing decisions, questioning rounds: count within the stop (rounds
    # within one decision) and fire at the first event over the limit.
    enabled = rules.enabled_refusal_reasons()
    # a refusal whose reason was not written counts under every rule set; an unknown one never
    reason_on = np.array([r in enabled for r in ADMISSION_REASONS] + [True, False], dtype=bool)
    he_type = c.he_type
    counted = np.where(he_type == 0, reason_on[c.he_reason], True)
    limit = np.where(he_type == 0, rules.max_refusals,
                     np.where(he_type == 1, rules.max_fiche_reasks, rules.max_question_rounds - 1))
    group = (c.he_cp * 3 + he_type) * 64 + np.where(he_type == 2, np.minimum(c.he_decision, 63), 0)
    fire_he = np.zeros(len(he_type), dtype=bool)
    if len(he_type):
        order = np.lexsort((np.arange(len(group)), group))
        g, cnt = group[order], counted[order].astype(np.int64)
        run = np.cumsum(cnt)
        starts = np.r_[0, np.flatnonzero(np.diff(g)) + 1]
        before = np.repeat(run[starts] - cnt[starts], np.diff(np.r_[starts, len(g)]))
        fire_he[order] = counted[order] & ((run - before) > limit[order])
    handling = np.zeros(m, dtype=bool)
    handling_order = np.full(m, np.iinfo(np.int64).max, dtype=np.int64)
    fired = np.flatnonzero(fire_he)
    np.minimum.at(handling_order, c.he_cp[fired], fired)
    handling[c.he_cp[fired]] = True
    handling_at = np.zeros((m, 4))
    handling_at[handling] = c.he_at[handling_order[handling]]
    return StaticFires(arrival, handling, handling_at, handling_order)


@dataclass
class Pools:
    """Donor checkpoints by pool key (code slot, rank), with a fallback key per key."""

    donors: np.ndarray
    start: np.ndarray
    count: np.ndarray
    resolved: np.ndarray  # key -> the key actually drawn from (same or lower rank, or global)


def donor_pools(c: CompiledJournals) -> Pools:
    """Checkpoints the circuit passed, grouped by (code slot, relaunch rank or review number)."""
    passed = np.flatnonzero(~c.cp_stopped)
    keys = c.cp_slot[passed].astype(np.int64) * RANK_SLOTS + np.minimum(c.cp_rank[passed],
                                                                         RANK_SLOTS - 1)
    order = np.argsort(keys, kind="stable")
    donors, keys = passed[order], keys[order]
    n_keys = N_SLOTS * RANK_SLOTS
    count = np.bincount(keys, minlength=n_keys)
    start = np.r_[0, np.cumsum(count)[:-1]]
    resolved = np.full(n_keys, -1, dtype=np.int64)
    for slot in range(N_SLOTS):
        best = -1
        for rank in range(RANK_SLOTS):
            key = slot * RANK_SLOTS + rank
            if count[key]:
                best = key
            resolved[key] = best
    stop_rank1 = [s * RANK_SLOTS + 1 for s in range(N_SLOTS) if s != REVIEW_SLOT]
    if not any(count[k] for k in stop_rank1) and not count.any():
        return Pools(donors, start, count, resolved)
    # No donor for a code at all: draw among every stop passed at its first occurrence.
    global_key = max(stop_rank1, key=lambda k: count[k])
    resolved[resolved < 0] = global_key if count[global_key] else int(np.argmax(count))
    return Pools(donors, start, count, resolved)


class _Walk:
    """Vectorised walkers: one per (ticket, draw) being replayed."""

    def __init__(self, c: CompiledJournals, rules: RegulatorRules, recorded: RegulatorRules):
        self.c, self.rules, self.recorded = c, rules, recorded
        self.fr, self.fd = static_fires(c, rules), static_fires(c, recorded)

    def _rank_fires(self, rules, j, eff_rank):
        review = self.c.cp_is_review[j]
        stop = ~review
        # SPEC §6.5 "a 3rd rendered review stops the circuit (16)".
        fire = review & (eff_rank >= rules.max_reviews)
        # SPEC §6.5 three RELANCE in a row on the same stop: it ends when the stop comes back.
        fire |= stop & (eff_rank > rules.max_relance_same_stop)
        if rules.escalate_without_new_fact:
            fire |= stop & (eff_rank >= 2) & ~self.c.cp_new_fact[j]
        return fire

    def run(self, ticket, rng, pools, resume=None):
        """Walk until every walker ends; without ``rng`` a walker that would continue pauses.

        ``resume`` = (checkpoint, costs so far, effective rank) restarts paused walkers by
        drawing their donor first. Returns (costs (k, 4), outcome (k), paused (k),
        checkpoint (k), effective rank at the pause (k)).
        """
        c = self.c
        k = len(ticket)
        t = ticket.copy()
        base = np.zeros((k, 4))
        chain0 = np.full(k, -1, np.int64)
        delta = np.zeros(k, np.int64)
        splices = np.zeros(k, np.int64)
        outcome = np.full(k, -1, np.int8)
        paused = np.zeros(k, bool)
        paused_rank = np.zeros(k, np.int64)
        if resume is None:
            j = c.cp_start[t].copy()
            acc = np.zeros((k, 4))
        else:
            j, acc, eff = resume[0].copy(), resume[1].copy(), resume[2]
            self._splice(np.arange(k), j, eff, t, base, chain0, delta, rng, pools, splices,
                         acc, outcome)
        active = np.flatnonzero(outcome < 0)
        while len(active):
            a = active
            at_end = j[a] >= c.cp_start[t[a] + 1]
            done = a[at_end]
            acc[done] += c.total[t[done]] - base[done]
            outcome[done] = c.outcome[t[done]]
            a = a[~at_end]
            if len(a):
                self._step(a, t, j, acc, base, chain0, delta, outcome, paused, paused_rank,
                           rng, pools, splices)
            active = np.flatnonzero((outcome < 0) & ~paused)
        return acc, outcome, paused, j, paused_rank

    def _step(self, a, t, j, acc, base, chain0, delta, outcome, paused, paused_rank,
              rng, pools, splices):
        c, fr, fd = self.c, self.fr, self.fd
        jj = j[a]
        same = c.cp_chain[jj] == chain0[a]
        eff = c.cp_rank[jj] + np.where(same, delta[a], 0)
        r_arr = fr.arrival[jj] | self._rank_fires(self.rules, jj, eff)
        d_arr = fd.arrival[jj] | self._rank_fires(self.recorded, jj, eff)
        f_r = r_arr | fr.handling[jj]
        f_d = d_arr | fd.handling[jj]
        stopped = c.cp_stopped[jj]
        pos_r = np.where(r_arr[:, None], c.cp_before[jj], fr.handling_at[jj])
        # cut: R fires where the journal went on (and the recorded rules did not fire: a
        # journal that went on against them is taken as it is).
        cut = f_r & ~f_d & ~stopped
        if cut.any():
            w, jc = a[cut], jj[cut]
            acc[w] += pos_r[cut] - base[w]
            acc[w, WAKEUPS] += 1
            over = eff[cut] > self.rules.max_relance_same_stop
            ending = r_arr[cut] & (c.cp_is_review[jc] | over)
            outcome[w] = np.where(ending, END, ESC)
        # continue: the journal handed over because D fired, and R does not fire.
        cont = stopped & f_d & ~f_r
        if cont.any():
            w = a[cont]
            if rng is None:
                paused[w] = True
                paused_rank[w] = eff[cont]
                acc[w] += c.cp_before[jj[cont]] - base[w]
            else:
                acc[w] += c.cp_before[jj[cont]] - base[w]
                self._splice(w, j, eff[cont], t, base, chain0, delta, rng, pools, splices,
                             acc, outcome)
        # follow: both fire on a hand-over: R may fire earlier (its saved sessions come off).
        follow = ~cut & ~cont
        if follow.any():
            w, jf = a[follow], jj[follow]
            both = (stopped & f_r & f_d)[follow]
            if both.any():
                wb, jb = w[both], jf[both]
                pos_d = np.where(d_arr[follow][both, None], c.cp_before[jb], fd.handling_at[jb])
                acc[wb] -= np.maximum(pos_d - pos_r[follow][both], 0.0)
            j[w] += 1

    def _splice(self, w, j, eff_rank, t, base, chain0, delta, rng, pools, splices, acc,
                outcome):
        c = self.c
        here = j[w]
        slot = c.cp_slot[here].astype(np.int64)
        key = pools.resolved[slot * RANK_SLOTS + np.minimum(eff_rank, RANK_SLOTS - 1)]
        pick = pools.start[key] + (rng.random(len(w)) * pools.count[key]).astype(np.int64)
        donor = pools.donors[pick]
        t[w] = c.cp_ticket[donor]
        j[w] = donor
        base[w] = c.cp_before[donor]
        chain0[w] = c.cp_chain[donor]
        delta[w] = eff_rank - c.cp_rank[donor]
        splices[w] += 1
        over = splices[w] > MAX_SPLICES
        if over.any():
            acc[w[over], WAKEUPS] += 1
            outcome[w[over]] = ESC


@dataclass
class ReplayResult:
    """Per rule set summary (with 90% intervals) and per ticket results."""

    summary: pd.DataFrame  # one row per rule set: metrics, _lo and _hi bounds
    per_ticket: pd.DataFrame  # one row per ticket and rule set
    draws: pd.DataFrame  # one row per rule set and bootstrap draw (paired across rule sets)
    # ticket, reason: the tickets the replay could not take (SPEC §6.7: never silently absent)
    not_replayed: pd.DataFrame = field(default_factory=lambda: _no_tickets())

    def compare(self, baseline: str = "default", interval: float = 0.90) -> pd.DataFrame:
        """Paired differences to ``baseline`` (same resample per draw), with intervals."""
        if baseline not in set(self.draws["rules"]):
            raise SimulationError(f"baseline rule set {baseline!r} was not replayed")
        base = self.draws[self.draws["rules"] == baseline].set_index("draw")[list(METRICS)]
        lo_q, hi_q = (1 - interval) / 2, (1 + interval) / 2
        rows = []
        for label, group in self.draws.groupby("rules", sort=False):
            diff = group.set_index("draw")[list(METRICS)] - base
            row = {"rules": label, "baseline": baseline}
            for name in METRICS:
                row[name + "_diff"] = float(diff[name].mean())
                row[name + "_diff_lo"] = float(diff[name].quantile(lo_q))
                row[name + "_diff_hi"] = float(diff[name].quantile(hi_q))
            rows.append(row)
        return pd.DataFrame(rows)


def _no_tickets() -> pd.DataFrame:
    return pd.DataFrame(columns=["ticket", "reason"])


def _per_ticket_metrics(acc: np.ndarray, outcome: np.ndarray) -> np.ndarray:
    """(k, 5) metric values in METRICS order."""
    return np.column_stack([
        acc[:, WAKEUPS], acc[:, LOOPS],
        ((outcome == INT) & (acc[:, WAKEUPS] == 0)).astype(float),
        acc[:, SESSIONS], acc[:, TOKENS],
    ])


def _rule_seed(seed: int, rules: RegulatorRules) -> int:
    return zlib.crc32(repr(sorted(rules.changes().items())).encode()) ^ (seed * 2654435761 % 2**32)


def replay(journals, rules=None, draws: int = 1000, seed: int = 0,
           recorded: RegulatorRules | None = None, interval: float = 0.90) -> ReplayResult:
    """Replay ``journals`` under each rule set; per rule set means with percentile intervals.

    ``journals``: a :class:`CompiledJournals`, a DataFrame of ``circuit_events`` or a list of
    journal event dicts. ``rules``: a RegulatorRules, a spec string, a list of specs, or a dict
    ``{label: RegulatorRules}``. ``recorded``: the rules the journals followed (SPEC defaults).
    Draw ``d`` uses the same ticket resample for every rule set (paired comparisons).
    """
    if draws < 1:
        raise SimulationError("draws must be at least 1")
    if seed < 0:
        raise SimulationError(f"seed must be a non-negative integer, got {seed}")
    c = journals if isinstance(journals, CompiledJournals) else compile_journals(journals)
    rule_sets = _as_rule_sets(rules)
    recorded = recorded or RegulatorRules()
    pools = donor_pools(c)
    states = [_RuleState(c, rule, recorded, pools, seed) for rule in rule_sets.values()]
    n = c.n
    for chunk, lo in enumerate(range(0, draws, DRAW_CHUNK)):
        size = min(DRAW_CHUNK, draws - lo)
        boot = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 1, chunk])))
        flat = boot.integers(0, n, size=(size, n)) + (np.arange(size) * n)[:, None]
        weights = np.bincount(flat.ravel(), minlength=size * n).reshape(size, n)
        weights = weights.astype(np.float64)
        for state in states:
            state.add_chunk(weights)
    lo_q, hi_q = (1 - interval) / 2 * 100, (1 + interval) / 2 * 100
    summaries, tickets, all_draws = [], [], []
    for label, state in zip(rule_sets, states, strict=True):
        est, draws_m, per = state.finish()
        frame = pd.DataFrame(draws_m, columns=list(METRICS))
        frame.insert(0, "draw", np.arange(len(frame)))
        frame.insert(0, "rules", label)
        all_draws.append(frame)
        row = {"rules": label, "tickets": n}
        for i, name in enumerate(METRICS):
            row[name] = float(est[i])
            row[name + "_lo"] = float(np.percentile(draws_m[:, i], lo_q))
            row[name + "_hi"] = float(np.percentile(draws_m[:, i], hi_q))
        summaries.append(row)
        per.insert(1, "rules", label)
        tickets.append(per)
    skipped = c.not_replayed if c.not_replayed is not None else _no_tickets()
    return ReplayResult(pd.DataFrame(summaries), pd.concat(tickets, ignore_index=True),
                        pd.concat(all_draws, ignore_index=True), skipped.reset_index(drop=True))


def _as_rule_sets(rules) -> dict[str, RegulatorRules]:
    if rules is None:
        return named_rule_sets(["default"])
    if isinstance(rules, RegulatorRules):
        return {"custom" if rules.changes() else "default": rules}
    if isinstance(rules, str):
        return named_rule_sets([rules])
    if isinstance(rules, dict):
        return dict(rules)
    return named_rule_sets(list(rules))


class _RuleState:
    """One rule set's replay: deterministic walk once, then donor draws chunk by chunk."""

    def __init__(self, c, rule, recorded, pools, seed):
        self.c, self.pools = c, pools
        self.walk = _Walk(c, rule, recorded)
        acc, outcome, paused, pj, prank = self.walk.run(np.arange(c.n), None, pools)
        self.acc, self.outcome, self.paused = acc, outcome, paused
        self.cont = np.flatnonzero(paused)
        self.pj, self.prank = pj[self.cont], prank[self.cont]
        self.det = _per_ticket_metrics(acc, outcome)
        self.det[self.cont] = 0.0
        self.rng = np.random.Generator(np.random.PCG64(_rule_seed(seed, rule)))
        self.means: list[np.ndarray] = []
        self.cont_sum = np.zeros((len(self.cont), len(METRICS)))
        self.cont_counts = np.zeros((len(self.cont), len(OUTCOMES)))

    def add_chunk(self, weights: np.ndarray) -> None:
        """Add ``len(weights)`` bootstrap draws (weights: draws x tickets resample counts)."""
        size, cont = weights.shape[0], self.cont
        means = weights @ self.det
        if len(cont):
            resume = (np.tile(self.pj, size), np.tile(self.acc[cont], (size, 1)),
                      np.tile(self.prank, size))
            acc, out, _, _, _ = self.walk.run(np.tile(cont, size), self.rng, self.pools, resume)
            vals = _per_ticket_metrics(acc, out).reshape(size, len(cont), len(METRICS))
            means += np.einsum("dk,dkm->dm", weights[:, cont], vals)
            self.cont_sum += vals.sum(axis=0)
            out = out.reshape(size, len(cont))
            for o in range(len(OUTCOMES)):
                self.cont_counts[:, o] += (out == o).sum(axis=0)
        self.means.append(means / self.c.n)

    def finish(self):
        """(estimate (5), draw means (draws, 5), per-ticket frame)."""
        draws_m = np.vstack(self.means)
        per_vals = self.det.copy()
        per_outcome = self.outcome.astype(np.int64)
        if len(self.cont):
            per_vals[self.cont] = self.cont_sum / draws_m.shape[0]
            per_outcome[self.cont] = self.cont_counts.argmax(axis=1)
        per = pd.DataFrame({
            "ticket": self.c.tickets,
            "outcome": np.array(OUTCOMES, dtype=object)[per_outcome],
            "wakeups": per_vals[:, 0], "loop_sessions": per_vals[:, 1],
            "sessions": per_vals[:, 3], "tokens": per_vals[:, 4],
            "continued": self.paused,
        })
        return per_vals.mean(axis=0), draws_m, per


def load_journals(db) -> CompiledJournals:
    """Read ``circuit_events`` from the store (read-only) and compile them for replay.

    Tickets the ``tickets`` view marks not replayable are left out and listed, with the reason,
    in ``not_replayed``.
    """
    from brainlab.store import query
    from brainlab.store.connection import held as held_reader

    with held_reader(db) as held:  # one open for the three queries
        frame = query(held, "SELECT * FROM circuit_events"
                            " ORDER BY ticket, event_at, source_file, line")
        columns = query(held, "SELECT column_name FROM duckdb_columns()"
                              " WHERE table_name = 'tickets'")
        if "replayable" not in set(columns["column_name"]):
            raise SimulationError(
                f"{db} was built by an older brainlab (its tickets view cannot say which tickets"
                " are replayable, SPEC §6.7): ingest the journals into a new database, e.g."
                " `brainlab ingest circuits PATH --db NEW.duckdb`")
        skipped = query(held, "SELECT ticket, not_replayable_reason FROM tickets "
                              "WHERE NOT replayable ORDER BY ticket")
    if frame.empty and skipped.empty:
        raise SimulationError(f"no circuit events in {db}: run `brainlab ingest circuits PATH`")
    return compile_journals(frame, dict(zip(skipped["ticket"], skipped["not_replayable_reason"],
                                            strict=True)))


def format_summary(result: ReplayResult, width: int = 80) -> str:
    """The comparison as text tables fitted into ``width``, one per rule set (what the CLI prints).

    Each metric with its 90% interval and, after the first rule set, its paired difference to
    the first on the same resamples. Printed through :mod:`brainlab.common.tables` like every
    command's table (thousands separators, identifiers whole); figures keep 3 decimals and
    the differences their sign.
    """
    from brainlab.common import tables

    labels = list(result.summary["rules"])
    base = labels[0]
    diffs = result.compare(base).set_index("rules")
    import textwrap

    lines = textwrap.wrap(f"{int(result.summary['tickets'].iloc[0]):,} tickets; estimate and"
                          " 90% interval per ticket (integrated: share of tickets); difference"
                          f" to {base} on the same resamples", width=width,
                          break_long_words=False, break_on_hyphens=False)
    if len(result.not_replayed):
        lines.append(f"{len(result.not_replayed)} ticket(s) not replayed (tickets view,"
                     f" not_replayable_reason): {describe_not_replayed(result.not_replayed)}")
    for row in result.summary.to_dict("records"):
        names = ["metric", "estimate", "low", "high"]
        if row["rules"] != base:
            names += ["difference", "diff_low", "diff_high"]
        rows = []
        for m in METRICS:
            whole = m.startswith("tokens")
            cells = [m.removesuffix("_per_ticket").removesuffix("_share"),
                     *(_fmt(row[m + s], whole=whole) for s in ("", "_lo", "_hi"))]
            if row["rules"] != base:
                d = diffs.loc[row["rules"]]
                cells += [_fmt(d[m + s], True, whole) for s in ("_diff", "_diff_lo", "_diff_hi")]
            rows.append(cells)
        columns = [tables.Column("metric", "metric", "text"),
                   *(tables.Column(n, n.removeprefix("diff_"), "figure") for n in names[1:])]
        lines.append(f"rules: {row['rules']}")
        lines.append(tables.text_table(names, rows, width=width, columns=columns,
                                       see="--out FILE").rstrip("\n"))
    return "\n".join(lines)


def _fmt(value: float, sign: bool = False, whole: bool = False) -> str:
    plus = "+" if sign else ""
    return f"{value:{plus},.0f}" if whole else f"{value:{plus}.3f}"


def outcome_shares(result: ReplayResult) -> pd.DataFrame:
    """Share of tickets per outcome and rule set (one row per rule set and outcome)."""
    per = result.per_ticket
    shares = per.groupby(["rules", "outcome"], sort=False).size().rename("tickets").reset_index()
    shares["share"] = shares["tickets"] / shares.groupby("rules")["tickets"].transform("sum")
    return shares


def stops_by_code(journals: CompiledJournals) -> pd.DataFrame:
    """Recorded stops per code label and relaunch rank (SPEC §6.2), with how many looped."""
    c = journals
    stop = ~c.cp_is_review
    labels = {slot: ("controles" if code is None else str(code))
              for code, slot in CODE_SLOTS.items()}
    next_same = np.r_[c.cp_chain[1:] == c.cp_chain[:-1], False]
    frame = pd.DataFrame({
        "code_label": [labels.get(int(s), "other") for s in c.cp_slot[stop]],
        "relaunch_rank": c.cp_rank[stop], "loops": next_same[stop].astype(int),
    })
    return (frame.groupby(["code_label", "relaunch_rank"]).agg(stops=("loops", "size"),
                                                               loops=("loops", "sum"))
            .reset_index())
