"""Which transcript files to read: regular files under the root, each resolved once.

A transcript tree is user data and can hold anything: directories named ``x.jsonl``, FIFOs
(reading one would block the run forever), dangling symlinks, symlink loops, symlinks to
files outside the root (``/etc/passwd``) or to another transcript of the tree, files without
read permission. Each path is resolved once; only regular files inside the root are read, a
file reached by two paths is read once (under its resolved path), and every path refused is a
problem (path, reason) the ingest records as an error row. Nothing here raises on a bad entry.

Where Claude Code keeps transcripts (:func:`default_roots`) follows ccusage's rule, so both
read the same calls: every folder of ``$CLAUDE_CONFIG_DIR`` (comma-separated), else both
``$XDG_CONFIG_HOME/claude`` (``~/.config/claude``) and ``~/.claude``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from brainlab.transcripts import roots

# a session id as Claude Code names its files (sessionId, a UUID)
_SESSION_NAME = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                           r"[0-9a-fA-F]{12}")


def fallback_session(stem_path: Path) -> str:
    """The session of a line without ``sessionId``, from its file (or session folder) name.

    The name itself when it is a session id as Claude Code names its files (a UUID: the same
    session wherever the file lies), else ``<project folder>/<name>`` (counting rule 5).
    """
    name = stem_path.name
    if _SESSION_NAME.fullmatch(name):
        return name
    return f"{stem_path.parent.name}/{name}"


def default_roots() -> tuple[list[Path], list[Path]]:
    """The ``projects/`` folders Claude Code writes to, as ccusage reads them; and those tried.

    :func:`brainlab.transcripts.roots.projects_folders` (the hooks' and the status line's
    rule too) as paths: (existing folders, resolved, without repeats; every folder tried).
    """
    found, tried = roots.projects_folders()
    return [Path(folder) for folder in found], [Path(folder) for folder in tried]


def discover(root: Path) -> tuple[list[Path], list[tuple[str, str]]]:
    """Return (resolved regular ``*.jsonl`` files, sorted and unique; refused (path, reason)).

    ``root`` is a config dir (``projects/`` is used when present), a projects folder, one
    project or one file.
    """
    root = Path(root)
    problems: list[tuple[str, str]] = []
    if root.is_file():
        return [root.resolve()], problems
    projects = root / "projects"
    base = (projects if projects.is_dir() else root).resolve()
    found: dict[str, Path] = {}
    for entry in _entries(base, problems):
        path = Path(entry.path)
        if _plain(entry):  # a regular file reached without a link: resolved already
            resolved, reason = path, None
        else:  # a link, a directory, a FIFO, an unreadable file: the careful checks
            resolved, reason = _check(path, base)
        if reason:
            problems.append((str(path), reason))
        elif str(resolved) not in found:
            found[str(resolved)] = resolved
    return sorted(found.values()), problems


def _entries(base: Path, problems: list[tuple[str, str]]) -> Iterator[os.DirEntry]:
    """Every ``*.jsonl`` entry under ``base``, folder by folder in name order (as os.walk).

    Directory links are never followed, so a folder's path holds no link and a plain file
    in it is its own resolved path: os.scandir's entries say so without a stat or a
    realpath per file (820 files: 40 ms -> a few, issue 12's incremental run).
    """
    stack = [str(base)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            problems.append((str(exc.filename or folder), f"skipped: cannot list ({_why(exc)})"))
            continue
        folders = []
        for entry in entries:
            if entry.name.endswith(".jsonl"):
                yield entry
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
            except OSError:
                continue
        stack.extend(reversed(folders))


def _plain(entry: os.DirEntry) -> bool:
    """A readable regular file, not a link (from the directory listing, no stat mostly)."""
    try:
        return entry.is_file(follow_symlinks=False) and os.access(entry.path, os.R_OK)
    except OSError:
        return False


def _check(path: Path, base: Path) -> tuple[Path | None, str | None]:
    """The resolved path of a readable regular file inside ``base``, or why it is refused.

    :func:`brainlab.transcripts.roots.check`: the rule a hook's path is held to too.
    """
    resolved, reason = roots.check(str(path), [str(base)])
    return (Path(resolved) if resolved is not None else None), reason


_why = roots.why
