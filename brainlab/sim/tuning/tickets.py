"""Regulator-limit tuning: score SPEC §6.5 rule sets against the ticket outcome labels.

Labels come from the ``ticket_outcomes`` view (brainlab/store/models/marts/ticket_outcomes.sql): a ticket is
bad when it reached the supervisor (SPEC §6.6 wake-ups > 0). Alerts come from the regulator
replay (:func:`brainlab.sim.regulator.replay`) of the recorded circuits under a trial
:class:`~brainlab.spec.regulator.RegulatorRules`:

- an *alert* is a ticket the rule set sends to the supervisor: replayed wake-ups >= 0.5. For a
  ticket the replay walks without a donor (cut or followed) wake-ups are whole, so this is
  "at least one wake-up"; for a ticket continued past a recorded hand-over with donor draws it
  is the mean over the draws ("the supervisor is woken at least half a time on average");
- alerts per week count tickets by the ISO week of their first event, over every week from the
  first replayed ticket's to the last one's; precision and recall as in
  :mod:`brainlab.sim.tuning.scoring`. Open tickets (no end event) are neither replayed nor
  scored.

Under the SPEC defaults every ticket follows its journal, so the defaults alert exactly on the
bad tickets (precision = recall = 1) by construction: a back-test of the replay, not a score.
:func:`tune` (``brainlab tune tickets``) therefore judges rule sets without this label, on the
replay's frontier (:mod:`brainlab.sim.tuning.frontier`).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable

import numpy as np
import pandas as pd

from brainlab.common.errors import ConfigError, SimulationError
from brainlab.sim.circuit_arrays import CompiledJournals
from brainlab.sim.regulator import load_journals, replay
from brainlab.sim.tuning.scoring import DB, TICKET_METRIC_COLUMNS, score
from brainlab.spec.regulator import RegulatorRules
from brainlab.store import query

DEFAULT_DRAWS = 20  # donor draws per continued ticket: enough for a slider, fast on the demo
ALERT_WAKEUPS = 0.5


def outcomes(db: DB) -> pd.DataFrame:
    """Return every ticket's outcome label (view ``ticket_outcomes``, brainlab's own labels)."""
    return query(db, "SELECT * FROM ticket_outcomes ORDER BY started_at, ticket")


def load(db: DB) -> CompiledJournals | None:
    """The store's finished circuits compiled for replay, or None when it holds none."""
    try:
        return load_journals(db)
    except SimulationError:
        return None


def tickets_with_stop_kind(db: DB, kind: str) -> list[str]:
    """Tickets that raised at least one stop of ``kind`` (view circuit_stops, SPEC §6.3)."""
    found = query(db, "SELECT DISTINCT ticket FROM circuit_stops WHERE stop_kind = ? "
                      "ORDER BY ticket", [kind])
    return found["ticket"].tolist()


def _journals(db_or_journals) -> CompiledJournals:
    if isinstance(db_or_journals, CompiledJournals):
        return db_or_journals
    return load_journals(db_or_journals)


def _as_rules(rules) -> RegulatorRules:
    if rules is None:
        return RegulatorRules()
    if isinstance(rules, RegulatorRules):
        return rules
    if isinstance(rules, dict):
        return RegulatorRules().replace(**rules)
    raise ConfigError(f"expected RegulatorRules or a dict of overrides, got {rules!r}")


def _replayed(journals: CompiledJournals, rule_sets: dict[str, RegulatorRules], draws: int,
              seed: int) -> pd.DataFrame:
    """Per ticket and rule set: replayed outcome, wake-ups, sessions, and the alert flag."""
    per = replay(journals, rule_sets, draws=draws, seed=seed).per_ticket
    per = per.rename(columns={"outcome": "replay_outcome", "wakeups": "replay_wakeups",
                              "sessions": "replay_sessions"})
    per["is_alert"] = per["replay_wakeups"] >= ALERT_WAKEUPS
    return per[["ticket", "rules", "replay_outcome", "replay_wakeups", "replay_sessions",
                "continued", "is_alert"]]


def _label(per: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    frame = per.merge(labels[["ticket", "started_at", "week_start", "iso_week", "outcome",
                              "wakeups", "sessions", "is_bad", "bad_reason"]],
                      on="ticket", how="inner")
    frame["sessions_saved"] = frame["sessions"] - frame["replay_sessions"]
    return frame.sort_values(["started_at", "ticket"]).reset_index(drop=True)


def ticket_alerts(db, rules=None, draws: int = DEFAULT_DRAWS, seed: int = 0,
                  labels: pd.DataFrame | None = None, journals=None) -> pd.DataFrame:
    """One row per replayed ticket under ``rules``: label, replayed outcome, ``is_alert``.

    ``rules``: a RegulatorRules or a dict of overrides of the SPEC defaults. ``journals``
    (compiled once by :func:`brainlab.sim.regulator.load_journals`) saves reloading per call.
    """
    labels = outcomes(db) if labels is None else labels
    per = _replayed(_journals(journals if journals is not None else db),
                    {"trial": _as_rules(rules)}, draws, seed)
    return _label(per, labels).drop(columns="rules")


def _score(frame: pd.DataFrame) -> dict:
    got = score(frame)
    got["bad_tickets"] = got.pop("bad_sessions")
    return {k: got[k] for k in TICKET_METRIC_COLUMNS}


def evaluate(db, rules=None, draws: int = DEFAULT_DRAWS, seed: int = 0,
             labels: pd.DataFrame | None = None, journals=None) -> dict:
    """Score one rule set: alerts per week, precision, recall against the ticket labels."""
    return _score(ticket_alerts(db, rules, draws, seed, labels, journals))


def weekly_alerts(db, rules=None, draws: int = DEFAULT_DRAWS, seed: int = 0,
                  labels: pd.DataFrame | None = None, journals=None) -> pd.DataFrame:
    """Per ISO week: tickets, alerts (by replayed outcome), bad tickets, true positives."""
    frame = ticket_alerts(db, rules, draws, seed, labels, journals)
    frame["is_bad_flag"] = frame["is_bad"].fillna(False).astype(bool)
    frame["is_hit"] = frame["is_alert"] & frame["is_bad_flag"]
    for outcome in ("ended", "escalated", "integrated"):
        frame[outcome] = frame["is_alert"] & (frame["replay_outcome"] == outcome)
    weekly = frame.groupby(["week_start", "iso_week"], as_index=False).agg(
        tickets=("ticket", "count"), alerts=("is_alert", "sum"),
        bad_tickets=("is_bad_flag", "sum"), true_positives=("is_hit", "sum"),
        ended=("ended", "sum"), escalated=("escalated", "sum"),
        integrated=("integrated", "sum"), sessions_saved=("sessions_saved", "sum"))
    return weekly.sort_values("week_start").reset_index(drop=True)


def grid_points(grid: dict[str, Iterable]) -> list[dict]:
    """Every combination of a ``{rule: [values]}`` grid over RegulatorRules fields."""
    if not grid:
        return [{}]
    known = {f.name for f in dataclasses.fields(RegulatorRules)}
    unknown = [k for k in grid if k not in known]
    if unknown:
        raise ConfigError(f"unknown regulator rule(s) in grid: {unknown}; known: {sorted(known)}")
    values = [list(v) for v in grid.values()]
    if any(not v for v in values):
        raise ConfigError("every grid entry needs at least one value")
    return [dict(zip(grid, combo, strict=True)) for combo in itertools.product(*values)]


def sweep(db, grid: dict[str, Iterable], base: RegulatorRules | None = None,
          draws: int = DEFAULT_DRAWS, seed: int = 0, journals=None) -> pd.DataFrame:
    """Score every combination of ``grid`` (rule name -> values) over ``base``.

    One row per combination: the grid values, then the metrics of TICKET_METRIC_COLUMNS.
    Every distinct rule set is replayed once, all in one replay call (paired resamples).
    """
    base = base or RegulatorRules()
    points = grid_points(grid)
    rule_sets: dict[str, RegulatorRules] = {}
    keys = []
    for point in points:
        rules = base.replace(**point)
        key = repr(sorted(rules.changes().items()))
        rule_sets.setdefault(key, rules)
        keys.append(key)
    labels = outcomes(db)
    per = _label(_replayed(_journals(journals if journals is not None else db), rule_sets,
                           draws, seed), labels)
    scored = {key: _score(group) for key, group in per.groupby("rules", sort=False)}
    rows = [{**point, **scored[key]} for point, key in zip(points, keys, strict=True)]
    return pd.DataFrame(rows, columns=[*grid.keys(), *TICKET_METRIC_COLUMNS])


def default_grid(rules: RegulatorRules | None = None) -> dict[str, list]:
    """A small grid around the SPEC §6.5 limits (what notebook 04 sweeps for tickets)."""
    r = rules or RegulatorRules()
    return {
        "max_relance_same_stop": [2, r.max_relance_same_stop, 4],
        "max_refusals": [0, r.max_refusals, 2],
        "escalate_without_new_fact": [r.escalate_without_new_fact,
                                      not r.escalate_without_new_fact],
    }


FRONTIER_DEFINITION = (
    "no label: each rule set is replayed on the recorded circuits (SPEC §6.5 limits) and "
    "judged on what it costs and yields (SPEC §6.6): tickets integrated, sessions and tokens "
    "per integrated ticket, supervisor wake-ups per week, tickets abandoned (ended). Never "
    "by agreement with the rules the journals followed, which would score them perfect by "
    "construction")


def tune(db: DB, rules: RegulatorRules | None = None, budget: float = 5.0,
         draws: int = DEFAULT_DRAWS, seed: int = 0, grid: dict | None = None,
         confirm_share: float | None = None) -> dict:
    """Judge every one-rule change of the SPEC §6.5 grid on held-out weeks (``tune tickets``).

    See :mod:`brainlab.sim.tuning.frontier`; ``rules``: the rules in force (the settings').
    """
    from brainlab.sim.tuning import engine, frontier
    from brainlab.sim.tuning.grids import TICKET_GRID
    from brainlab.sim.tuning.sessions import week_index

    current = rules or RegulatorRules()
    values = dataclasses.asdict(current)
    grid = dict(TICKET_GRID if grid is None else grid)
    grid_points({k: v[:1] for k, v in grid.items()})  # names are RegulatorRules fields
    journals = load(db)
    labels = outcomes(db) if journals is not None else pd.DataFrame()
    if journals is None or labels.empty:
        return {"target": "tickets", "unit": "tickets", "table": "regulator",
                "label": {"definition": FRONTIER_DEFINITION, "tickets": 0},
                "split": {"weeks": 0}, "defaults": {"values": {k: values[k] for k in grid}},
                "candidates": [], "recommended": None, "no_effect": [], "notes": [],
                "budget": {"wakeups_per_week": budget},
                "reason": "keep the defaults: this store holds no finished ticket circuit "
                          "(SPEC §6.7 journals); `brainlab ingest brain PATH` adds a brain's "
                          "circuits/*.jsonl"}
    tickets = labels["ticket"].tolist()

    def replayed(tried: list[dict]) -> list[pd.DataFrame]:
        sets = {str(i): current.replace(**changes) for i, changes in enumerate(tried)}
        per = replay(journals, sets, draws=draws, seed=seed).per_ticket
        return [per[per["rules"] == str(i)].set_index("ticket").reindex(tickets)
                .reset_index() for i in range(len(tried))]

    weeks, week_of = week_index(labels["week_start"], labels["iso_week"])
    replayable = set(journals.tickets)
    week_of = np.where(labels["ticket"].isin(replayable), week_of, -1)
    label = {"definition": FRONTIER_DEFINITION, "spec": "§6.5, §6.6",
             "tickets": int((week_of >= 0).sum()),
             "not_replayed": int(len(labels) - (week_of >= 0).sum())}
    return frontier.judge_frontier(
        label=label, weeks=weeks, week_of=week_of, replayed=replayed, grid=grid,
        current=values, budget=budget, seed=seed,
        confirm_share=engine.CONFIRM_SHARE if confirm_share is None else confirm_share)
