"""Protocol vocabulary mapped once: session types to metabolism categories, claim TTLs, workspace rules.

The store writes these mappings into small lookup tables, so SQL views and Python (the
synthetic brain, notebooks) read the same values.
"""

from __future__ import annotations

from dataclasses import dataclass

# SPEC §2.2: type -> metabolism category. Category names themselves map to themselves.
SESSION_CATEGORIES: dict[str, str] = {
    **dict.fromkeys(["work", "sprint", "deploy", "debug", "infra", "urgence", "review"], "use-brain"),
    **dict.fromkeys(["brain", "edit-brain", "kernel", "pilote", "agents"], "build-brain"),
    **dict.fromkeys(["explore", "brainstorm", "navigate", "coach", "capital", "handoff", "audit",
                     "learning"], "explore-brain"),
    "chill": "none",
    "use-brain": "use-brain",
    "build-brain": "build-brain",
    "explore-brain": "explore-brain",
    "auto": "auto",  # mixed session: kept as its own value (SPEC §2.2)
}
UNKNOWN_CATEGORY = "unknown"

# SPEC §2.6: claim TTL in hours by session type (V2); other types use the default.
CLAIM_TTL_HOURS: dict[str, float] = {
    "work": 4, "brain": 4, "explore": 8, "pilote": 12, "chill": 12, "learning": 4,
}
CLAIM_TTL_DEFAULT_HOURS = 4.0

# SPEC §5: the only files a workspace may hold, and the archive values README.md may declare.
WORKSPACE_FILES = ("README.md", "ram.md", "log.md", "feedback.md")
WORKSPACE_ARCHIVE_VALUES = ("auto", "keep", "30d", "90d", "permanent")
WORKSPACE_README_MAX_LINES = 10
WORKSPACE_RAM_MAX_ACTIVE_LINES = 50

# SPEC §3.1: fields the metabolism scribe refuses to write a log without.
METABOLISM_MANDATORY = ("tokens_used", "context_peak_pct", "context_at_close", "duration_min",
                        "commits")


def category_of(session_type: str | None) -> str:
    """The metabolism category of a session type (``unknown`` when the type is not in SPEC §2.2)."""
    if not session_type:
        return UNKNOWN_CATEGORY
    return SESSION_CATEGORIES.get(session_type.strip().lower(), UNKNOWN_CATEGORY)

# SPEC §2.7 / ADR-019: a mode is a `+word` keyword in the first message (`brain +navigate`);
# a type is declared as `brain <type>` (seeds/session-orchestrator.md: "brain ou work ?").
MODE_KEYWORD_PREFIX = "+"
SESSION_KEYWORD = "brain"


@dataclass(frozen=True)
class SessionKeywords:
    """Type and mode a session's first message declares, and the rule that gave them."""

    type: str | None
    mode: str | None
    rule: str  # brain-type | brain-mode | brain-bare | no-keyword | empty


def parse_session_keywords(text: str | None) -> SessionKeywords:
    """Read ``brain <type>`` and ``+<mode>`` in a session's first message (SPEC §2.7).

    Only the first line counts and it must start with ``brain`` (case-insensitive):
    ``brain work`` gives type work; ``brain +navigate`` gives mode navigate and, the mode
    being a SPEC §2.2 type, type navigate; ``brain work +coach`` gives both. A bare
    ``brain``, or ``brain`` followed by a word that is no SPEC §2.2 type (prose such as
    "brain, fix this"), is ambiguous (the orchestrator asks "brain ou work ?"): no type.
    Shared by the measured metabolism (issue 13) and the compliance linter.
    """
    if not text or not text.strip():
        return SessionKeywords(None, None, "empty")
    words = text.strip().splitlines()[0].split()
    if not words or words[0].lower() != SESSION_KEYWORD:
        return SessionKeywords(None, None, "no-keyword")
    rest = [w.strip(".,;:!?").lower() for w in words[1:6]]
    modes = [w[1:] for w in rest if w.startswith(MODE_KEYWORD_PREFIX) and len(w) > 1]
    mode = modes[0] if modes else None
    plain = [w for w in rest if w and not w.startswith(MODE_KEYWORD_PREFIX)]
    if plain and plain[0] in SESSION_CATEGORIES:
        return SessionKeywords(plain[0], mode, "brain-type")
    if mode:
        return SessionKeywords(mode if mode in SESSION_CATEGORIES else None, mode, "brain-mode")
    return SessionKeywords(None, None, "brain-bare")
