"""Protocol vocabulary mapped once: session types to metabolism categories, claim TTLs, workspace rules.

Part of the spec layer (was ``brainlab/protocol.py``). The store writes these mappings into
small lookup tables, so SQL views and Python (the synthetic brain, notebooks) read the same
values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from brainlab.spec.modes import SOFT_LOCK_MODES

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
# SPEC §3.2 v2: the categories a health score is defined for (none, auto and unknown have
# none); the views that rank, average or label scored sessions join the store's
# ``scored_categories`` table, written from this tuple.
SCORED_CATEGORIES: tuple[str, ...] = ("use-brain", "build-brain", "explore-brain")

# SPEC §2.6: claim TTL in hours by session type (V2); other types use the default.
CLAIM_TTL_HOURS: dict[str, float] = {
    "work": 4, "brain": 4, "explore": 8, "pilote": 12, "chill": 12, "learning": 4,
}
CLAIM_TTL_DEFAULT_HOURS = 4.0

# SPEC §5: the only files a workspace may hold, and the archive values README.md may declare.
WORKSPACE_FILES = ("README.md", "ram.md", "log.md", "feedback.md")
WORKSPACE_ARCHIVE_VALUES = ("auto", "keep", "30d", "90d", "permanent")
# SPEC §5: days a workspace archived ``30d``/``90d`` is kept after its TTL (rule WSP003);
# the store's ``workspace_retention`` table.
WORKSPACE_RETENTION_DAYS: dict[str, int] = {"30d": 30, "90d": 90}
# SPEC §5 lifecycle: a workspace's TTL after its sprint ends when README.md names none (7d).
WORKSPACE_TTL_DEFAULT_DAYS = 7
WORKSPACE_README_MAX_LINES = 10
WORKSPACE_RAM_MAX_ACTIVE_LINES = 50
# SPEC §5, seeds/workspace-spec.md.txt "Graduation par mode": the sections a workspace keeps
# active under each declared mode, and who may read which file (read rights).
WORKSPACE_SECTIONS_BY_MODE = {
    "prod": "ram.md (state + questions) + log.md (decisions)",
    "dev": "all four files",
    "review": "log.md + occasional resources, no ram.md",
    "brainstorm": "log.md + feedback.md, no ram.md",
    "debug": "ram.md (state only) + log.md",
}
WORKSPACE_READ_RIGHTS = {
    "worker": "ram.md (log.md on request)",
    "supervisor": "ram.md + log.md",
    "coach-scribe": "log.md + feedback.md, after the TTL (never ram.md)",
}

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
# The template's explicit trigger `brain boot [mode] <type>[/<scope>]` (helloWorld.md:71,
# "exact, pas d'ambiguïté"); `brain boot sudo` opens edit-brain (session-edit-brain.yml:2).
BOOT_KEYWORD = "boot"
BOOT_ALIASES = {"sudo": "edit-brain"}
_TYPE_WORD = re.compile(r"[a-z][a-z0-9_-]{0,31}")


@dataclass(frozen=True)
class SessionKeywords:
    """Type and mode a session's first message declares, and the rule that gave them."""

    type: str | None
    mode: str | None
    rule: str  # brain-type | brain-mode | boot-type | boot-unknown-type | brain-bare | ...


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
    plain = [w.split("/")[0] for w in rest if w and not w.startswith(MODE_KEYWORD_PREFIX)]
    if plain and plain[0] == BOOT_KEYWORD and len(plain) > 1:
        return _boot_keywords(plain[1:], mode)
    if plain and plain[0] in SESSION_CATEGORIES:
        return SessionKeywords(plain[0], mode, "brain-type")
    if mode:
        return SessionKeywords(mode if mode in SESSION_CATEGORIES else None, mode, "brain-mode")
    return SessionKeywords(None, None, "brain-bare")


def _boot_keywords(words: list[str], mode: str | None) -> SessionKeywords:
    """``brain boot [mode] <word>``: a known type, an alias, or a type SPEC §2.2 lacks.

    The explicit trigger names its type on purpose, so an unknown word there is a declared
    unknown type (kept verbatim, rule ``boot-unknown-type``: SPEC §2.2 reports it), unlike
    ``brain <word>`` prose. ``brain boot mode navigate`` also declares the ADR-019 mode of
    the same name (modes/README.md:3).
    """
    if words[0] == "mode" and len(words) > 1:
        words = words[1:]
    word = BOOT_ALIASES.get(words[0], words[0])
    if word in SESSION_CATEGORIES:
        if mode is None and word in SOFT_LOCK_MODES:
            mode = word
        return SessionKeywords(word, mode, "boot-type")
    if _TYPE_WORD.fullmatch(word) and word != "mode":
        return SessionKeywords(word, mode, "boot-unknown-type")
    return SessionKeywords(None, mode, "brain-bare")
