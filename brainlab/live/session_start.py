"""``brainlab hook session-start``: what the protocol asks to know at boot, as Claude Code context.

Prints ``{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ...}}``
only when there is something to say (else nothing, exit 0): the SPEC §3.3 coach warning,
the cold-start KPI when not stable, open and stale claims (SPEC §2.6), the running sprint's
breath alert (SPEC §4.4), and the budget of the mode the first prompt declared (SPEC §3.3,
ADR-019; a resumed or compacted session has one). The store's values come from the digest
(:mod:`brainlab.live.digest`), refreshed here read-only when no writer holds the store.
"""

from __future__ import annotations

import json
from pathlib import Path

from brainlab.live import cache


def context_lines(digest: dict, mode: str | None) -> list[str]:
    """The boot context's lines (empty: nothing to say)."""
    lines = []
    if digest.get("coach"):
        lines.append(f"brainlab: SPEC §3.3 coach auto-trigger fired at the last session's boot"
                     f" ({digest['coach']}): consider a +coach session.")
    if digest.get("cold_start"):
        lines.append(f"brainlab: {digest['cold_start']} (SPEC §3.3, last 7 sessions without"
                     " handoff).")
    claims = digest.get("claims")
    if isinstance(claims, dict) and (claims.get("open") or claims.get("stale")):
        lines.append(f"brainlab: claims: {claims.get('open', 0)} open,"
                     f" {claims.get('stale', 0)} stale (SPEC §2.6).")
    if digest.get("breath"):
        lines.append(f"brainlab: running sprint {digest['breath']} (SPEC §4.4).")
    budget = budget_line(mode)
    if budget:
        lines.append(budget)
    return lines


def budget_line(mode: str | None) -> str | None:
    """The declared mode's SPEC §3.3 context budget, or its ADR-019 mode file."""
    if not mode:
        return None
    from brainlab.spec.modes import BUDGETS, MODES

    budget = next((b for b in BUDGETS if b.mode == mode.lower()), None)
    if budget is not None:
        if budget.max_pct is not None:
            text = f"stay under {budget.max_pct:g}% of context"
            if budget.min_commits is not None:
                text += f" (acceptable with more than {budget.min_commits} commits)"
        elif budget.watch_pct is not None:
            text = f"watch line at {budget.watch_pct:g}% of context"
        else:
            text = "no context budget"
        return f"brainlab: mode +{mode}: {text} (SPEC §3.3)."
    declared = next((m for m in MODES if m.name == mode.lower()), None)
    if declared is not None and declared.mode_file:
        return (f"brainlab: mode +{mode} (ADR-019 soft lock): perimeter in"
                f" {declared.mode_file}.")
    return None


def declared_mode(data: dict) -> str | None:
    """The mode the session's first prompt declared (its status line state, else the file)."""
    from brainlab.live import statusline

    session_id = statusline.field(data, "session_id", kind=str)
    transcript = statusline.field(data, "transcript_path", kind=str)
    state = (cache.read_json(cache.state_path(session_id)) if session_id else None) or {}
    if "prompt_seen" not in state and transcript:
        state = {}
        statusline.read_tail(state, transcript)  # a resumed session: its head is read once
    return state.get("mode")


def output(lines: list[str]) -> str:
    """The hook's JSON line for ``lines`` (empty: nothing to print).

    Each line's control characters shown as escapes (:func:`brainlab.common.plaintext.visible`):
    the digest's words come from the store, which transcripts fill.
    """
    if not lines:
        return ""
    from brainlab.common.plaintext import visible

    return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                              "additionalContext": "\n".join(map(visible, lines))}}) + "\n"


def main(stream, write, db: str | None = None, degrade=None, disarm=None) -> int:
    """Print the SessionStart context when there is something to say; 0 whatever happens.

    ``degrade(text)``: what the deadline (:func:`brainlab.live.fast.arm`) prints from now on,
    the boot context of the last digest once it is known; ``disarm()``: stop the deadline
    before printing. Both None: no deadline (click's test runner).
    """
    try:
        from brainlab.live import digest
        from brainlab.live.hook_ingest import store_path
        from brainlab.live.statusline import parse, read_stdin

        data = parse(read_stdin(stream)) or {}
        mode = declared_mode(data)
        cached = cache.read_json(cache.file(cache.DIGEST_NAME)) or {}
        if degrade is not None:  # past the deadline: the last digest's context
            degrade(output(context_lines(cached, mode)))
        store = store_path(db)
        value = digest.refresh(store) if Path(store).exists() else None
        text = output(context_lines(cached if value is None else value, mode))
        if disarm is not None:
            disarm()
        if text:
            write(text)
    except Exception as exc:  # noqa: BLE001 - a hook never fails the session
        cache.log(f"hook session-start: {type(exc).__name__}: {exc}")
    return 0
