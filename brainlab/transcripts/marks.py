"""What a transcript says about a session's metabolism beyond usage (issue 13, SPEC §3.1-§3.2).

Called by the row builder (:mod:`brainlab.transcripts.build`) for each human prompt
and each tool call; returns ``cc_marks`` rows, derived facts only, never text:

- ``prompt``: the type and mode keywords of a main-chain human prompt (SPEC §2.7, parsed by
  :func:`brainlab.spec.vocabulary.parse_session_keywords`), and ``item_key = 'close-trigger'`` when
  the prompt is one of the close triggers (``fin``, ``on wrappe``...; SPEC §2.4, issue 14);
  the prompt itself is not kept;
- ``todo``: one row per to-do item a ``TodoWrite`` list holds (keyed by a hash of its text)
  or a ``TaskCreate`` / ``TaskUpdate`` call (keyed by its tool call or task id), with status;
- ``decisions``: decision lines (SPEC §5 ``| choisi : ...``) an Edit/Write adds to a
  workspace ``log.md`` (lines counted, not kept);
- ``redirect``: a main-chain assistant text that redirects out-of-perimeter work to another
  session (ADR-019 soft lock; phrases in :data:`brainlab.spec.modes.REDIRECTIONS`): the phrase
  id in ``item_key``, never the text.

Kept apart from the parser's decoding so that a rewrite of the decoding keeps these rules.
"""

from __future__ import annotations

import hashlib
import re

from brainlab.spec.modes import REDIRECTION_HINTS, REDIRECTION_PATTERNS
from brainlab.spec.vocabulary import parse_session_keywords

MARK_COLUMNS = ("session_id", "agent_id", "ts", "kind", "keyword_type", "keyword_mode",
                "keyword_rule", "item_key", "item_status", "lines", "tool_use_id",
                "source_file", "line")
# SPEC §5: workspace/<projet>-<sprint>/log.md holds one line per decision
_WORKSPACE_LOG = re.compile(r"(^|[/\\])workspace[/\\][^/\\]+[/\\]log\.md$")
_DECISION = re.compile(r"\|\s*choisi\s*:", re.IGNORECASE)
_NOT_HUMAN = ("<", "Caveat:", "[Request interrupted")  # command output, reminders, meta
# seeds/session-orchestrator.md.txt:291 and :76-82: the prompts that start the close sequence
CLOSE_TRIGGER = "close-trigger"
_CLOSE = re.compile(r"(session-orchestrator\s*,\s*)?(fin|on wrappe|c['’]est bon|je ferme"
                    r"|ferme la session)", re.IGNORECASE)


def prompt_mark(obj: dict, session_id, ts, path: str, line_no: int) -> tuple | None:
    """A ``prompt`` row for a main-chain human prompt line, or None for anything else."""
    if obj.get("isMeta") is True or obj.get("isSidechain") is True or obj.get("agentId"):
        return None
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):  # text blocks only: tool results are not prompts
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        content = "\n".join(b.get("text", "") for b in content
                            if isinstance(b, dict) and isinstance(b.get("text"), str))
    if not isinstance(content, str) or not content.strip():
        return None
    text = content.lstrip()
    if text.startswith(_NOT_HUMAN):
        return None
    keywords = parse_session_keywords(text[:400])
    return (session_id, None, ts, "prompt", keywords.type, keywords.mode, keywords.rule,
            close_trigger(text), None, None, None, path, line_no)


def close_trigger(text: str) -> str | None:
    """``'close-trigger'`` when the whole prompt is a close trigger of the orchestrator seed."""
    if len(text) > 60:  # a trigger is the whole prompt, never a sentence that contains one
        return None
    return CLOSE_TRIGGER if _CLOSE.fullmatch(text.strip().rstrip(".!").strip()) else None


def redirect_mark(text, session_id, agent_id, ts, path: str, line_no: int) -> tuple | None:
    """A ``redirect`` row when a main-chain assistant text redirects to another session.

    Most texts cost a few substring tests (the prefilter); a text holding a hint word is
    lowercased and searched with each phrase's regexes, which start with a literal (fast scan)
    and bound their quantifiers (linear time). The first phrase found is kept, once per text.
    """
    if agent_id is not None or not isinstance(text, str):
        return None
    for hint in REDIRECTION_HINTS:
        if hint in text:
            break
    else:
        return None
    lowered = text.lower()
    for phrase, pattern in REDIRECTION_PATTERNS:
        if pattern.search(lowered):
            return (session_id, None, ts, "redirect", None, None, None, phrase, None, None,
                    None, path, line_no)
    return None


def tool_marks(name: str, args: dict, tool_use_id, session_id, agent_id, ts, path: str,
               line_no: int) -> list[tuple]:
    """``todo`` and ``decisions`` rows for one tool call (most calls give none)."""
    def row(kind, key=None, status=None, lines=None):
        return (session_id, agent_id, ts, kind, None, None, None, key, status, lines,
                tool_use_id, path, line_no)

    if name == "TodoWrite":
        todos = args.get("todos")
        if not isinstance(todos, list):
            return []
        return [row("todo", "todo:" + _digest(item.get("content")),
                    _status(item.get("status")))
                for item in todos if isinstance(item, dict) and item.get("content")]
    if name == "TaskCreate":
        return [row("todo", f"create:{tool_use_id}", "pending")]
    if name == "TaskUpdate" and args.get("taskId") is not None:
        return [row("todo", f"task:{args.get('taskId')}", _status(args.get("status")))]
    if name in ("Edit", "Write", "MultiEdit"):
        file_path = args.get("file_path")
        if not isinstance(file_path, str) or not _WORKSPACE_LOG.search(file_path):
            return []
        added = decision_lines_added(name, args)
        return [row("decisions", lines=added)] if added else []
    return []


def decision_lines_added(name: str, args: dict) -> int:
    """Decision lines an Edit/Write/MultiEdit adds: lines matching in new text minus old."""
    if name == "Write":
        return _count(args.get("content"))
    edits = args.get("edits") if name == "MultiEdit" else [args]
    total = 0
    for edit in edits if isinstance(edits, list) else []:
        if isinstance(edit, dict):
            total += _count(edit.get("new_string")) - _count(edit.get("old_string"))
    return max(0, total)


def _count(text) -> int:
    return sum(1 for ln in text.splitlines() if _DECISION.search(ln)) if isinstance(
        text, str) else 0


def _digest(text) -> str:
    return hashlib.blake2b(str(text).encode("utf-8", "replace"), digest_size=8).hexdigest()


def _status(value) -> str | None:
    return value[:20] if isinstance(value, str) else None
