"""BSI claims ``claims/*.yml`` (SPEC §2.6), in both key styles (sess_id/opened_at and name/opened)."""

from __future__ import annotations

from pathlib import Path

from brainlab.sources.base import Parsed, Source
from brainlab.sources.files import list_files
from brainlab.sources.messages import said
from brainlab.sources.text import parse_timestamp
from brainlab.sources.yamlfiles import load_mapping
from brainlab.spec import ranges

_LEGACY = {"name": "sess_id", "opened": "opened_at", "closed": "closed_at",
           "session_id": "sess_id"}
_TEXT = ("sess_id", "type", "scope", "agent", "status", "handoff_level", "story_angle",
         "result_status", "zone", "mode")
CLAIM_STATUSES = ("open", "closed", "stale")


class ClaimsSource(Source):
    """One row per claim file."""

    name = "claims"
    tables = ("claims",)

    def discover(self, root: Path) -> list[Path]:
        """claims/*.yml and *.yaml."""
        folder = root / "claims"
        return sorted(list_files(folder, "*.yml") + list_files(folder, "*.yaml"))

    def parse(self, path: Path, data: bytes, root: Path) -> Parsed:
        """Normalise legacy keys, parse timestamps; a claim without a session id is an error."""
        parsed = Parsed()
        doc = load_mapping(data, parsed)
        if doc is None:
            return parsed
        legacy = any(k in doc for k in ("name", "opened", "closed")) and "opened_at" not in doc
        claim = {_LEGACY.get(k, k): v for k, v in doc.items()}
        row: dict = {"source_file": str(path.resolve()), "key_style": "legacy" if legacy else "v2"}
        for key in _TEXT:
            value = claim.get(key)
            row[key] = str(value).strip() if value is not None else None
        if not row["sess_id"]:
            parsed.error(None, said("claim without sess_id (or name): not loaded"))
            return parsed
        if row["status"]:
            row["status"] = row["status"].lower()
            if row["status"] not in CLAIM_STATUSES:
                parsed.error(None, said("unknown claim status {!r} (kept)", row["status"]), "warning")
        for key in ("opened_at", "closed_at", "expires_at"):
            value, problem = parse_timestamp(claim.get(key))
            if problem:
                parsed.error(None, said("{}: {}", key, problem), "warning")
            row[key] = value
        ttl = claim.get("ttl_hours")
        try:
            row["ttl_hours"] = float(ttl) if ttl is not None else None
        except (TypeError, ValueError, OverflowError):
            parsed.error(None, said("ttl_hours: not a number: {!r}", ttl), "warning")
            row["ttl_hours"] = None
        if row["ttl_hours"] is not None and (out := ranges.HOURS.problem(row["ttl_hours"])):
            parsed.error(None, said("ttl_hours: {} ({}, spec/ranges.py): not stored", out,
                                    ranges.HOURS.name))
            row["ttl_hours"] = None
        if row["opened_at"] is None:
            parsed.error(None, said("claim without a valid opened_at: staleness cannot be judged"),
                         "warning")
        parsed.add("claims", row)
        return parsed
