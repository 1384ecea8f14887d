"""Circuit journals compiled once into compact numpy arrays the regulator replay walks.

A ticket becomes a list of **checkpoints**, the points where a SPEC §6.5 rule can fire: each
stop (with its relaunch rank, new fact, who decided it) and each rendered review. A stop's
**handling events** (refused admissions, missing decisions, questioned rounds) carry the
running costs at the moment they happened, so a cut inside the handling is exact.
Costs are four running totals per ticket: sessions, tokens, supervisor wake-ups, loop sessions.
Tickets that cannot be replayed (no ``end``, or a stop or end lost at ingest) are left out and
listed with the reason in ``not_replayed``, never silently dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from brainlab.common.errors import SimulationError
from brainlab.spec.regulator import ADMISSION_REASONS, FICHE_REASON

OUTCOMES = ("integrated", "ended", "escalated")
SESSIONS, TOKENS, WAKEUPS, LOOPS = range(4)
BY = {"table": 1, "regulator": 2, "supervisor": 3}
RANK_SLOTS = 16  # pool keys: code slot * RANK_SLOTS + min(rank, RANK_SLOTS - 1)
CODE_SLOTS = {15: 0, 16: 1, 17: 2, 18: 3, 19: 4, 20: 5, 23: 6, None: 7}  # None = controles
OTHER_CODE_SLOT, REVIEW_SLOT = 8, 9
N_SLOTS = 10
UNSTATED_REASON = len(ADMISSION_REASONS)  # a refusal whose reason was not written


@dataclass
class CompiledJournals:
    """Per-ticket and per-checkpoint arrays (module docstring); made by :func:`compile_journals`."""

    tickets: np.ndarray  # ticket ids, object array (n)
    outcome: np.ndarray  # recorded outcome index into OUTCOMES (n)
    total: np.ndarray  # (n, 4) recorded sessions, tokens, wake-ups, loop sessions
    cp_start: np.ndarray  # (n + 1) offsets of each ticket's checkpoints
    cp_ticket: np.ndarray  # (m) ticket index
    cp_is_review: np.ndarray  # (m) True for a rendered review, False for a stop
    cp_slot: np.ndarray  # (m) code slot (CODE_SLOTS), REVIEW_SLOT for reviews
    cp_rank: np.ndarray  # (m) relaunch rank of a stop; review number of a review
    cp_chain: np.ndarray  # (m) id of the stop key (ticket, name, step, component); for a
    # review, one id per ticket (its reviews form one chain numbered by cp_rank)
    cp_new_fact: np.ndarray  # (m) the stop came with a new fact
    cp_by: np.ndarray  # (m) first decider: 0 none, 1 table, 2 regulator, 3 supervisor
    cp_first_monte: np.ndarray  # (m) the first decision on the stop was a MONTE
    cp_kind: np.ndarray  # (m) index into stop_kinds (stop `kind` field), -1 none
    cp_group: np.ndarray  # (m) global id of (ticket, step, component): one arbitration
    cp_stopped: np.ndarray  # (m) the journal handed over here (supervisor, end, review stop)
    cp_before: np.ndarray  # (m, 4) running costs just before the checkpoint
    he_cp: np.ndarray  # (h) checkpoint of each handling event
    he_type: np.ndarray  # (h) 0 refusal, 1 missing decision, 2 questioned round
    he_reason: np.ndarray  # (h) refusal reason index into ADMISSION_REASONS, -1 otherwise
    he_decision: np.ndarray  # (h) decisions already made in the episode before the event
    he_at: np.ndarray  # (h, 4) running costs just after the event
    stop_kinds: tuple[str, ...]  # names of the stop kinds
    open_tickets: int = 0  # tickets without an `end` event, left out
    not_replayed: pd.DataFrame | None = None  # ticket, reason: every ticket left out

    @property
    def n(self) -> int:
        """Number of tickets."""
        return len(self.tickets)


def _col(frame: pd.DataFrame, name: str, default=None) -> np.ndarray:
    if name in frame.columns:
        return frame[name].to_numpy(dtype=object)
    return np.full(len(frame), default, dtype=object)


def _known(values: np.ndarray) -> np.ndarray:
    return ~pd.isna(values)


def _bool(values: np.ndarray, default: bool) -> np.ndarray:
    out = np.full(len(values), default, dtype=bool)
    known = _known(values)
    out[known] = values[known].astype(bool)
    return out


def compile_journals(events: pd.DataFrame | list[dict],
                     not_replayable: dict[str, str] | None = None) -> CompiledJournals:
    """Compile circuit events (``circuit_events`` rows or journal dicts) into replay arrays.

    ``not_replayable``: tickets to leave out, with the reason (the ``tickets`` view's); tickets
    without an ``end`` event are left out too. Both are listed in ``not_replayed``.
    """
    frame = pd.DataFrame(events) if not isinstance(events, pd.DataFrame) else events
    skipped = dict(not_replayable or {})
    if "by" in frame.columns and "decided_by" not in frame.columns:
        frame = frame.rename(columns={"by": "decided_by"})
    if "stop_kind" not in frame.columns and "kind" in frame.columns:
        frame = frame.assign(stop_kind=frame["kind"].where(frame["event"] == "stop"))
    if "event_at" not in frame.columns and "ts" in frame.columns:
        frame = frame.assign(event_at=pd.to_datetime(frame["ts"], utc=True))
    if frame.empty and not skipped:
        raise SimulationError("no circuit events to replay: ingest journals first")
    if not frame.empty:
        order = [c for c in ("ticket", "event_at", "source_file", "line") if c in frame.columns]
        frame = frame.sort_values(order, kind="stable").reset_index(drop=True)
        ended = set(frame.loc[frame["event"] == "end", "ticket"].unique())
        open_ids = sorted(set(frame["ticket"].unique()) - ended - set(skipped))
        skipped.update(dict.fromkeys(open_ids, "open: no end event yet"))
        frame = frame[frame["ticket"].isin(ended - set(skipped))].reset_index(drop=True)
    else:
        open_ids = []
    not_replayed = pd.DataFrame({"ticket": list(skipped), "reason": list(skipped.values())},
                                columns=["ticket", "reason"])
    if frame.empty:
        raise SimulationError(_nothing_to_replay(not_replayed))

    tcode, tickets = pd.factorize(frame["ticket"], sort=False)
    n, size = len(tickets), len(frame)
    first = np.r_[0, np.flatnonzero(np.diff(tcode)) + 1]
    ev = frame["event"].to_numpy(dtype=object)
    is_stop, is_session = ev == "stop", ev == "session"
    is_decision, is_end = ev == "decision", ev == "end"
    by = _col(frame, "decided_by")
    outcome_col = _col(frame, "outcome")
    tokens = pd.to_numeric(frame.get("tokens"), errors="coerce") if "tokens" in frame.columns \
        else pd.Series(np.zeros(size))
    tokens = np.where(is_session, np.nan_to_num(tokens.to_numpy(dtype=float)), 0.0)

    # Episodes: a stop opens one; events before the first stop have episode 0 (stop id -1).
    stop_idx = np.flatnonzero(is_stop)
    stop_cum = np.cumsum(is_stop)
    at_first = stop_cum[first] - is_stop[first]
    local_ep = stop_cum - np.repeat(at_first, np.diff(np.r_[first, size]))
    ep_stop = np.where(local_ep > 0, stop_cum - 1, -1)  # index into stop_idx

    s_ticket = tcode[stop_idx]
    # SPEC §6.7: a stop's step and component are optional; a missing one keys as ''.
    names, steps, comps = (pd.Series(_col(frame, name)[stop_idx]).fillna("").astype(str)
                           for name in ("name", "step", "component"))
    keys = pd.Series(s_ticket.astype(str)) + "|" + names + "|" + steps + "|" + comps
    chain, _ = pd.factorize(keys)
    same_prev = np.r_[False, chain[1:] == chain[:-1]]
    run_first = np.maximum.accumulate(np.where(~same_prev, np.arange(len(chain)), 0))
    rank = np.arange(len(chain)) - run_first + 1
    is_loop_ep = np.r_[same_prev[1:], False]
    groups = pd.Series(s_ticket.astype(str)) + "|" + steps + "|" + comps
    group, _ = pd.factorize(groups)

    # Running costs: sessions, tokens, wake-ups (supervisor decisions, verdicts raised to the
    # responsible person, a non-integrated end),
    # loop sessions (sessions of an episode whose stop came back next).
    contrib = np.zeros((size, 4))
    contrib[:, SESSIONS] = is_session
    contrib[:, TOKENS] = tokens
    # a référent-technique verdict that went up to the responsible person wakes them too
    raised = (ev == "verdict") & (_col(frame, "verdict") == "monte au responsable")
    contrib[:, WAKEUPS] = (is_decision & (by == "supervisor")) \
        | (is_end & (outcome_col != "integrated")) | raised
    in_loop = np.zeros(size, dtype=bool)
    has_ep = ep_stop >= 0
    in_loop[has_ep] = is_loop_ep[ep_stop[has_ep]]
    contrib[:, LOOPS] = is_session & in_loop
    cum = np.cumsum(contrib, axis=0)
    base = np.repeat(cum[first] - contrib[first], np.diff(np.r_[first, size]), axis=0)
    incl = cum - base
    excl = incl - contrib
    last = np.r_[first[1:], size] - 1
    total = incl[last]
    end_outcome = pd.Series(outcome_col[is_end], index=tcode[is_end]).groupby(level=0).last()
    outcome = np.array([OUTCOMES.index(end_outcome[t]) for t in range(n)], dtype=np.int8)

    # Per stop: first decision (decider, new fact), supervisor involvement.
    dec = np.flatnonzero(is_decision & has_ep)
    dec_ep = ep_stop[dec]
    uniq, first_dec = np.unique(dec_ep, return_index=True)
    s_by = np.zeros(len(stop_idx), dtype=np.int8)
    s_by[uniq] = [BY.get(b, 0) for b in by[dec[first_dec]]]
    s_monte = np.zeros(len(stop_idx), dtype=bool)
    s_monte[uniq] = _col(frame, "kind")[dec[first_dec]] == "MONTE"
    newf = _col(frame, "new_fact")
    # SPEC §6.7: new_fact not stated (on the stop nor its first decision) reads as false.
    s_newf = _bool(newf[stop_idx], False)
    dec_nf = _bool(newf[dec[first_dec]], False)
    stop_has_own = _known(newf[stop_idx])
    take = ~stop_has_own[uniq]
    s_newf[uniq[take]] = dec_nf[take]
    sup_ep = np.zeros(len(stop_idx), dtype=bool)
    sup = np.flatnonzero(is_decision & has_ep & (by == "supervisor"))
    sup_ep[ep_stop[sup]] = True
    last_stop_of_ticket = np.zeros(len(stop_idx), dtype=bool)
    if len(stop_idx):
        last_stop_of_ticket[np.r_[s_ticket[1:] != s_ticket[:-1], True]] = True
    s_stopped = sup_ep | (last_stop_of_ticket & (outcome[s_ticket] != 0))
    kinds_raw = _col(frame, "stop_kind")[stop_idx]
    kind_code, kind_names = pd.factorize(pd.Series(kinds_raw, dtype=object))
    code = _col(frame, "code")[stop_idx]
    s_slot = np.array([CODE_SLOTS.get(None if pd.isna(c) else int(c), OTHER_CODE_SLOT)
                       for c in code], dtype=np.int8)

    # Rendered reviews: numbered per ticket; "stopped" when a 16 stop is the next checkpoint.
    verdict = _col(frame, "verdict")
    rev_idx = np.flatnonzero((ev == "review") & (verdict == "RENDU"))
    r_ticket = tcode[rev_idx]
    r_first = np.r_[0, np.flatnonzero(np.diff(r_ticket)) + 1] if len(rev_idx) else np.zeros(0, int)
    r_no = np.arange(len(rev_idx)) - np.repeat(r_first, np.diff(np.r_[r_first, len(rev_idx)])) + 1

    # Checkpoints = stops and rendered reviews, in event order.
    cp_event = np.r_[stop_idx, rev_idx]
    order_cp = np.argsort(cp_event, kind="stable")
    cp_event = cp_event[order_cp]
    m, n_stop = len(cp_event), len(stop_idx)
    is_rev = order_cp >= n_stop
    sid = np.where(is_rev, 0, order_cp)
    rid = np.where(is_rev, order_cp - n_stop, 0)
    cp_ticket = tcode[cp_event]

    def pick(stop_values, review_values, fill=0):
        out = np.full(m, fill, dtype=np.asarray(stop_values).dtype if n_stop else int)
        if n_stop:
            out[~is_rev] = np.asarray(stop_values)[sid[~is_rev]]
        if len(rev_idx):
            out[is_rev] = np.asarray(review_values)[rid[is_rev]]
        return out

    cp_slot = pick(s_slot, np.full(len(rev_idx), REVIEW_SLOT, dtype=np.int8))
    cp_rank = pick(rank, r_no)
    cp_stopped = pick(s_stopped, np.zeros(len(rev_idx), bool))
    next_is_16 = np.r_[(cp_slot[1:] == CODE_SLOTS[16]) & ~is_rev[1:]
                       & (cp_ticket[1:] == cp_ticket[:-1]), False]
    cp_stopped = np.where(is_rev, next_is_16, cp_stopped)
    cp_start = np.searchsorted(cp_ticket, np.arange(n + 1))

    # Handling events of each stop's episode.
    accepted = _col(frame, "accepted")
    reason = _col(frame, "reason")
    agent = _col(frame, "agent")
    questioned = _bool(_col(frame, "questioned"), True)
    refused = (ev == "admission") & has_ep & ~_bool(accepted, True)
    rounds = is_session & has_ep & (agent == "questionneur") & questioned
    he_idx = np.flatnonzero(refused | rounds)
    stop_to_cp = np.empty(n_stop, dtype=np.int64)
    stop_to_cp[order_cp[~is_rev]] = np.flatnonzero(~is_rev)
    he_cp = stop_to_cp[ep_stop[he_idx]] if len(he_idx) else np.zeros(0, np.int64)
    he_reason = np.array([_reason_index(r) for r in reason[he_idx]], dtype=np.int8)
    he_type = np.where(rounds[he_idx], 2, np.where(reason[he_idx] == FICHE_REASON, 1, 0))
    dec_cum = np.cumsum(is_decision)
    ep_first_event = np.zeros(n_stop, dtype=np.int64)
    ep_first_event[:] = stop_idx
    he_decision = dec_cum[he_idx] - dec_cum[ep_first_event[ep_stop[he_idx]]] \
        if len(he_idx) else np.zeros(0, np.int64)

    return CompiledJournals(
        tickets=np.asarray(tickets, dtype=object), outcome=outcome, total=total,
        cp_start=cp_start, cp_ticket=cp_ticket, cp_is_review=is_rev, cp_slot=cp_slot,
        cp_rank=cp_rank.astype(np.int64), cp_chain=pick(chain, len(chain) + r_ticket),
        cp_new_fact=pick(s_newf, np.ones(len(rev_idx), bool)).astype(bool),
        cp_by=pick(s_by, np.zeros(len(rev_idx), np.int8)),
        cp_first_monte=pick(s_monte, np.zeros(len(rev_idx), bool)).astype(bool),
        cp_kind=pick(kind_code, np.full(len(rev_idx), -1)),
        cp_group=pick(group, np.full(len(rev_idx), -1)),
        cp_stopped=cp_stopped.astype(bool), cp_before=excl[cp_event],
        he_cp=he_cp, he_type=he_type.astype(np.int8), he_reason=he_reason,
        he_decision=he_decision, he_at=incl[he_idx],
        stop_kinds=tuple(kind_names), open_tickets=len(open_ids), not_replayed=not_replayed,
    )


def _reason_index(reason) -> int:
    """Index into ADMISSION_REASONS; UNSTATED_REASON when not stated, -1 when unknown."""
    if not isinstance(reason, str) and pd.isna(reason):
        return UNSTATED_REASON
    return ADMISSION_REASONS.index(reason) if reason in ADMISSION_REASONS else -1


def _nothing_to_replay(not_replayed: pd.DataFrame) -> str:
    """Why nothing can be replayed, naming the tickets left out."""
    if not_replayed.empty:
        return "no finished ticket (with an `end` event) to replay"
    return (f"no replayable ticket: {len(not_replayed)} ticket(s) left out ("
            f"{describe_not_replayed(not_replayed)}); see the tickets view")


def describe_not_replayed(not_replayed: pd.DataFrame, limit: int = 5) -> str:
    """``T-3: reason; T-9: reason`` for the first ``limit`` tickets, then how many more."""
    rows = not_replayed.head(limit)
    text = "; ".join(f"{t}: {r}" for t, r in zip(rows["ticket"], rows["reason"], strict=True))
    more = len(not_replayed) - len(rows)
    return text + (f"; and {more} more" if more > 0 else "")
