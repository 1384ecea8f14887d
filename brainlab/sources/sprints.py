"""Sprint records: the plain JSONL format users and tests write by hand (docs/broker.md).

One line per sprint and agent::

    {"sprint": "s1", "project": "shop", "domain": "auth", "agent": "developer",
     "referenced": ["auth.routes.ts", {"path": "Video.ts", "kind": "search"}],
     "touched": ["auth.routes.ts"], "open_todos": ["auth"], "loaded": ["auth.routes.ts"],
     "started_at": "2026-03-02T10:00:00", "ended_at": "2026-03-02T11:00:00",
     "session": "sess-20260302-1000-shop", "bytes": {"auth.routes.ts": 4000}}

Required: ``sprint``, ``project``, ``agent``. ``domain`` is the agent's domain in the project
contract (SPEC §4.1). ``referenced`` entries are paths (kind ``read``) or objects with ``path``,
optional ``kind`` (read|search|edit|write) and ``bytes``; ``touched`` paths are recorded with
kind ``edit``. ``loaded`` (optional) is what the broker actually loaded for this agent. A bad
line becomes an error row; the other lines load.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from brainlab.sources.base import Parsed, Source, decode_text
from brainlab.sources.files import list_files
from brainlab.sources.messages import said

REF_KINDS = ("read", "search", "edit", "write")  # SPEC §4.4 "referenced"


class SprintRecordSource(Source):
    """JSONL sprint records: ``progression/sprints/*.jsonl`` under a brain, or one given file."""

    name = "sprints"
    tables = ("sprints", "sprint_agents", "sprint_refs", "file_sizes")

    def discover(self, root: Path) -> list[Path]:
        """A file root is itself; a folder yields ``progression/sprints/*.jsonl``."""
        root = Path(root)
        if root.is_file():
            return [root]
        folder = root / "progression" / "sprints"
        base = folder if folder.is_dir() else root
        pattern = "*.jsonl" if base is folder else "sprints*.jsonl"
        return list_files(base, pattern)

    def parse(self, path: Path, data: bytes, root: Path) -> Parsed:
        """Each line -> a sprint_agents row and its refs; a sprint's first line -> sprints."""
        parsed = Parsed()
        text = decode_text(data, parsed)
        if text is None:
            return parsed
        file = str(Path(path).resolve())
        sprints: dict[str, dict] = {}
        seen: set[tuple[str, str]] = set()
        for number, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except json.JSONDecodeError as exc:
                parsed.error(number, said("invalid JSON: {}", exc.msg))
                continue
            problem = _check(record)
            if problem:
                parsed.error(number, problem)
                continue
            sprint_id, agent = record["sprint"], record["agent"]
            if (sprint_id, agent) in seen:
                parsed.error(number, said("duplicate line for sprint {!r} agent {!r}", sprint_id, agent))
                continue
            known = sprints.get(sprint_id)
            if known and known["project"] != record["project"]:
                parsed.error(number, said("sprint {!r} has project {!r} on an earlier line, {!r} here",
                                           sprint_id, known["project"], record["project"]))
                continue
            times = {}
            for key in ("started_at", "ended_at"):
                try:
                    times[key] = _timestamp(record.get(key))
                except ValueError:
                    parsed.error(number, said("{}: not an ISO timestamp: {!r}", key, record.get(key)))
                    times = None
                    break
            if times is None:
                continue
            seen.add((sprint_id, agent))
            if known is None:
                sprints[sprint_id] = {
                    "sprint_id": sprint_id, "project": record["project"],
                    "domain": record.get("domain"), "session_id": record.get("session"),
                    "started_at": times["started_at"], "ended_at": times["ended_at"],
                    "origin": "record", "source_file": file, "line": number,
                }
            else:
                for key in ("started_at", "ended_at"):
                    if known[key] is None:
                        known[key] = times[key]
            _add_agent(parsed, record, file, number)
        for row in sprints.values():
            parsed.add("sprints", row)
        return parsed


def _check(record: object) -> str | None:
    """Why a parsed line is not a usable sprint record, or None."""
    if not isinstance(record, dict):
        return "a sprint record line must be a JSON object"
    for key in ("sprint", "project", "agent"):
        if not isinstance(record.get(key), str) or not record[key].strip():
            return f"missing or empty field {key!r} (a string is required)"
    if record.get("domain") is not None and not isinstance(record["domain"], str):
        return "'domain' must be a string"
    for key in ("referenced", "touched", "open_todos"):
        if not isinstance(record.get(key, []), list):
            return f"{key!r} must be a list"
    if record.get("loaded") is not None and not isinstance(record["loaded"], list):
        return "'loaded' must be a list or null"
    for key in ("touched", "open_todos", "loaded"):
        if any(not isinstance(v, str) or not v for v in record.get(key) or []):
            return f"{key!r} entries must be non-empty strings"
    for entry in record.get("referenced", []):
        if isinstance(entry, str) and entry:
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) \
                or not entry["path"]:
            return "'referenced' entries must be paths or objects with a 'path'"
        if entry.get("kind", "read") not in REF_KINDS:
            return f"reference kind {entry.get('kind')!r} is not one of {', '.join(REF_KINDS)}"
        if entry.get("bytes") is not None and not _is_size(entry["bytes"]):
            return f"bytes of {entry['path']!r} must be a non-negative integer"
    sizes = record.get("bytes", {})
    if not isinstance(sizes, dict) or not all(_is_size(v) for v in sizes.values()):
        return "'bytes' must map paths to non-negative integers"
    return None


def _is_size(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _timestamp(value: object) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(value)
    stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if stamp.tzinfo is not None:  # store UTC, naive
        stamp = stamp.astimezone(UTC).replace(tzinfo=None)
    return stamp


def _add_agent(parsed: Parsed, record: dict, file: str, number: int) -> None:
    sprint_id, agent = record["sprint"], record["agent"]
    loaded = record.get("loaded")
    parsed.add("sprint_agents", {
        "sprint_id": sprint_id, "agent": agent, "domain": record.get("domain"),
        "open_todos": list(record.get("open_todos") or []),
        "loaded": list(dict.fromkeys(loaded)) if loaded is not None else None,
        "source_file": file, "line": number,
    })
    sizes = dict(record.get("bytes") or {})
    refs: dict[tuple[str, str], None] = {}
    for entry in record.get("referenced") or []:
        if isinstance(entry, str):
            refs[(entry, "read")] = None
            continue
        refs[(entry["path"], entry.get("kind", "read"))] = None
        if entry.get("bytes") is not None:
            sizes[entry["path"]] = entry["bytes"]
    for path in record.get("touched") or []:
        refs.setdefault((path, "edit"), None)
    for path, kind in refs:
        parsed.add("sprint_refs", {
            "sprint_id": sprint_id, "agent": agent, "path": path, "kind": kind,
            "source_file": file, "line": number,
        })
    for path, size in sizes.items():
        parsed.add("file_sizes", {
            "project": record["project"], "path": path, "bytes": size,
            "source_file": file, "line": number,
        })


def sprint_sources() -> list[Source]:
    """The sources of sprint data in a brain: contracts, broker blocks, sprint records."""
    from brainlab.sources.broker_blocks import BrokerBlockSource
    from brainlab.sources.contracts import ContractSource

    return [ContractSource(), BrokerBlockSource(), SprintRecordSource()]


def nothing_found(path: Path) -> str:
    """Say that ``brainlab ingest sprints`` found nothing to read in ``path`` and where it looked."""
    return (f"no sprint record, broker output or contract in {path}: looked for"
            " progression/sprints/*.jsonl (else sprints*.jsonl), progression/broker/*.md and"
            " projets/*.md; nothing was written. Give a brain folder or one of those files")


def sources_for(path: Path) -> list[Source]:
    """The sources ``brainlab ingest sprints PATH`` runs: by file kind, or all for a folder."""
    from brainlab.sources.broker_blocks import BrokerBlockSource
    from brainlab.sources.contracts import ContractSource

    path = Path(path)
    if path.is_dir():
        return sprint_sources()
    if path.suffix == ".jsonl":
        return [SprintRecordSource()]
    if path.suffix == ".md":
        return [ContractSource()] if path.parent.name == "projets" else [BrokerBlockSource()]
    from brainlab.common.errors import SourceError

    raise SourceError(f"{path}: expected a .jsonl sprint record, a .md broker output or "
                      "contract (projets/<p>.md), or a brain folder")
