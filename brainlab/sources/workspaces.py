"""Sprint workspaces ``workspace/<projet>-<sprint>/`` (SPEC §5): files, lifecycle, decision log.

Every file in a workspace folder is recorded (so files outside the four allowed ones show up
as violations); README.md gives the workspace row, log.md gives one decision per line.
The rule checks themselves are SQL (views/25_hygiene.sql).
"""

from __future__ import annotations

import re
from pathlib import Path

from brainlab.sources.base import Parsed, Source, decode_text
from brainlab.sources.files import list_files

_DECISION = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})(?:[ T](?P<time>\S+))?\s*\|\s*(?P<question>[^|]+?)\s*\|"
    r"\s*choisi\s*:\s*(?P<choice>[^|]+?)\s*\|\s*raison\s*:\s*(?P<reason>.+?)\s*$",
    re.IGNORECASE,
)
_LIFECYCLE = re.compile(r"^\s*[-*]?\s*(ttl|archive|mode)\s*:\s*(.+?)\s*$", re.IGNORECASE)


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
            match = _LIFECYCLE.match(line)
            if match and match.group(1).lower() not in values:
                values[match.group(1).lower()] = match.group(2).strip().strip("`")
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
            match = _DECISION.match(stripped)
            row = {"source_file": source_file, "workspace": workspace, "line": line_no,
                   "is_well_formed": match is not None}
            if match:
                row.update({
                    "decided_on": match.group("date"), "decided_time": match.group("time"),
                    "question": match.group("question"), "choice": match.group("choice"),
                    "reason": match.group("reason"), "raw_line": None,
                })
            else:
                row["raw_line"] = stripped[:200]
            parsed.add("decisions", row)
