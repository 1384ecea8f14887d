"""Protocol vocabulary mapped once: session types to metabolism categories, claim TTLs, workspace rules.

The store writes these mappings into small lookup tables, so SQL views and Python (the
synthetic brain, notebooks) read the same values.
"""

from __future__ import annotations

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
