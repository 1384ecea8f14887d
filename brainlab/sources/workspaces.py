"""Sprint workspaces ``workspace/<projet>-<sprint>/`` (SPEC §5): files, lifecycle, decision log.

Every file in a workspace folder is recorded (so files outside the four allowed ones show up
as violations); README.md gives the workspace row, log.md gives one decision per line.
The rule checks themselves are SQL (store/models/marts/workspace_violations.sql).
"""

from __future__ import annotations

import re
from pathlib import Path

from brainlab.sources.base import Parsed, Source, decode_text
from brainlab.sources.files import list_files
from brainlab.sources.text import split_key_value

_STAMP = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[ T](\S+))?")
_LIFECYCLE_KEYS = ("ttl", "archive", "mode")


def parse_decision(line: str) -> dict | None:
    """``date [time] | question | choisi: x | raison: y`` -> its parts; None when malformed.

    Split on ``|`` rather than matched by one regex, so any line parses in linear time.
    """
    parts = line.strip().split("|", 3)
    if len(parts) != 4:
        return None
    stamp = _STAMP.fullmatch(parts[0].strip())
    choice, reason = _labelled(parts[2], "choisi"), _labelled(parts[3], "raison")
    question = parts[1].strip()
    if not stamp or not question or not choice or not reason:
        return None
    return {"date": stamp.group(1), "time": stamp.group(2), "question": question,
            "choice": choice, "reason": reason}


def _labelled(part: str, label: str) -> str | None:
    """``label : value`` (label in any case) -> value, else None."""
    text = part.strip()
    if text[: len(label)].lower() != label:
        return None
    rest = text[len(label):].lstrip()
    return rest[1:].strip() or None if rest.startswith(":") else None


def split_workspace_name(name: str) -> tuple[str, str | None]:
    """``originsdigital-sprint2`` -> (``originsdigital``, ``sprint2``)."""
    if "-" not in name:
        return name, None
    project, sprint = name.rsplit("-", 1)
    return project, sprint


def active_lines(text: str) -> int:
    """Lines that carry content: not blank, not a heading, not a horizontal rule."""
    return sum(1 for ln in text.splitlines()
               if ln.strip() and not ln.lstrip().startswith("#") and ln.strip() != "---")


class WorkspacesSource(Source):
    """Files of every workspace folder; README, ram and log parsed further."""

    name = "workspaces"
    tables = ("workspaces", "workspace_files", "decisions")

    def discover(self, root: Path) -> list[Path]:
        """Every file below workspace/<name>/ (the workspace/ README itself is not a workspace)."""
        folder = root / "workspace"
        return [p for p in list_files(folder, "*", recursive=True) if p.parent != folder]

    def parse(self, path: Path, data: bytes, root: Path) -> Parsed:
        """One workspace_files row; plus a workspaces row (README) or decisions (log.md)."""
        parsed = Parsed()
        workspace_dir = root / "workspace"
        relative = path.resolve().relative_to(workspace_dir.resolve())
        workspace = relative.parts[0]
        file_name = "/".join(relative.parts[1:])
        source_file = str(path.resolve())
        text = decode_text(data, parsed)
        parsed.add("workspace_files", {
            "source_file": source_file, "workspace": workspace, "file_name": file_name,
            "bytes": len(data), "lines": None if text is None else len(text.splitlines()),
            "active_lines": None if text is None else active_lines(text),
        })
        if text is None:
            return parsed
        if file_name == "README.md":
            self._readme(text, workspace, source_file, parsed)
        elif file_name == "log.md":
            self._log(text, workspace, source_file, parsed)
        return parsed

    @staticmethod
    def _readme(text: str, workspace: str, source_file: str, parsed: Parsed) -> None:
        project, sprint = split_workspace_name(workspace)
        values: dict[str, str] = {}
        for line in text.splitlines():
            pair = split_key_value(line)
            key = pair[0].lower() if pair and pair[1] else None
            if key in _LIFECYCLE_KEYS and key not in values:
                values[key] = pair[1].strip("`")
        lines = text.rstrip("\n").splitlines()
        parsed.add("workspaces", {
            "source_file": source_file, "workspace": workspace, "project": project,
            "sprint": sprint, "readme_lines": len(lines), "ttl": values.get("ttl"),
            "archive": values.get("archive"), "mode": values.get("mode"),
        })

    @staticmethod
    def _log(text: str, workspace: str, source_file: str, parsed: Parsed) -> None:
        for line_no, line in enumerate(text.splitlines(), start=1):
            stripped = line.strip()
            if not stripped or stripped.startswith(("#", ">")) or stripped == "---":
                continue
            match = parse_decision(stripped)
            row = {"source_file": source_file, "workspace": workspace, "line": line_no,
                   "is_well_formed": match is not None}
            if match:
                row.update({
                    "decided_on": match["date"], "decided_time": match["time"],
                    "question": match["question"], "choice": match["choice"],
                    "reason": match["reason"], "raw_line": None,
                })
            else:
                row["raw_line"] = stripped[:200]
            parsed.add("decisions", row)
