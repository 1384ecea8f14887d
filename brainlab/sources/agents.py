"""Agent definitions ``agents/*.md`` (SPEC §2.5): name, size, estimated tokens, context tier."""

from __future__ import annotations

from pathlib import Path

from brainlab.sources.base import Parsed, Source, decode_text
from brainlab.sources.files import list_files
from brainlab.sources.messages import said
from brainlab.sources.text import split_frontmatter

CONTEXT_TIERS = ("always", "hot", "warm", "cold", "boot")
# Frontmatter types of files that live in agents/ without defining an agent: the template's
# agents/AGENTS.md (type: index) lists the agents, agents/bsi-schema.md (type: reference)
# documents a format. Agent definitions say `type: agent` or `type: protocol` (the scribe,
# helloWorld), or give no type.
NOT_AGENT_TYPES = ("index", "reference", "spec", "schema", "catalog", "readme")


def tokens_estimated(n_bytes: int) -> int:
    """SPEC §2.5: an agent costs its file size in bytes divided by 4 (rounded down)."""
    return n_bytes // 4


class AgentsSource(Source):
    """One row per ``agents/<name>.md`` defining an agent.

    Sub-folders such as agents/reviews/ are not agents, nor files whose frontmatter type is
    one of NOT_AGENT_TYPES (an index, a reference): they would feed agent cost.
    """

    name = "agents"
    tables = ("agents",)

    def discover(self, root: Path) -> list[Path]:
        """Markdown files directly under agents/."""
        folder = root / "agents"
        return list_files(folder, "*.md")

    def parse(self, path: Path, data: bytes, root: Path) -> Parsed:
        """Size from the bytes, tier and name from the frontmatter when there is one."""
        parsed = Parsed()
        text = decode_text(data, parsed)
        if text is None:
            return parsed
        front, _body, problem = split_frontmatter(text)
        if problem:
            parsed.error(1, said("{}; size still recorded", problem), "warning")
        front = front or {}
        if str(front.get("type", "")).strip().lower() in NOT_AGENT_TYPES:
            return parsed  # an index or a reference beside the agents, not an agent
        tier = front.get("context_tier")
        tier = str(tier).strip().lower() if tier is not None else None
        if tier and tier not in CONTEXT_TIERS:
            parsed.error(None, said("unknown context_tier {!r} (kept)", tier), "warning")
        parsed.add("agents", {
            "source_file": str(path.resolve()),
            "agent": path.stem,
            "declared_name": str(front["name"]) if front.get("name") else None,
            "bytes": len(data),
            "lines": text.count("\n") + (0 if text.endswith("\n") or not text else 1),
            "tokens_estimated": tokens_estimated(len(data)),
            "context_tier": tier,
            "status": str(front["status"]) if front.get("status") else None,
            "is_template": path.stem.startswith("_"),
        })
        return parsed
