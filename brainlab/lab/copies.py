"""The user's working copies of the notebooks (``data/notebooks/``), which ``brainlab lab`` opens.

The tracked notebooks (``notebooks/``) are stored without outputs and never opened by the lab:
a save in JupyterLab would write outputs, the user's database path and data into the
repository (issue 28 item 3). :func:`sync_copies` copies each tracked notebook into the work
folder and keeps a small manifest (``.brainlab-copies.json``) of what each copy was made from:

- a notebook with no copy is copied;
- a copy the user never saved is refreshed when the tracked notebook changed;
- a copy the user saved is never overwritten: when the tracked notebook changed too, a note
  says so and how to get the new version (delete the copy, or open ``NAME.new.ipynb``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

MANIFEST = ".brainlab-copies.json"
PATTERN = "[0-9][0-9]_*.ipynb"


@dataclass
class SyncResult:
    """What :func:`sync_copies` did, by notebook name."""

    copied: list[str] = field(default_factory=list)
    refreshed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # the user's saved copy, tracked one newer

    def lines(self, work: Path) -> list[str]:
        """One line per thing the user should know (nothing when all copies were current)."""
        out = []
        if self.copied:
            out.append(f"copied {len(self.copied)} notebook(s) into {work}")
        if self.refreshed:
            out.append(f"refreshed {', '.join(self.refreshed)} in {work} (a newer version)")
        for name in self.kept:
            out.append(f"kept your edited {work / name}; a newer version is beside it as "
                       f"{Path(name).stem}.new.ipynb (delete your copy to take it)")
        return out


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _manifest(work: Path) -> dict:
    try:
        data = json.loads((work / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def sync_copies(source: Path, work: Path) -> SyncResult:
    """Bring the copies in ``work`` up to date with the notebooks of ``source`` (see module)."""
    source, work = Path(source), Path(work)
    work.mkdir(parents=True, exist_ok=True)
    manifest, result = _manifest(work), SyncResult()
    for tracked in sorted(source.glob(PATTERN)):
        name, copy = tracked.name, work / tracked.name
        new = _digest(tracked)
        seen = manifest.get(name, {})
        if not copy.exists():
            shutil.copyfile(tracked, copy)
            result.copied.append(name)
        elif seen.get("source") == new or _digest(copy) == new:
            if seen.get("source") == new:
                continue  # the tracked notebook did not change: the copy, edited or not, stays
        elif seen.get("copy") == _digest(copy):
            shutil.copyfile(tracked, copy)  # never saved by the user: take the new version
            result.refreshed.append(name)
        else:
            shutil.copyfile(tracked, work / f"{tracked.stem}.new.ipynb")
            result.kept.append(name)
            continue  # the manifest still names the old source: the note shows each start
        manifest[name] = {"source": new, "copy": _digest(copy)}
    (work / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n",
                                 encoding="utf-8")
    _glossary_beside(source, work)
    return result


def _glossary_beside(source: Path, work: Path) -> None:
    """The glossary where the copies' links look for it: ``../docs/glossary.md`` of ``work``.

    The notebooks link each name to ``../docs/glossary.md#...`` (docs/notebooks.md, Names),
    which from ``notebooks/`` is the tracked glossary and from ``data/notebooks/`` would be
    missing: the glossary is copied there, refreshed on each start.
    """
    glossary = source.parent / "docs" / "glossary.md"
    if glossary.is_file():
        target = work.parent / "docs" / "glossary.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(glossary, target)
