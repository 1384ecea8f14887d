"""Project contracts ``projets/<p>.md`` (SPEC §4.1): the domains of a project and their files.

The contract is a YAML-like block anywhere in the markdown file (bare or in a code fence)::

    projet:
      id       : "originsdigital"
      domaines :
        auth    : ["auth.middleware.ts", "auth.routes.ts"]

A project without a contract gets one inferred from its directory layout at replay time
(:func:`infer_contract`), always labelled ``inferred``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from brainlab.sources.base import Parsed, Source, decode_text
from brainlab.sources.files import list_files
from brainlab.sources.messages import said

_START = re.compile(r"^(\s*)(projet|project)\s*:\s*$")


def parse_contract(text: str) -> tuple[dict | None, list[tuple[int | None, str]]]:
    """The contract in ``text`` as {id, domains: {domain: ([files], line)}}, and problems."""
    lines = text.splitlines()
    errors: list[tuple[int | None, str]] = []
    start = next((i for i, line in enumerate(lines) if _START.match(line)), None)
    if start is None:
        return None, []
    base = len(_START.match(lines[start]).group(1))
    contract: dict = {"id": None, "domains": {}, "line": start + 1}
    in_domains, domain_indent = False, None
    for index in range(start + 1, len(lines)):
        raw = lines[index].rstrip()
        if not raw.strip() or raw.strip().startswith("#"):
            continue
        if raw.strip().startswith("```"):
            break
        indent = len(raw) - len(raw.lstrip())
        if indent <= base:
            break
        head, sep, value = raw.lstrip().partition(":")  # string ops: linear on any line
        if not sep or not head.strip() or "#" in head:
            errors.append((index + 1, f"cannot read contract line {raw.strip()[:200]!r}"))
            continue
        key, value = head.strip(), value.strip()
        if in_domains and domain_indent is not None and indent >= domain_indent:
            files = _files(value)
            if files is None:
                errors.append((index + 1, f"domain {key!r}: expected a [\"file\", ...] list, "
                                          f"got {value!r}"))
                continue
            contract["domains"][key] = (files, index + 1)
            continue
        in_domains = key.lower() in ("domaines", "domains")
        domain_indent = None
        if in_domains:
            domain_indent = _next_indent(lines, index + 1)
        elif key.lower() == "id":
            contract["id"] = value.strip("\"'") or None
    if not contract["domains"]:
        errors.append((start + 1, "contract has no domaines: nothing to route"))
    return contract, errors


def _next_indent(lines: list[str], index: int) -> int | None:
    for raw in lines[index:]:
        if raw.strip():
            return len(raw) - len(raw.lstrip())
    return None


def _files(value: str) -> list[str] | None:
    value = value.split("#", 1)[0].strip() if not value.startswith("[") else value
    end = value.find("]")
    if not value.startswith("[") or end < 0:
        return None
    inner = value[: end + 1]
    try:
        files = json.loads(inner)
    except json.JSONDecodeError:
        files = [v.strip().strip("\"'") for v in inner[1:-1].split(",") if v.strip()]
    if not all(isinstance(f, str) and f for f in files):
        return None
    return list(dict.fromkeys(files))


def infer_contract(paths: Iterable[str]) -> dict[str, list[str]]:
    """An inferred contract: each file goes to the domain named by its parent directory.

    A file with no directory goes to domain ``(root)``. Used only for analysis; callers label
    the result as inferred (SPEC §4.1 "no contract, no routing").
    """
    domains: dict[str, list[str]] = {}
    for path in sorted(set(paths)):
        parent = PurePosixPath(path).parent.name or "(root)"
        domains.setdefault(parent, []).append(path)
    return domains


class ContractSource(Source):
    """Project contracts: ``projets/*.md`` under a brain (``_template.md`` and README skipped)."""

    name = "contracts"
    tables = ("project_contracts",)

    def discover(self, root: Path) -> list[Path]:
        """``projets/*.md`` (or ``brain/projets``), or the given file."""
        root = Path(root)
        if root.is_file():
            return [root] if root.suffix == ".md" else []
        found: list[Path] = []
        for folder in (root / "projets", root / "brain" / "projets"):
            found += [p for p in list_files(folder, "*.md")
                      if not p.name.startswith("_") and p.name.lower() != "readme.md"]
        return sorted(found)

    def parse(self, path: Path, data: bytes, root: Path) -> Parsed:
        """One row per contract file; a project file without a contract yields a warning."""
        parsed = Parsed()
        text = decode_text(data, parsed)
        if text is None:
            return parsed
        contract, errors = parse_contract(text)
        for line, reason in errors:
            parsed.error(line, reason)
        if contract is None:
            parsed.error(None, said("no `projet:` contract block: the project will use an inferred"
                                    " contract"), severity="warning")
            return parsed
        alias = Path(path).stem
        project = contract["id"] or alias
        file = str(Path(path).resolve())
        for domain, (files, line) in contract["domains"].items():
            for position, name in enumerate(files):
                parsed.add("project_contracts", {
                    "project": project, "alias": alias, "domain": domain, "path": name,
                    "position": position, "source_file": file, "line": line,
                })
        return parsed
