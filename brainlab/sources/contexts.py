"""Session contexts ``contexts/session-<type>.yml`` (SPEC §2.3): boot layers and targets."""

from __future__ import annotations

import re
from pathlib import Path

from brainlab.sources.base import Parsed, Source
from brainlab.sources.files import list_files
from brainlab.sources.yamlfiles import load_mapping

_PCT = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*%")  # starts once per number: linear


def _files(value) -> list[str]:
    """File paths of a layer: a list, or the template/extras of an L2 mapping."""
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, str)]
    if isinstance(value, dict):
        out: list[str] = []
        for key in ("template", "extras", "template_optional"):
            item = value.get(key)
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, list):
                out.extend(str(v) for v in item if isinstance(v, str))
        out.extend(str(v) for v in value.get("_list", []) if isinstance(v, str))
        return out
    return []


def _pct(value) -> float | None:
    match = _PCT.search(str(value)) if value is not None else None
    return float(match.group(1)) if match else None


class ContextsSource(Source):
    """One row per session type, one row per (type, layer, file)."""

    name = "contexts"
    tables = ("session_contexts", "context_files")

    def discover(self, root: Path) -> list[Path]:
        """contexts/session-*.yml."""
        folder = root / "contexts"
        return list_files(folder, "session-*.yml")

    def parse(self, path: Path, data: bytes, root: Path) -> Parsed:
        """Layers L0/L1/L2 (+ L1_pro, L1_featured) and context_target percentages."""
        parsed = Parsed()
        doc = load_mapping(data, parsed)
        if doc is None:
            return parsed
        source_file = str(path.resolve())
        session_type = str(doc.get("session_type") or path.stem.removeprefix("session-"))
        target = doc.get("context_target") if isinstance(doc.get("context_target"), dict) else {}
        layers = {k: _files(v) for k, v in doc.items() if re.fullmatch(r"L\d(_\w+)?", str(k))}
        ttl = doc.get("ttl_hours")
        parsed.add("session_contexts", {
            "source_file": source_file, "session_type": session_type,
            "description": str(doc["description"]) if doc.get("description") else None,
            "boot_files": sum(len(v) for k, v in layers.items() if k in ("L0", "L1", "L2")),
            "target_l0_pct": _pct(target.get("L0")), "target_l1_pct": _pct(target.get("L1")),
            "target_l2_pct": _pct(target.get("L2")),
            "target_boot_pct": _pct(target.get("total_boot")),
            "ttl_hours": float(ttl) if isinstance(ttl, int | float) else None,
        })
        for layer, files in layers.items():
            for order, file in enumerate(files, start=1):
                parsed.add("context_files", {"source_file": source_file,
                                             "session_type": session_type, "layer": layer,
                                             "position": order, "path": file})
        return parsed
