"""Session-mode plants (issue 14: MOD, BUD, SES002): compliant modes by default, one breach per rule.

Two registered plants. ``fit-modes`` runs on the plan before any file exists: each session's
working mode is one whose SPEC §3.3 budget its context peak fits (an agent declares
``+sprint`` for a session it expects to run hot), except two planted sessions that stay over
budget (BUD001) or past the prod watch line (BUD002). ``mode-transcripts`` runs with the
other file plants and adds brain-session transcripts of its own at night (no log starts
within hours, so none is matched to a log), of type ``chill`` (no metabolism score: the demo's
health, ratio and signals do not move): a mode declared late (MOD001), an unknown mode
(MOD002), ``+navigate`` without reading its mode file (MOD003), ``+navigate`` editing a project
file and committing (MOD004), an unknown type in ``brain boot mode <type>`` (SES002), and one
compliant ``+navigate`` session that redirects out-of-perimeter work (ADR-019), counted by
``mode_redirections`` and breaking nothing.
"""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import datetime, time, timedelta

from brainlab.spec.modes import BUDGETS as MODE_BUDGETS
from brainlab.synth.model import SynthSession, agent_sizes
from brainlab.synth.registry import SynthContext, entry, plant
from brainlab.synth.transcripts import TranscriptWriter, session_lines, tool_use

BUDGETS = {b.mode: b for b in MODE_BUDGETS}  # SPEC §3.3, as the rules read them
UNKNOWN_MODE = "turbo"  # no mode file, boot flag or working mode
UNKNOWN_TYPE = "hotfix"  # not a SPEC §2.2 type
REDIRECT_FR = ("Ce truc appartient à une session projet — ouvre une fenêtre dédiée, je reste "
               "ici en navigation.")  # modes/brain-navigate.md:33


def fits(mode: str, peak: float, commits: int) -> bool:
    """Whether a session of this working mode, peak and commits stays within SPEC §3.3."""
    budget = BUDGETS.get(mode)
    if budget is None:
        return True
    if budget.watch_pct is not None and peak >= budget.watch_pct:
        return False
    return not (budget.max_pct is not None and peak >= budget.max_pct
                and not (budget.min_commits is not None and commits > budget.min_commits))


def fit_modes(sessions: list[SynthSession]) -> list[SynthSession]:
    """The plan with working modes that fit each session's peak, but two planted breaches.

    No random draw, so the plan's other values and every seeded stream stay as they were.
    The breaches (a conserve session at 50% or more, a prod one between 65% and 80%) are the
    sessions that still do not fit: :func:`budget_plants` lists them.
    """
    working = ("prod", "sprint", "conserve", "dev")
    over = next((s for s in sessions if s.mode in working and s.context_peak_pct >= 50), None)
    watch = next((s for s in sessions if s.mode in working and 65 <= s.context_peak_pct < 80
                  and s is not over), None)
    fitted = []
    for s in sessions:
        if s is over:
            s = replace(s, mode="conserve")
        elif s is watch:
            s = replace(s, mode="prod")
        elif not fits(s.mode, s.context_peak_pct, s.commits):
            s = replace(s, mode=next(m for m in ("prod", "sprint", "dev")
                                     if fits(m, s.context_peak_pct, s.commits)))
        fitted.append(s)
    return fitted


def budget_plants(sessions: list[SynthSession]) -> list[dict]:
    """Manifest entries of the sessions over their mode's budget (BUD001) or watch (BUD002)."""
    entries = []
    for s in sessions:
        if fits(s.mode, s.context_peak_pct, s.commits):
            continue
        rule = "BUD002" if BUDGETS[s.mode].watch_pct is not None else "BUD001"
        entries.append(_entry(f"a {s.mode} session peaks at {s.context_peak_pct}% of context "
                              "(SPEC §3.3 budget)", s.sess_id, [(rule, s.sess_id)]))
    return entries


@plant("fit-modes", stage="plan", spec="§3.3", rules=("BUD001", "BUD002"),
       plants="working modes that fit each session's peak, but one session over its mode's "
              "budget and one past the prod watch line")
def fit_modes_plant(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """Fit the plan's modes (no draw) and list the two sessions left over budget."""
    ctx.sessions = fit_modes(ctx.sessions)
    return budget_plants(ctx.sessions)


@plant("mode-transcripts", stage="files", spec="§2.2, §2.7, §3.3, ADR-019",
       after=("feedback-read",),  # it picks among the sessions' rendered transcripts
       rules=("MOD001", "MOD002", "MOD003", "MOD004", "SES002"),
       plants="night-time chill transcripts: a late mode, an unknown mode, +navigate without "
              "its mode file or editing a project, an unknown boot type; one compliant "
              "redirection")
def mode_transcripts(ctx: SynthContext, rng: random.Random) -> list[dict]:
    """Write the mode plants' transcripts; return their manifest entries."""
    explore = [s for s in ctx.sessions if s.category == "explore-brain" and s.project is None]
    if not explore:
        return []
    sizes = {a["agent"]: a["bytes"] for a in agent_sizes()}
    base = explore[len(explore) // 2]
    night = datetime.combine(base.started_at.date() + timedelta(days=1), time(2, 0))
    folder = "claude/projects/-home-user-brain"
    plants = [
        ("a +coach mode declared in the third prompt, not in the first message", "MOD001",
         "brain chill +brainstorm", _late_mode),
        (f"an unknown mode +{UNKNOWN_MODE} declared", "MOD002",
         f"brain chill +{UNKNOWN_MODE}", None),
        ("+navigate declared and modes/brain-navigate.md never read", "MOD003",
         "brain chill +navigate", None),
        ("beside the MOD003 plant, a compliant +navigate session reads its mode file and "
         "redirects project work (mode_redirections counts it)", None,
         "brain chill +navigate", _redirects),
        ("+navigate session edits a project file and commits (out of its perimeter)",
         "MOD004", "brain chill +navigate", _out_of_perimeter),
        (f"a transcript declares the unknown session type {UNKNOWN_TYPE}", "SES002",
         f"brain boot mode {UNKNOWN_TYPE}", None),
    ]
    entries: list[dict] = []
    for i, (effect, rule, prompt, change) in enumerate(plants):
        s = replace(base, sess_id=f"mode-plant-{i}", started_at=night + timedelta(minutes=25 * i),
                    duration_min=15, mode="brainstorm", agents_used=[], type="chill",
                    category="none",  # chill: no score, so no metabolism signal moves
                    commits=int(change is _out_of_perimeter))  # its commit makes it
        # significant: its close runs the scribe (SPEC §2.4), so only MOD004 fires on it
        w = session_lines(s, rng, sizes)
        w.lines[0]["message"]["content"] = prompt
        if "+navigate" in prompt and rule != "MOD003":
            _read_mode_file(w)
        if change:
            change(w)
        where = f"{folder}/{w.id}.jsonl"
        ctx.files.put_jsonl(where, w.lines)
        if rule is None:  # a compliant session: listed with the plant before it
            entries[-1]["effect"] += f"; {effect}"
            entries[-1]["where"] += f", {where}"
            entries[-1]["transcript_sessions"].append(w.id)
        else:
            entries.append(_entry(effect, where, [(rule, w.id)], transcript=w.id))
    return entries


def _entry(effect: str, where: str, violations: list[tuple[str, str]],
           transcript: str | None = None) -> dict:
    extra = {"transcript_sessions": [transcript]} if transcript else {}
    return entry(f"compliance: {effect}", where, violations, **extra)


def _before_exit(w: TranscriptWriter, make) -> None:
    """Insert the lines ``make(at)`` returns just before the closing ``/exit`` prompt."""
    end = datetime.strptime(w.lines[-1]["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ")
    w.lines[-1:-1] = make(end - timedelta(seconds=30))


def _call(w: TranscriptWriter, at: datetime, block: dict, result: str | None = None) -> list[dict]:
    """One API call with one block (and the tool's result when it is a tool use)."""
    lines = w.call(at, 12_000, 50, [block])
    if result is not None:
        lines.append(w.result(at + timedelta(seconds=1), block["id"], result))
    return lines


def _prompt(w: TranscriptWriter, at: datetime, text: str) -> dict:
    line = w.base("user", at)
    line["message"] = {"role": "user", "content": text}
    return line


def _read_mode_file(w: TranscriptWriter) -> None:
    """Boot: read modes/brain-navigate.md right after the first message (ADR-019:81)."""
    at = datetime.strptime(w.lines[0]["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ")
    read = tool_use(w.next_id("toolu"), "Read", file_path="/home/user/brain/modes/brain-navigate.md")
    w.lines[1:1] = _call(w, at + timedelta(seconds=1), read, "mode")


def _late_mode(w: TranscriptWriter) -> None:
    _before_exit(w, lambda at: [_prompt(w, at, "what next?"),
                                _prompt(w, at + timedelta(seconds=5), "brain +coach")])


def _out_of_perimeter(w: TranscriptWriter) -> None:
    edit = tool_use(w.next_id("toolu"), "Edit", file_path="/home/user/projets/originsdigital/src/"
                 "login.ts", old_string="a", new_string="b")
    commit = tool_use(w.next_id("toolu"), "Bash", command="git commit -am 'fix the login form'")
    _before_exit(w, lambda at: [*_call(w, at, edit, "ok"),
                                *_call(w, at + timedelta(seconds=5), commit, "[main 1a2b] ok")])


def _redirects(w: TranscriptWriter) -> None:
    text = {"type": "text", "text": REDIRECT_FR}
    _before_exit(w, lambda at: [
        _prompt(w, at, "can you fix the login bug in originsdigital?"),
        *_call(w, at + timedelta(seconds=5), text)])
