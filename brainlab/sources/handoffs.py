"""Handoffs ``handoffs/*.md``: the frontmatter of each (SPEC §2.4 close sequence output)."""

from __future__ import annotations

import json
from pathlib import Path

from brainlab.sources.base import Parsed, Source, decode_text
from brainlab.sources.files import list_files
from brainlab.sources.text import split_frontmatter


class HandoffsSource(Source):
    """One row per handoff file; frontmatter fields kept as JSON, common ones as columns."""

    name = "handoffs"
    tables = ("handoffs",)

    def discover(self, root: Path) -> list[Path]:
        """handoffs/*.md except README and templates."""
        folder = root / "handoffs"
        return [p for p in list_files(folder, "*.md")
                if p.name.lower() != "readme.md" and not p.stem.endswith("_template")]

    def parse(self, path: Path, data: bytes, root: Path) -> Parsed:
        """Frontmatter to a row; a file without frontmatter still loads with its title."""
        parsed = Parsed()
        text = decode_text(data, parsed)
        if text is None:
            return parsed
        front, body, problem = split_frontmatter(text)
        if problem:
            parsed.error(1, problem)
        front = front or {}
        title = next((ln.lstrip("# ").strip() for ln in body.splitlines() if ln.startswith("#")),
                     None)
        parsed.add("handoffs", {
            "source_file": str(path.resolve()), "handoff": path.stem, "title": title,
            "sess_id": _text(front.get("sess_id") or front.get("session_id")),
            "handoff_level": _text(front.get("handoff_level") or front.get("level")),
            "created_at": _text(front.get("date") or front.get("created_at")),
            "fields": json.dumps(front, default=str, ensure_ascii=False, sort_keys=True)
            if front else None,
        })
        return parsed


def _text(value) -> str | None:
    return str(value).strip() if value is not None else None
