"""The context broker's inhale/expire output blocks (seeds/context-broker.md.txt, SPEC §4.2-4.4).

The broker prints two text blocks per sprint::

    Context-broker — inhale sprint <nom>
    Projet détecté : <id>
    Mode           : <use-brain | build-brain | sprint>
    Source map :
      <agent-1> → ["<fichier-A>", "<fichier-B>"]
      <agent-3> → []   ← contexte boot suffisant
    Exclusions explicites :
      "<fichier-D>" — tentant mais hors domaine sprint

    Context-broker — expire sprint <nom>
    Release map :
      LIBÉRER : ["<fichier-A>"]
      GARDER  : ["<fichier-C>"] — <raison>
    Breath metrics :
      context_load : 1.5
      stale_ratio  : 25%
      breath_depth : +1
      exhale_rate  : 50%

:func:`find_blocks` finds them in any text (a markdown file, an assistant message, a tool
output); :class:`BrokerBlockSource` ingests ``progression/broker/*.md``. Malformed lines and
blocks become error rows; the rest loads.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from brainlab.sources.base import Parsed, Source, decode_text
from brainlab.sources.files import list_files
from brainlab.sources.messages import said

_DASH = r"[—–-]{1,2}"
_HEADER = re.compile(
    rf"^[>\s*`#-]*context[- ]broker\s*{_DASH}\s*(?P<kind>inhale|expire)\b\s*(?:sprint\b)?"
    r"\s*", re.IGNORECASE)  # the sprint name is the rest of the line (see _header_name)
_ARROW = re.compile(r"→|->|=>")
_SECTIONS = {
    "source map": "source_map", "exclusions explicites": "exclusions", "exclusions": "exclusions",
    "release map": "release_map", "breath metrics": "breath",
}
_ACTIONS = {"libérer": "libérer", "liberer": "libérer", "garder": "garder"}
_FILE_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})")


@dataclass
class BrokerBlock:
    """One inhale or expire block as written, with the files it names."""

    kind: str  # "inhale" or "expire"
    sprint: str
    line: int  # 1-based line of the header in the text
    project: str | None = None
    mode: str | None = None
    reason: str | None = None
    metrics: dict[str, float | int | None] = field(default_factory=dict)
    # {agent, path, action, reason, line}; action: agent (the agent is in the source map,
    # path None), load, exclude, libérer, garder
    files: list[dict] = field(default_factory=list)


def find_blocks(text: str, first_line: int = 1) -> tuple[list[BrokerBlock], list[tuple[int, str]]]:
    """Every broker block in ``text`` and the problems met, as (line, reason) pairs."""
    blocks: list[BrokerBlock] = []
    errors: list[tuple[int, str]] = []
    current: BrokerBlock | None = None
    section: str | None = None
    for offset, raw in enumerate(text.splitlines()):
        number = first_line + offset
        line = raw.strip().strip("`").rstrip()
        header = _HEADER.match(line)
        if header:
            if current is not None:
                _finish(current, errors, blocks)
            name = _header_name(line[header.end():]).strip().strip("\"'`*")
            current, section = BrokerBlock(header.group("kind").lower(), name, number), None
            continue
        if current is None or not line:
            continue
        if line.startswith(("→", "->")):  # the closing hand-off line ends the block
            _finish(current, errors, blocks)
            current, section = None, None
            continue
        lowered = line.rstrip(":").strip().lower()
        if lowered in _SECTIONS:
            section = _SECTIONS[lowered]
            continue
        try:
            section = _line(current, section, line, number)
        except ValueError as exc:
            errors.append((number, f"broker {current.kind} block {current.sprint!r}: {exc}"))
    if current is not None:
        _finish(current, errors, blocks)
    return blocks, errors


def _header_name(rest: str) -> str:
    """The sprint name after a header: trailing blanks, backticks and stars dropped."""
    name = rest.rstrip()
    while name.endswith(("`", "*")):
        name = name.rstrip("`*").rstrip()
    return name


def _finish(block: BrokerBlock, errors: list, blocks: list) -> None:
    if not block.sprint:
        errors.append((block.line, f"broker {block.kind} block without a sprint name: skipped"))
        return
    if block.kind == "inhale" and not block.metrics.get("_source_map_seen"):
        errors.append((block.line, f"broker inhale block {block.sprint!r} has no source map: "
                                   "skipped"))
        return
    if block.kind == "expire" and not block.metrics.get("_release_map_seen"):
        errors.append((block.line, f"broker expire block {block.sprint!r} has no release map: "
                                   "skipped"))
        return
    blocks.append(block)


def _line(block: BrokerBlock, section: str | None, line: str, number: int) -> str | None:
    """Read one line of a block; return the section that follows it."""
    if section == "source_map":
        agent, arrow, rest = _split_arrow(line)
        if arrow:
            block.metrics["_source_map_seen"] = 1
            block.files.append({"agent": agent, "path": None, "action": "agent",
                                "reason": None, "line": number})
            for path in _paths(rest):
                block.files.append({"agent": agent, "path": path, "action": "load",
                                    "reason": None, "line": number})
            return section
    if section == "exclusions" and line[:1] in "\"'«":
        quoted = re.match(r"^[\"'«]([^\"'»]+)[\"'»]\s*(?:[—–-]+\s*(.*))?$", line)
        if not quoted:
            raise ValueError(f"cannot read exclusion line {line!r}")
        block.files.append({"agent": None, "path": quoted.group(1), "action": "exclude",
                            "reason": (quoted.group(2) or None), "line": number})
        return section
    head, sep, value = line.partition(":")  # string ops: linear on any line
    if not sep or not head.strip():
        raise ValueError(f"cannot read line {line[:200]!r}")
    key, value = head.strip().lower(), value.strip()
    if key in ("projet détecté", "projet detecte", "projet", "project"):
        block.project = value.strip("\"'`") or None
        return section
    if key == "mode":
        block.mode = value or None
        return section
    if key in _ACTIONS:
        block.metrics["_release_map_seen"] = 1
        listed, _, reason = value.partition("]")
        for path in _paths(listed + "]"):
            block.files.append({"agent": None, "path": path, "action": _ACTIONS[key],
                                "reason": None, "line": number})
        reason = re.sub(rf"^\s*{_DASH}\s*", "", reason).strip() or None
        if _ACTIONS[key] == "garder" and reason:
            block.reason = reason
            for entry in block.files:
                if entry["line"] == number:
                    entry["reason"] = reason
        return section
    if key == "raison":
        block.reason = value.strip("\"'") or None
        return section
    if key in ("context_load", "stale_ratio", "breath_depth", "exhale_rate"):
        block.metrics[key] = _metric(key, value)
        return section
    if section == "source_map":
        raise ValueError(f"source map line without an arrow: {line!r}")
    raise ValueError(f"unknown line {line!r}")


def _split_arrow(line: str) -> tuple[str, str, str]:
    arrow = _ARROW.search(line)
    if arrow is None:
        return line, "", ""
    return line[: arrow.start()].strip().strip("`*"), "→", line[arrow.end():].lstrip()


def _paths(text: str) -> list[str]:
    """The file names of a ``["a", "b"]`` list (anything after the closing bracket is a note)."""
    text = text.strip()
    if not text.startswith("["):
        raise ValueError(f"expected a [\"file\", ...] list, got {text!r}")
    end = text.find("]")
    if end < 0:
        raise ValueError(f"unclosed file list {text!r}")
    inner = text[: end + 1]
    try:
        values = json.loads(inner)
    except json.JSONDecodeError:
        values = [v.strip().strip("\"'") for v in inner[1:-1].split(",") if v.strip()]
    if not all(isinstance(v, str) and v for v in values):
        raise ValueError(f"file list entries must be names: {inner!r}")
    return list(dict.fromkeys(values))


def _metric(key: str, value: str) -> float | int:
    raw = value.split()[0] if value.split() else ""
    try:
        if key == "breath_depth":
            return int(raw)
        if raw.endswith("%"):
            return float(raw[:-1]) / 100.0
        return float(raw)
    except ValueError:
        raise ValueError(f"{key}: not a number: {value!r}") from None


def block_rows(blocks: list[BrokerBlock], file: str, ts: datetime | None = None) -> dict:
    """The broker_blocks and broker_block_files rows of ``blocks`` found in ``file``."""
    out: dict[str, list[dict]] = {"broker_blocks": [], "broker_block_files": []}
    for block in blocks:
        block_id = f"{file}:{block.line}"
        out["broker_blocks"].append({
            "block_id": block_id, "kind": block.kind, "sprint": block.sprint,
            "project": block.project, "mode": block.mode, "reason": block.reason,
            "context_load": block.metrics.get("context_load"),
            "stale_ratio": block.metrics.get("stale_ratio"),
            "breath_depth": block.metrics.get("breath_depth"),
            "exhale_rate": block.metrics.get("exhale_rate"),
            "ts": ts, "source_file": file, "line": block.line,
        })
        for entry in block.files:
            out["broker_block_files"].append({
                "block_id": block_id, "sprint": block.sprint, "agent": entry["agent"],
                "path": entry["path"], "action": entry["action"], "reason": entry["reason"],
                "source_file": file, "line": entry["line"],
            })
    return out


class BrokerBlockSource(Source):
    """Recorded broker outputs: ``progression/broker/*.md`` (or one given file)."""

    name = "broker"
    tables = ("broker_blocks", "broker_block_files")

    def discover(self, root: Path) -> list[Path]:
        """A file root is itself; a brain yields ``progression/broker/*.md``."""
        root = Path(root)
        if root.is_file():
            return [root]
        folder = root / "progression" / "broker"
        return list_files(folder, "*.md")

    def parse(self, path: Path, data: bytes, root: Path) -> Parsed:
        """Find every block; its date comes from a ``YYYY-MM-DD`` file-name prefix, if any."""
        parsed = Parsed()
        text = decode_text(data, parsed)
        if text is None:
            return parsed
        blocks, errors = find_blocks(text)
        for number, reason in errors:
            parsed.error(number, reason)
        if not blocks and not errors:
            parsed.error(None, said("no context-broker inhale/expire block found"), severity="warning")
        date = _FILE_DATE.match(Path(path).name)
        ts = datetime.fromisoformat(date.group(1)) if date else None
        for table, rows in block_rows(blocks, str(Path(path).resolve()), ts).items():
            for row in rows:
                parsed.add(table, row)
        return parsed
