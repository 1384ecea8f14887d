"""Plants in the brain's own files (SPEC §2-§5): the effects the demo's analyses must find.

A build-brain-heavy week (drawn by :func:`brainlab.synth.model.plan_sessions`), an agent
loaded in ~95% of sessions and never used, an HTML payload in a session's notes, a
workspace ram.md over its limit, a metabolism log missing a mandatory field, and a claim
left open past its TTL.
"""

from __future__ import annotations

import random
import re
from datetime import timedelta

from brainlab.synth.brain import XSS_NOTE, claim_path, log_path, workspace_name
from brainlab.synth.model import PROJECTS, WASTED_AGENT
from brainlab.synth.registry import SynthContext, entry, plant


@plant("build-week", stage="plan", spec="§3.3",
       plants="a week of build-brain sessions only: the coach trigger fires (ratio <= 0.40)")
def build_week(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """Describe the build-brain-heavy week (drawn by model.plan_sessions)."""
    options = ctx.options
    week_sessions = [s for s in ctx.sessions if s.week == options.planted_week]
    start = options.start + timedelta(days=7 * options.planted_week)
    return [{"effect": "build-brain-heavy week: every session is build-brain, the coach "
                       "trigger fires (ratio <= 0.40)",
             "where": f"{start:%G-W%V} ({start} .. {start + timedelta(days=6)})",
             "iso_week": f"{start:%G-W%V}", "sessions": len(week_sessions)}]


@plant("wasted-agent", stage="plan", spec="§2.5",
       plants="an agent loaded in ~95% of sessions and never used")
def wasted_agent(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """Describe the always-loaded, never-used agent (drawn by model._session)."""
    return [{"effect": "agent loaded in ~95% of sessions and never used",
             "where": WASTED_AGENT, "agent": WASTED_AGENT}]


@plant("xss-note", stage="plan", spec="§3.1",
       plants="an HTML/script payload in a session note (reports must escape it)")
def xss_note(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """Put HTML/JS payloads in one session's notes: reports must show them as text."""
    target = ctx.sessions[-2]
    target.notes = f"{target.notes}; {XSS_NOTE}"
    return [{"effect": "HTML/script payload in a session note (reports must escape it)",
             "where": target.sess_id, "sess_id": target.sess_id, "payload": XSS_NOTE}]


@plant("incomplete-log", stage="files", spec="§3.1", rules=("MET001",),
       plants="a metabolism log without its mandatory commits field")
def incomplete_log(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """The first use-brain log of the last third loses its ``commits`` row."""
    s = next((s for s in ctx.logged if s.week >= ctx.options.weeks * 2 // 3
              and s.category == "use-brain"), None)
    if s is None:
        return []
    path = log_path(s)
    if ctx.files.exists(path):
        ctx.files.put(path, "\n".join(ln for ln in ctx.files.text(path).splitlines()
                                      if not re.match(r"^\|?\s*commits\s*[|:]", ln)))
    return [entry("metabolism log missing a mandatory field (commits)", s.sess_id,
                  [("MET001", s.sess_id)], sess_id=s.sess_id)]


@plant("stale-claim", stage="files", spec="§2.6", rules=("CLM001",),
       plants="a work claim left open past its 4 h TTL")
def stale_claim(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """An open claim opened two days before the last session started."""
    stale = ctx.sessions[-1].started_at - timedelta(days=2)
    stale_id = f"sess-{stale:%Y%m%d-%H%M}-work-forgotten"
    ctx.files.put(claim_path(stale_id), (
        f"sess_id: {stale_id}\ntype: work\nscope: projets/{PROJECTS[0]}\nagent: helloWorld\n"
        f'status: open\nopened_at: "{stale:%Y-%m-%dT%H:%M}"\n'))
    return [entry("claim left open past its TTL (work, 4 h)", stale_id,
                  [("CLM001", stale_id)], sess_id=stale_id)]


@plant("ram-over-limit", stage="plan", spec="§5", rules=("WSP006",),
       plants="a workspace ram.md of 70 active lines (limit 50)")
def ram_over_limit(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """The second project's workspace a quarter in gets a 70-line ram.md when rendered."""
    name = workspace_name(PROJECTS[1], max(1, ctx.options.weeks // 4))
    ctx.ram_lines[name] = 70
    return [entry("workspace ram.md over the 50-line limit (70 active lines)", name,
                  [("WSP006", name)], workspace=name)]
