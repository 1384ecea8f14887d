"""Planted disagreements between metabolism logs and transcripts (issue 13 §6).

The plan says what really happened; these plants change only what a log says, or which of
the two files exists, so the audit (store/models/marts/session_audit_for.sql) and the
matching must find exactly them: an under-reported stretch of tokens_used, a log claiming
commits its transcript lacks, a log whose transcript is missing, and transcripts whose
session wrote no log.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from datetime import timedelta

from brainlab.synth.model import SynthOptions, SynthSession
from brainlab.synth.registry import SynthContext, plant

UNDER_REPORT = 0.6  # the logs of the stretch say 60% of the tokens really used (-40%)
COMMITS_CLAIMED = 3  # commits one log claims beyond its transcript's


@dataclass
class AuditPlants:
    """What the brain writer logs, which sessions get no log / no transcript, and the notes."""

    logged: list[SynthSession]
    no_log: set[str] = field(default_factory=set)
    no_transcript: set[str] = field(default_factory=set)
    planted: list[dict] = field(default_factory=list)


def plant_audit(sessions: list[SynthSession], options: SynthOptions,
                busy: list | None = None) -> AuditPlants:
    """Choose the planted sessions (deterministic for a plan); ``busy``: other start times."""
    first = options.weeks // 4 + 1
    stretch = {w for w in (first, first + 1) if w != options.planted_week}
    under = {s.sess_id for s in sessions if s.week in stretch}
    use = [s for s in sessions if s.category == "use-brain" and s.sess_id not in under]
    claimer = next((s for s in use if s.week == max(0, first - 2)), use[0] if use else None)
    starts = sorted([s.started_at for s in sessions] + list(busy or []))

    def alone(s: SynthSession) -> bool:  # no other session or sprint within an hour
        return sum(abs(t - s.started_at) <= timedelta(hours=1) for t in starts) == 1

    taken = under | ({claimer.sess_id} if claimer else set())
    late = [s for s in sessions if s.week >= options.weeks * 7 // 12 and s.sess_id not in taken]
    missing = next((s for s in late if alone(s)), None)
    tail = [s for s in sessions if s.week >= options.weeks - 2 and s.sess_id not in taken
            and s.category != "use-brain" and (missing is None or s.sess_id != missing.sess_id)]
    no_log = tail[:2]
    logged = []
    for s in sessions:
        if s.sess_id in under:
            s = replace(s, tokens_used=int(round(s.tokens_used * UNDER_REPORT / 1000)) * 1000)
        elif claimer and s.sess_id == claimer.sess_id:
            s = replace(s, commits=s.commits + COMMITS_CLAIMED)
        logged.append(s)
    plants = AuditPlants(logged)
    if under:
        plants.planted.append({
            "effect": "audit: logs under-report tokens_used by 40% (weeks "
                      f"{sorted(stretch)}); their health_score follows the wrong tokens",
            "where": "progression/metabolism/ vs claude/projects/", "audit_field": "tokens_used",
            "sess_ids": sorted(under)})
    if claimer:
        plants.planted.append({
            "effect": f"audit: a log claims {COMMITS_CLAIMED} commits its transcript does not show",
            "where": claimer.sess_id, "audit_field": "commits", "sess_ids": [claimer.sess_id]})
    if missing:
        plants.no_transcript.add(missing.sess_id)
        plants.planted.append({
            "effect": "audit: a log whose session has no transcript (unmatched)",
            "where": missing.sess_id, "sess_ids": [missing.sess_id]})
    if no_log:
        plants.no_log = {s.sess_id for s in no_log}
        plants.planted.append({
            "effect": "audit: transcript sessions whose session wrote no metabolism log",
            "where": "claude/projects/ (measured_sessions with no sess_id)",
            "sess_ids": sorted(plants.no_log),
            # their claims are closed with no log: the close sequence was not followed (§2.4)
            "violations": [{"rule": "CLO001", "subject": sid} for sid in sorted(plants.no_log)]})
    return plants


@plant("audit", stage="plan", spec="§3.1, §7", rules=("CLO001",), after=("fit-modes", "xss-note"),
       plants="logs that disagree with their transcripts: under-reported tokens, claimed "
              "commits, a log without transcript, transcripts without log")
def audit(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """Choose the audit's sessions; what the logs say becomes ``ctx.logged``."""
    plants = plant_audit(ctx.sessions, ctx.options,
                         [sp["started_at"] for sp in ctx.sprint_plan])
    ctx.logged, ctx.no_log, ctx.no_transcript = plants.logged, plants.no_log, plants.no_transcript
    return plants.planted
