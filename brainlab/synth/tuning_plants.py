"""Plants for threshold tuning (issue 42): a known threshold the tuning must find.

Not in the demo's set (``default=False``): ``brainlab synth --plants unhealthy-after-close``
selects it.
"""

from __future__ import annotations

import random
from dataclasses import replace

from brainlab.synth.model import SynthSession, health_v2
from brainlab.synth.registry import SynthContext, plant

CLOSE_CUT = 45  # SPEC §3.3 conserve_close is 60; the planted cut sits on tune's grid (step 5)
BAD_HEALTH = 0.80  # the session label's cut (view session_outcomes, SPEC §3.3 coach health)
SCORED = ("use-brain", "build-brain", "explore-brain")


def _with_close(s: SynthSession, close: int) -> SynthSession:
    """``s`` closing at ``close`` % of the window, every other figure kept.

    Its tokens and peak stay as drawn, so its own health (and the previous session's label)
    does not move; a log may then close above its peak. Tune it on the logs (``brainlab
    ingest brain``): the transcripts rendered from the plan derive tokens from the close.
    """
    return replace(s, context_at_close=close)


@plant("unhealthy-after-close", stage="plan", spec="§3.3", default=False,
       plants=f"bad sessions follow one known threshold: a session closing above {CLOSE_CUT}% "
              "of the window is followed by an unhealthy session (health below 0.80), one "
              f"closing at {CLOSE_CUT}% or below by a healthy one (SPEC §3.3 conserve_close)")
def unhealthy_after_close(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """Redraw each session's close from the health of the next scored session.

    A close changes no health, so every label stays as drawn. What the logs say
    (``ctx.logged``, when a plant already set it) gets the same figures.
    """
    order = sorted(range(len(ctx.sessions)),
                   key=lambda i: (ctx.sessions[i].started_at, ctx.sessions[i].sess_id))
    next_health: float | None = None
    bad = 0
    for i in reversed(order):
        s = ctx.sessions[i]
        if next_health is not None:
            is_bad = next_health < BAD_HEALTH
            bad += is_bad
            close = rng.randint(CLOSE_CUT + 1, 75) if is_bad else rng.randint(8, CLOSE_CUT)
            ctx.sessions[i] = s = _with_close(s, close)
        if s.category in SCORED:
            next_health = health_v2(s)
    if ctx.logged:
        planned = {s.sess_id: s for s in ctx.sessions}
        ctx.logged = [_with_close(s, planned[s.sess_id].context_at_close)
                      if s.sess_id in planned else s for s in ctx.logged]
    return [{"effect": f"sessions closing above {CLOSE_CUT}% are followed by an unhealthy "
                       "session, the others by a healthy one",
             "where": f"{bad} of {len(order)} sessions close above {CLOSE_CUT}%",
             "conserve_close": CLOSE_CUT, "bad_sessions": bad}]
