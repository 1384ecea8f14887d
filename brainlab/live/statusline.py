"""``brainlab statusline``: one line for Claude Code's status bar, from its JSON and a small state.

Claude Code runs the command after each assistant message with a JSON object on stdin
(``session_id``, ``transcript_path``, ``model``, ``cost``, ``context_window``, ``rate_limits``...;
any of them may be missing or null: before the first call, after ``/compact``; ``rate_limits``
is absent in some versions: a segment whose field is missing is left out, silently). The line
shows model, reasoning effort (``effort.level``), context used (coloured against the SPEC §3.3
budget of the session's mode, else the saturation peak of its type's category), session cost,
today's cost, the 5-hour limit and its reset, the circuit ticket of the worktree it runs in,
and the protocol's word: declared type and mode, the coach warning (SPEC §3.3), the
running sprint's breath alert (SPEC §4.4).

It never opens the store and never reads a whole transcript: a per-session state
(:mod:`brainlab.live.cache`) keeps the offset reached in the transcript and what its new
lines said (the declared type and mode, commits, the last call's context tokens); the store's
side (today's cost of the other sessions, the coach and breath words) comes from the digest
the last ingest wrote (:mod:`brainlab.live.digest`). Standard library only, besides the
protocol's keyword parser the first time a session's first prompt is read.
"""

from __future__ import annotations

import json
import os
import re
import time

from brainlab.live import cache
from brainlab.transcripts import roots

SEGMENTS = ("model", "effort", "context", "cost", "today", "limit", "ticket", "protocol")
MAX_INPUT = 1 << 20  # bytes of stdin read; more is not a status line object
HEAD_BYTES = 256 << 10  # a transcript seen first: its head (first prompt) and ...
TAIL_BYTES = 256 << 10  # ... its tail (last call), never the middle
STEP_BYTES = 4 << 20  # at most this much new transcript read per run (the rest next run)
MINIMAL = "brainlab"
MISSING = "—"  # brainlab.common.plaintext.MISSING (tests/test_live_safety.py checks they agree)
_INF = float("inf")
MAX_WIDTH = 200  # columns of the line when neither --width nor $COLUMNS says (one line, bounded)
MAX_COLUMNS = 1000  # and never more, whatever they say
# a worktree .claude/worktrees/<ticket> (or a folder below it) works on that circuit ticket:
# the rule of `usage tickets` (brainlab/metrics/usage_groups.py TICKET, ticket_usage.sql)
_TICKET = r"[/\\]\.claude[/\\]worktrees[/\\]([^/\\]+)"  # compiled when a path holds "worktrees"
_COLOURS = {"ok": "32", "watch": "33", "over": "31", "dim": "2", "alert": "35"}


def read_stdin(stream) -> bytes:
    """At most :data:`MAX_INPUT` bytes of ``stream`` (a binary file)."""
    try:
        return stream.read(MAX_INPUT + 1)
    except (OSError, ValueError):
        return b""


def parse(raw: bytes) -> dict | None:
    """The status line object, or None for empty, oversized or malformed input."""
    if not raw or len(raw) > MAX_INPUT:
        return None
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):  # 1 MB of [[[[ too
        return None
    return value if isinstance(value, dict) else None


def field(obj, *keys, kind=None):
    """``obj[k1][k2]...`` when every level is a dict and the leaf is of ``kind``; else None.

    ``kind=float``: a finite number (NaN, ±Infinity and ``1e400`` are None).
    """
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    if kind is float:
        if isinstance(obj, bool) or not isinstance(obj, (int, float)):
            return None
        if isinstance(obj, int):  # a 400-digit integer: no float holds it
            return float(obj) if -1e300 < obj < 1e300 else None
        return obj if obj == obj and obj not in (_INF, -_INF) else None
    if kind is not None and not isinstance(obj, kind):
        return None
    return obj


# The range each number Claude Code gives must fall in to be shown or recorded: the ingest's
# (brainlab/spec/ranges.py, checked equal by tests/test_live_safety.py), spelled here because
# importing that module (dataclasses, datetime) would cost the status line a tenth of its run.
PERCENT = (0.0, 1000.0)  # ranges.PERCENT: above 100 happens when a limit is overrun
COST_USD = (0.0, 1e5)  # ranges.COST_USD
TOKENS = (0.0, 1e9)  # ranges.TOKENS: one call's (a context window's size)
SESSION_TOKENS = (0.0, 1e12)  # ranges.SESSION_TOKENS: a session's totals
EPOCH_S = (1577836800.0, 4102444800.0)  # 2020-01-01 .. 2100-01-01: a reset time
INVALID = "invalid"  # a number given but not a reading: shown as the missing marker


def number(obj, *keys, bounds=PERCENT):
    """A number field: the float, None when absent or not a number, or :data:`INVALID`.

    :data:`INVALID`: not finite or outside ``bounds`` (NaN, ±Infinity, ``1e308``, a
    negative percentage, a 400-digit integer).
    """
    value = field(obj, *keys)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    if isinstance(value, float) and (value != value or value in (_INF, -_INF)):
        return INVALID  # NaN, ±Infinity (``math`` is a shared library: not loaded for this)
    if not bounds[0] <= value <= bounds[1]:  # an int compares whole: 10**400 too
        return INVALID
    return float(value)


def render(data: dict | None, segments=SEGMENTS, plain: bool = False, width: int | None = None,
           now: float | None = None) -> str:
    """The status line for ``data`` (None: the minimal line); advances and saves the state."""
    if data is None:
        return MINIMAL
    now = time.time() if now is None else now
    session_id = field(data, "session_id", kind=str)
    state = advance(session_id, field(data, "transcript_path", kind=str), data, now)
    digest = cache.read_json(cache.file(cache.DIGEST_NAME)) or {}
    parts = []
    for name in segments:
        piece = _SEGMENT_FUNCS.get(name, lambda *_: None)(data, state, digest, now, plain)
        if piece:
            parts.append(piece)
    return fit(parts, min(width or MAX_WIDTH, MAX_COLUMNS))


def fit(parts: list[tuple[str, str]], width: int | None) -> str:
    """Join (text, coloured text) pieces with `` | ``, dropping the last ones past ``width``."""
    if not parts:
        return MINIMAL
    shown = list(parts)
    while width and len(shown) > 1 and len(" | ".join(p[0] for p in shown)) > width:
        shown.pop()
    line = " | ".join(p[1] for p in shown)
    if width and len(shown) == 1 and len(shown[0][0]) > width:
        return shown[0][0][:max(width - 1, 1)] + "…"
    return line


def _paint(text: str, tone: str | None, plain: bool) -> tuple[str, str]:
    """(text, coloured text) of a segment, its data made inert first.

    Control characters as escapes: :func:`brainlab.common.plaintext.visible`, the printer
    of every command.
    """
    if not text.isprintable():  # printable text holds nothing visible() escapes: the usual
        from brainlab.common.plaintext import visible  # segment skips its import

        text = visible(text)
    if plain or not tone:
        return text, text
    return text, f"\x1b[{_COLOURS[tone]}m{text}\x1b[0m"


# --- the per-session state ------------------------------------------------------------------
def advance(session_id: str | None, transcript: str | None, data: dict, now: float) -> dict:
    """Load the session's state, read the transcript's new lines, record limits, save it."""
    if not session_id:
        record_limits(None, {}, data, now)
        return {}
    path = cache.state_path(session_id)
    state = cache.read_json(path) or {}
    before = json.dumps(state, sort_keys=True)
    fd = None
    if transcript:  # only a transcript in Claude's folders: never recorded, never read else
        fd, _reason = roots.open_transcript(transcript)
        transcript = transcript if fd is not None else None
    if transcript and transcript != state.get("transcript"):
        state = {"day": state.get("day"), "day_base_usd": state.get("day_base_usd"),
                 "limits": state.get("limits"), "transcript": transcript, "offset": 0}
    if fd is not None:
        read_tail(state, fd)
    day_cost(state, number(data, "cost", "total_cost_usd", bounds=COST_USD), now)
    record_limits(session_id, state, data, now)
    if json.dumps(state, sort_keys=True) != before:
        cache.write_json(path, state)
    return state


def read_tail(state: dict, transcript: str | int) -> bool:
    """Advance ``state`` over the transcript's complete new lines (bounded per run).

    ``transcript``: a path, opened only through
    :func:`brainlab.transcripts.roots.open_transcript` (a regular ``*.jsonl`` file inside
    Claude's folders, without blocking or following a link out), or a descriptor it gave
    (closed here). False when the path was refused (``state`` unchanged).
    """
    if isinstance(transcript, str):
        transcript, _reason = roots.open_transcript(transcript)
        if transcript is None:
            return False
    try:
        with open(transcript, "rb", closefd=True) as handle:
            size = os.fstat(handle.fileno()).st_size
            offset = state.get("offset")
            offset = offset if isinstance(offset, int) and not isinstance(offset, bool) else 0
            if not 0 <= offset <= size:  # rewritten or truncated (or a bad state): start over
                offset = 0
                for key in ("type", "mode", "budget", "commits", "prompt_seen"):
                    state.pop(key, None)
            if offset == 0 and size > HEAD_BYTES + TAIL_BYTES:  # first sight of a long one
                scan(state, handle.read(HEAD_BYTES))  # its cut last line fails to parse
                handle.seek(size - TAIL_BYTES)
                chunk = handle.read(TAIL_BYTES)
                scan(state, chunk[chunk.find(b"\n") + 1:])
                state["offset"] = size - len(chunk) + chunk.rfind(b"\n") + 1
                state["partial"] = True  # commits counted on the tail only
                return True
            handle.seek(offset)
            chunk = handle.read(min(size - offset, STEP_BYTES))
    except OSError:
        return True
    end = chunk.rfind(b"\n") + 1  # an unfinished last line waits for the next run
    if end:
        scan(state, chunk[:end])
        state["offset"] = offset + end
    return True


def scan(state: dict, chunk: bytes) -> None:
    """Fold complete JSONL lines into ``state`` (first prompt, commits, last context)."""
    for line in chunk.split(b"\n"):
        if not line:
            continue
        prompt = b'"user"' in line and "prompt_seen" not in state
        usage = b'"usage"' in line and b'"assistant"' in line
        commit = b"commit" in line and b'"tool_use"' in line  # `git -C x commit` too
        if not (prompt or usage or commit):
            continue
        try:
            obj = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            continue
        if not isinstance(obj, dict):
            continue
        message = obj.get("message")
        if commit and isinstance(message, dict) and isinstance(message.get("content"), list):
            found = commits_in(message["content"])
            if found:
                state["commits"] = state.get("commits", 0) + found
        if obj.get("isSidechain") is True:  # a subagent's: its commits count (as the
            continue  # ingest's), its prompt and context do not
        if prompt:
            _first_prompt(state, obj)
        if not isinstance(message, dict):
            continue
        if usage and obj.get("type") == "assistant":
            tokens = sum(v for k in ("input_tokens", "cache_creation_input_tokens",
                                     "cache_read_input_tokens")
                         if isinstance(v := field(message, "usage", k), int)
                         and not isinstance(v, bool) and TOKENS[0] <= v <= TOKENS[1])
            if tokens:
                state["context_tokens"] = tokens


def commits_in(content: list) -> int:
    """The git commits among a message's tool calls.

    :func:`brainlab.spec.commits.is_git_commit`: the ingest's rule, so the budget colour and
    rules BUD001/BUD002 count alike.
    """
    from brainlab.spec.commits import is_git_commit

    return sum(1 for block in content if isinstance(block, dict)
               and block.get("type") == "tool_use"
               and is_git_commit(block.get("name"), field(block, "input", "command", kind=str)))


def _first_prompt(state: dict, obj: dict) -> None:
    """The type and mode the session's first human prompt declares (SPEC §2.7)."""
    from brainlab.transcripts.marks import prompt_mark  # the ingest's own rule, once

    mark = prompt_mark(obj, None, None, "", 0)
    if mark is None:
        return
    state["prompt_seen"] = True
    if mark[4]:
        state["type"] = mark[4]
    if mark[5]:
        state["mode"] = mark[5]
    state["budget"] = budget_of(mark[5], mark[4])


def day_cost(state: dict, total: float | str | None, now: float) -> None:
    """Keep the session's cost at the start of today's UTC day (``day_base_usd``)."""
    if not isinstance(total, float):  # absent, or not a cost (NaN, 1e308, negative)
        return
    today = time.strftime("%Y-%m-%d", time.gmtime(now))
    if state.get("day") != today:
        # first sight of the session: all of its cost counts for today; a new day: from here
        state["day_base_usd"] = state.get("last_cost_usd") if state.get("day") else 0.0
        state["day"] = today
    state["last_cost_usd"] = total


ID_MAX = 200  # characters of a session or model id a snapshot keeps (a UUID is 36)
RESETS_AHEAD_S = 40 * 86400  # ranges.RESETS_AHEAD_DAYS: a limit resets at most this far ahead
LIMIT_FIELDS = (("five_hour_pct", ("rate_limits", "five_hour", "used_percentage"), PERCENT),
                ("five_hour_resets_at", ("rate_limits", "five_hour", "resets_at"), None),
                ("seven_day_pct", ("rate_limits", "seven_day", "used_percentage"), PERCENT),
                ("seven_day_resets_at", ("rate_limits", "seven_day", "resets_at"), None),
                ("context_used_pct", ("context_window", "used_percentage"), PERCENT),
                ("context_window_size", ("context_window", "context_window_size"), TOKENS),
                # what the user saw the session cost (usage reconcile, issue 45)
                ("total_cost_usd", ("cost", "total_cost_usd"), COST_USD),
                ("total_input_tokens", ("context_window", "total_input_tokens"), SESSION_TOKENS),
                ("total_output_tokens", ("context_window", "total_output_tokens"),
                 SESSION_TOKENS))


def limit_values(data: dict, now: float) -> dict:
    """The snapshot's values: each a number inside its range, else None (issue 47 item 1).

    A non-finite or out-of-range number (``context_window_size: -Infinity``,
    ``used_percentage: -1e308``) is never written: the next ingest would refuse the line.
    A reset time lies between 2020 and :data:`RESETS_AHEAD_S` after ``now``.
    """
    values = {}
    for name, keys, bounds in LIMIT_FIELDS:
        value = number(data, *keys, bounds=bounds or (EPOCH_S[0], now + RESETS_AHEAD_S))
        values[name] = None if value is INVALID else value
    return values


def record_limits(session_id: str | None, state: dict, data: dict, now: float) -> None:
    """Append the limit and context values seen, when they changed, to the snapshot file."""
    values = limit_values(data, now)
    if all(v is None for v in values.values()) or state.get("limits") == values:
        return
    state["limits"] = values
    model = field(data, "model", "id", kind=str)
    try:
        cache.append_line(cache.file(cache.LIMITS_NAME), {  # ids of a sane length only
            "ts": round(now, 3), "session_id": session_id if session_id and len(
                session_id) <= ID_MAX else None,
            "model_id": model if model and len(model) <= ID_MAX else None, **values})
    except (OSError, ValueError) as exc:
        cache.log(f"statusline: limit snapshot not written: {exc}")


# --- segments ---------------------------------------------------------------------------------
def _model(data, state, digest, now, plain):
    name = field(data, "model", "display_name", kind=str) or field(data, "model", "id", kind=str)
    return _paint(name[:30], None, plain) if name else None


def context_pct(data: dict, state: dict) -> float | str | None:
    """Context used: Claude Code's figure, else the last call's tokens over the window size.

    :data:`INVALID` when Claude Code's figure is not a percentage (NaN, -1e308).
    """
    pct = number(data, "context_window", "used_percentage")
    if pct is not None:
        return pct
    size = number(data, "context_window", "context_window_size", bounds=TOKENS)
    size = size if isinstance(size, float) and size > 0 else 200_000
    tokens = state.get("context_tokens")
    if not isinstance(tokens, int) or isinstance(tokens, bool) \
            or not TOKENS[0] <= tokens <= TOKENS[1]:
        return None
    pct = 100.0 * tokens / size
    return pct if PERCENT[0] <= pct <= PERCENT[1] else INVALID


def budget_of(mode: str | None, session_type: str | None) -> dict | None:
    """The SPEC §3.3 line the context is coloured against, kept in the state once known.

    A declared working mode's budget (``brainlab.spec.modes.BUDGETS``: watch, max, commits);
    else the saturation peak of the type's category (``Thresholds``: use-brain 80,
    build-brain 85); None when the session declared neither.
    """
    if mode:
        from brainlab.spec.modes import budget_of_mode

        budget = budget_of_mode(mode)
        if budget is not None:
            return {"watch": budget.watch_pct, "max": budget.max_pct,
                    "min_commits": budget.min_commits, "basis": f"+{budget.mode}"}
    if session_type:
        from brainlab.spec.vocabulary import category_of

        category, t = category_of(session_type), _thresholds()
        peak = {"use-brain": t.saturation_peak_use,
                "build-brain": t.saturation_peak_build}.get(category)
        if peak is not None:
            return {"over_above": peak, "basis": category}
    return None


def _thresholds():
    """The settings' thresholds, read once a session (when its type is known).

    ``[thresholds]`` of the project's brainlab.toml, found from the folder Claude Code runs
    the line in.
    """
    from brainlab.common.paths import config_requested

    if config_requested():
        from brainlab.settings import current

        return current().thresholds
    from brainlab.spec.thresholds import Thresholds

    return Thresholds()


def budget_tone(pct: float, budget: dict | None, commits: int) -> str:
    """The context's tone against ``budget`` (SPEC §3.3).

    A mode's budget: :mod:`brainlab.spec.budget_rule`, the rule the store's
    mode_budget_checks reads too (over its max unless commits exceed its count, past its
    watch line); a category: over its saturation peak; else ok.
    """
    if not budget:
        return "ok"
    if budget.get("over_above") is not None:
        return "over" if pct > budget["over_above"] else "ok"
    from brainlab.spec.budget_rule import budget_tone as rule  # the one SPEC §3.3 rule

    return rule(pct, budget.get("watch"), budget.get("max"), budget.get("min_commits"), commits)


def _effort(data, state, digest, now, plain):
    """The session's reasoning effort (``effort.level``; newer versions), when given."""
    level = field(data, "effort", "level", kind=str) or field(data, "effort", kind=str)
    return _paint(level[:12], "dim", plain) if level else None


def ticket_of(data: dict) -> str | None:
    """The circuit ticket of the worktree the session runs in, else None.

    Read from ``worktree.path``, then ``workspace.current_dir``, then ``cwd``: the first under
    ``.claude/worktrees/<ticket>``.
    """
    for keys in (("worktree", "path"), ("workspace", "current_dir"), ("cwd",)):
        path = field(data, *keys, kind=str)
        found = re.search(_TICKET, path) if path and "worktrees" in path else None
        if found:
            return found.group(1)
    return None


def _ticket(data, state, digest, now, plain):
    ticket = ticket_of(data)
    return _paint(f"ticket {ticket[:24]}", None, plain) if ticket else None


def _context(data, state, digest, now, plain):
    pct = context_pct(data, state)
    if pct is None:
        return None
    if pct is INVALID:
        return _paint(f"ctx {MISSING}", None, plain)
    tone = budget_tone(pct, state.get("budget"), state.get("commits", 0))
    return _paint(f"ctx {pct:.0f}%", tone, plain)


def _cost(data, state, digest, now, plain):
    total = number(data, "cost", "total_cost_usd", bounds=COST_USD)
    if total is INVALID:
        return _paint(f"${MISSING}", None, plain)
    return _paint(f"${total:.2f}", None, plain) if total is not None else None


def _usd(value) -> bool:
    """A cost read back from the state or the digest: a finite number in range."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and COST_USD[0] <= value <= COST_USD[1]  # NaN fails the comparison


def _today(data, state, digest, now, plain):
    """Today's cost: the other sessions' (the digest, same UTC day) plus this one's today."""
    today = time.strftime("%Y-%m-%d", time.gmtime(now))
    others = 0.0
    if digest.get("day") == today and isinstance(digest.get("sessions"), dict):
        sid = field(data, "session_id", kind=str)
        others = sum(v for k, v in digest["sessions"].items() if k != sid and _usd(v))
    mine = 0.0
    if state.get("day") == today and _usd(state.get("last_cost_usd")):
        base = state.get("day_base_usd")
        mine = state["last_cost_usd"] - (base if _usd(base) else 0.0)
    if not others and not mine and digest.get("day") != today:
        return None
    total = others + mine
    if not -COST_USD[1] <= total <= COST_USD[1] * 1000:  # a thousand sessions' worth
        return _paint(f"today ${MISSING}", None, plain)
    return _paint(f"today ${total:.2f}", None, plain)


def _limit(data, state, digest, now, plain):
    pct = number(data, "rate_limits", "five_hour", "used_percentage")
    if pct is None:
        return None
    if pct is INVALID:
        return _paint(f"5h {MISSING}", None, plain)
    text = f"5h {pct:.0f}%"
    resets = number(data, "rate_limits", "five_hour", "resets_at",
                    bounds=(EPOCH_S[0], now + RESETS_AHEAD_S))
    if isinstance(resets, float) and resets > now:
        left = int(resets - now) // 60
        text += f" ↻{left // 60}h{left % 60:02d}" if left >= 60 else f" ↻{left}m"
    return _paint(text, "over" if pct >= 80 else "watch" if pct >= 50 else None, plain)


def _protocol(data, state, digest, now, plain):
    words = []
    if state.get("type") or state.get("mode"):
        words.append(" ".join(filter(None, [state.get("type"),
                                            state.get("mode") and "+" + state["mode"]])))
    alerts = [w for w in (digest.get("coach"), digest.get("breath")) if isinstance(w, str) and w]
    if not words and not alerts:
        return None
    text = " ".join(words + alerts)
    return _paint(text, "alert" if alerts else None, plain)


_SEGMENT_FUNCS = {"model": _model, "effort": _effort, "context": _context, "cost": _cost,
                  "today": _today, "limit": _limit, "ticket": _ticket, "protocol": _protocol}
