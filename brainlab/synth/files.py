"""The synthetic brain's files in memory, the one writer that puts them on disk, named streams.

Every generator and plant of :mod:`brainlab.synth` contributes to one :class:`BrainFiles`
(relative path -> text) instead of the disk: a plant that breaks a rule changes the text in
memory, so when :meth:`BrainFiles.write` runs, :func:`write_file` writes each file exactly
once. :func:`stream` gives each plant its own random stream, seeded by the brain's seed and
the plant's name, so adding a plant never shifts another one's draws (the render areas keep
their historic seeds, :data:`AREA_SEEDS`, so the demo's figures do not move).
"""

from __future__ import annotations

import json
import os
import random
import re
import uuid
from collections.abc import Iterator
from datetime import UTC, date, datetime
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

# The render areas' streams keep the seeds they were drawn from before plants were
# registered, so every figure of the demo brain stays what it was; the brain's own files
# (sessions, logs, workspaces) are one stream drawn in that order. Plants, and any area
# added later, get a stream seeded by their name.
AREA_SEEDS = {
    "brain": lambda seed: seed,
    "sprints": lambda seed: seed + 4,
    "circuits": lambda seed: seed * 1000 + 5,
    "transcripts": lambda seed: seed * 7919 + 3,
    "sprint-transcripts": lambda seed: seed * 7919 + 11,
    "telemetry": lambda seed: seed * 7919 + 26,
}


def stream(seed: int, name: str) -> random.Random:
    """The random stream called ``name`` of the brain drawn from ``seed``.

    A render area of :data:`AREA_SEEDS` keeps its historic seed; any other name (every
    plant) is seeded by ``"<seed>:<name>"``, which Python hashes stably (SHA-512), so a
    plant's draws depend on nothing but the seed and its own name.
    """
    if name in AREA_SEEDS:
        return random.Random(AREA_SEEDS[name](seed))
    return random.Random(f"{seed}:{name}")


def random_uuid(rng: random.Random, version: int | None = None) -> str:
    """A UUID drawn from ``rng`` (128 random bits; ``version`` stamps the version field)."""
    if version is None:
        return str(uuid.UUID(int=rng.getrandbits(128)))
    return str(uuid.UUID(int=rng.getrandbits(128), version=version))


def jsonl_text(lines: list[dict], compact: bool = True) -> str:
    """``lines`` as JSON Lines: compact separators as Claude Code writes them, or json's default."""
    separators = (",", ":") if compact else None
    return "".join(json.dumps(line, separators=separators, ensure_ascii=False) + "\n"
                   for line in lines)


def write_file(path: Path, text: str) -> None:
    """The one writer: ``text`` as UTF-8 at ``path`` (parents made)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _sort_key(relative: str) -> tuple[str, ...]:
    return PurePosixPath(relative).parts  # the order sorted(Path.glob()) gives


class BrainFiles:
    """The brain's files by relative POSIX path, in memory until :meth:`write`."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}
        self.mtimes: dict[str, datetime] = {}  # files given a modification time (UTC)

    def touch(self, relative: str, when: datetime) -> None:
        """Give ``relative`` the modification time ``when`` (naive UTC) once written."""
        self.mtimes[relative] = when

    def put(self, relative: str, text: str) -> None:
        """Set the text of ``relative`` (a new file, or the new text of one not yet written)."""
        self.texts[relative] = text

    def put_jsonl(self, relative: str, lines: list[dict], compact: bool = True) -> None:
        """Set ``relative`` to ``lines`` as JSON Lines (see :func:`jsonl_text`)."""
        self.put(relative, jsonl_text(lines, compact))

    def append(self, relative: str, text: str) -> None:
        """Append ``text`` to the file at ``relative`` (it must exist)."""
        self.texts[relative] += text

    def text(self, relative: str) -> str:
        """The text of ``relative``."""
        return self.texts[relative]

    def jsonl(self, relative: str) -> list[dict]:
        """The JSON objects of a JSON Lines file, one per line."""
        return [json.loads(t) for t in self.texts[relative].splitlines()]

    def exists(self, relative: str) -> bool:
        """Whether ``relative`` is a file of the brain."""
        return relative in self.texts

    def remove(self, relative: str) -> None:
        """Drop one file."""
        del self.texts[relative]

    def remove_tree(self, folder: str) -> None:
        """Drop every file under ``folder``."""
        for relative in [r for r in self.texts if r.startswith(folder.rstrip("/") + "/")]:
            del self.texts[relative]

    def glob(self, pattern: str) -> list[str]:
        """Files matching ``pattern`` (``*`` stays inside one path part), sorted like pathlib."""
        depth = len(PurePosixPath(pattern).parts)
        return sorted((r for r in self.texts if len(PurePosixPath(r).parts) == depth
                       and all(fnmatchcase(p, q) for p, q in
                               zip(PurePosixPath(r).parts, PurePosixPath(pattern).parts,
                                   strict=True))), key=_sort_key)

    def under(self, folder: str, suffix: str = "") -> list[str]:
        """Files anywhere under ``folder`` whose name ends with ``suffix``, sorted like pathlib."""
        prefix = folder.rstrip("/") + "/"
        return sorted((r for r in self.texts if r.startswith(prefix) and r.endswith(suffix)),
                      key=_sort_key)

    def folders(self, folder: str) -> list[str]:
        """Names of the direct sub-folders of ``folder`` that hold a file, sorted."""
        prefix = folder.rstrip("/") + "/"
        return sorted({r[len(prefix):].split("/", 1)[0] for r in self.texts
                       if r.startswith(prefix) and "/" in r[len(prefix):]})

    def __len__(self) -> int:
        """How many files the brain holds."""
        return len(self.texts)

    def __iter__(self) -> Iterator[str]:
        """Relative paths, in the order they were first put."""
        return iter(self.texts)

    def write(self, root: Path) -> int:
        """Write every file under ``root`` once, through :func:`write_file`; the count."""
        for relative in sorted(self.texts, key=_sort_key):
            write_file(root / relative, self.texts[relative])
            if relative in self.mtimes:
                stamp = self.mtimes[relative].replace(tzinfo=UTC).timestamp()
                os.utime(root / relative, (stamp, stamp))
        return len(self.texts)


def workspace_decisions(files: BrainFiles, name: str) -> list[date]:
    """The days of the decision lines in ``workspace/<name>/log.md`` (none when it is missing)."""
    log = f"workspace/{name}/log.md"
    if not files.exists(log):
        return []
    return [date.fromisoformat(t[:10]) for t in files.text(log).splitlines()
            if re.match(r"\d{4}-\d{2}-\d{2}", t)]
