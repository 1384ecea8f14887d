"""Planted changes the replays must predict (issue 41 item 6): a broker policy and a rule set.

- ``broker-policy-change``: from a day 90% into the history, the synthetic broker of project
  ``originsdigital`` preloads nothing (policy ``on-demand``: every agent reads what it needs on
  demand) instead of the protocol's at most two touched files. (A switch to loading whole
  domains would break the protocol's limits in every later sprint and flood the compliance
  report's last weeks; this change breaks no rule.) The recorded source maps show it; replaying
  the weeks before under ``greedy-domain`` must predict what the weeks after show
  (``brainlab simulate broker`` finds the change, docs/broker.md).
- ``regulator-rules-change``: from the same day, the circuit ends a stop at its third return
  (``max_relance_same_stop=2``); the journal's tickets say so in a ``rules`` field
  (docs/regulator.md). Replaying the tickets before under those rules must predict the after.
"""

from __future__ import annotations

import random
from datetime import datetime, time, timedelta

from brainlab.synth.registry import SynthContext, entry, plant
from brainlab.synth.sprints import PROJECT, broker_path

BROKER_CHANGE_TO = "on-demand"
RULES_CHANGE_TO = "max_relance_same_stop=2"
CHANGE_AT = 0.6  # share of the history before the regulator's change
# the broker's change comes late: the demo's planted 'just in case' loads (BRK004) come before
BROKER_CHANGE_AT = 0.9


def change_day(ctx: SynthContext, at: float = CHANGE_AT) -> datetime:
    """The first day under the new policy or rules (midnight), ``at`` into the history."""
    options = ctx.options
    days = (options.end - options.start).days + 1
    return datetime.combine(options.start + timedelta(days=int(days * at)), time(0, 0))


@plant("broker-policy-change", stage="plan", spec="§4.2, §4.5",
       plants="the broker stops preloading (on-demand) on a day")
def broker_policy_change(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """Rewrite the source and release maps of the contracted sprints from the change day."""
    day = change_day(ctx, BROKER_CHANGE_AT)
    changed = switch_policy(ctx.sprint_plan, day)
    if not changed:
        return []
    return [{"effect": "broker policy change",
             "where": f"project {PROJECT} from {day:%Y-%m-%d}: the broker preloads nothing "
                      f"({BROKER_CHANGE_TO}) in {len(changed)} sprints; "
                      "simulate broker finds the change and predicts the after from the before",
             "day": f"{day:%Y-%m-%d}", "to": BROKER_CHANGE_TO, "sprints": changed}]


@plant("regulator-rules-change", stage="plan", spec="§6.5",
       plants="the circuit runs under max_relance_same_stop=2 from a day, its journal says so")
def regulator_rules_change(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """From the change day, tickets run under the new rules (synth.circuits writes them)."""
    day = change_day(ctx)
    ctx.circuit_rules_change = (day, RULES_CHANGE_TO)
    return [{"effect": "regulator rules change",
             "where": f"circuits/*.jsonl: tickets started from {day:%Y-%m-%d} run under "
                      f"{RULES_CHANGE_TO} and carry \"rules\": \"{RULES_CHANGE_TO}\"; simulate "
                      "regulator finds the change and predicts the after from the before",
             "day": f"{day:%Y-%m-%d}", "to": RULES_CHANGE_TO}]


@plant("broker-in-audit-mode", stage="files", spec="§4.2", rules=("BRK005",),
       plants="the broker printing a source map in audit mode, where the seed never runs it")
def broker_in_audit_mode(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """The last contracted sprint's inhale block says ``Mode : audit``."""
    sprints = [s for s in ctx.sprint_plan if s["project"] == PROJECT
               and ctx.files.exists(broker_path(s))]
    if len(sprints) < 3:  # a very short brain: leave the few sprints to the other plants
        return []
    sprint = sprints[-1]
    path = broker_path(sprint)
    ctx.files.put(path, ctx.files.text(path).replace("Mode           : sprint",
                                                     "Mode           : audit", 1))
    return [entry("compliance: the broker runs in audit mode (seed context-broker lines"
                  " 32-37)", sprint["sprint"], [("BRK005", sprint["sprint"])])]


def switch_policy(plan: list[dict], day: datetime) -> list[str]:
    """From ``day``, the contracted sprints' broker preloads nothing (on-demand), in place.

    Its source maps are empty for every agent and its release maps too. Returns the sprints
    changed.
    """
    changed = []
    for sprint in plan:
        if sprint["project"] != PROJECT or sprint["started_at"] < day:
            continue
        for agent in sprint["agents"]:
            agent["loaded"] = []
        sprint["kept"], sprint["released"], sprint["reason"] = [], [], None
        changed.append(sprint["sprint"])
    return changed
