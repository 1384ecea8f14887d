"""The focus file ``focus.md`` (helloWorld) at the brain's root (seed context-broker, third signal).

The seed's project detection (``seeds/context-broker.md.txt``:56-61) has three signals; the
third is "helloWorld a identifié un projet actif au boot — focus.md". The file is free text
("Direction actuelle du brain. Mis a jour par le scribe en fin de session", the template's
``focus.md``) and holds only its current state: no dates, no history. What it can tell is
therefore bounded by the file's last modification: every session that booted at or after it
read exactly this text. One row per file: its text, its line count and that moment
(``modified_at``, the file's mtime in UTC when the content was read); which projects it
names is the staging view ``focus_projects``.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from brainlab.sources.base import Parsed, Source, decode_text
from brainlab.sources.files import list_files
from brainlab.sources.messages import said

FOCUS_FILE = "focus.md"


class FocusSource(Source):
    """One row per focus file (the brain's root ``focus.md``)."""

    name = "focus"
    tables = ("focus_files",)

    def discover(self, root: Path) -> list[Path]:
        """``focus.md`` at the brain's root (helloWorld's ``brain/focus.md``)."""
        return list_files(root, FOCUS_FILE)

    def parse(self, path: Path, data: bytes, root: Path) -> Parsed:
        """The text as written and the file's mtime; an empty file loads with no text."""
        parsed = Parsed()
        text = decode_text(data, parsed)
        if text is None:
            return parsed
        try:
            modified = datetime.fromtimestamp(os.stat(path).st_mtime, UTC).replace(tzinfo=None)
        except (OSError, OverflowError, ValueError) as exc:
            parsed.error(None, said("cannot read the file's modification time ({}): its focus"
                                    " is dated to no session", exc), "warning")
            modified = None
        lines = text.splitlines()
        if not any(line.strip() for line in lines):
            parsed.error(1, said("empty focus file: it names no project"), "warning")
        parsed.add("focus_files", {"source_file": str(path.resolve()), "modified_at": modified,
                                   "lines": len(lines), "text": text})
        return parsed
