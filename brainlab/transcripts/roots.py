"""Claude's transcript folders, and whether a path is a transcript inside them (issue 46).

One rule for every reader of transcripts: ``ingest claude`` (:mod:`brainlab.transcripts.discovery`
wraps these functions in ``Path``), the hooks (a path a hook names is spooled only when it
passes :func:`check`) and the status line and ``hook session-start`` (which open a transcript
through :func:`open_transcript` only). Standard library only, with ``os.path`` strings: the
status line imports this at each run, and ``pathlib`` alone would cost it a tenth.

Where Claude Code keeps transcripts follows ccusage's rule, so both read the same calls: every
folder of ``$CLAUDE_CONFIG_DIR`` (comma-separated), else both ``$XDG_CONFIG_HOME/claude``
(``~/.config/claude``) and ``~/.claude``; in each, its ``projects/`` folder.
"""

from __future__ import annotations

import os
import stat

SUFFIX = ".jsonl"  # what Claude Code names a transcript
_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
               | getattr(os, "O_CLOEXEC", 0))


def projects_folders() -> tuple[list[str], list[str]]:
    """The ``projects/`` folders Claude Code writes to, and those tried.

    Returns (existing ones, resolved, without repeats; every folder tried).

    ``$CLAUDE_CONFIG_DIR`` may name several config folders, comma-separated (each holding
    ``projects/``, or a ``projects/`` folder itself); when it is set, only those are read.
    Else ``$XDG_CONFIG_HOME/claude/projects`` (``~/.config/claude/projects``) and
    ``~/.claude/projects``.
    """
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    if env is not None and env.strip(",").strip():
        configs = []
        for part in env.split(","):
            part = os.path.expanduser(part.strip()).rstrip(os.sep) or (os.sep if part.strip()
                                                                         else "")
            if not part:
                continue
            if os.path.basename(part) == "projects" and os.path.isdir(part):
                part = os.path.dirname(part) or "."
            configs.append(part)
    else:
        home = os.path.expanduser("~")
        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        configs = [os.path.join(xdg, "claude"), os.path.join(home, ".claude")]
    tried = [os.path.join(config, "projects") for config in configs]
    found: dict[str, None] = {}
    for folder in tried:
        if os.path.isdir(folder):
            found.setdefault(os.path.realpath(folder), None)
    return list(found), tried


_FOUND: dict[tuple, list[str]] = {}  # the settings it depends on -> the folders found


def _found() -> list[str]:
    """:func:`projects_folders`' existing folders, looked up once per process and setting.

    An empty answer is asked again: the folder may be made meanwhile.
    """
    key = tuple(os.environ.get(k) for k in ("CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "HOME"))
    found = _FOUND.get(key)
    if not found:
        _FOUND.clear()
        found = _FOUND[key] = projects_folders()[0]
    return found


def inside(resolved: str, bases) -> bool:
    """Whether the resolved path ``resolved`` is one of ``bases`` (resolved) or lies below one."""
    return any(resolved == base or resolved.startswith(base.rstrip(os.sep) + os.sep)
               for base in bases)


def check(path: str, bases) -> tuple[str | None, str | None]:
    """The resolved path of a readable regular file inside one of ``bases``, or why it is refused.

    ``bases``: resolved folders (:func:`projects_folders`' first list, or the root an
    ingest was given). A symlink is followed only to see where it leads: a target outside
    ``bases`` is refused (its path is never returned), as are FIFOs, sockets, devices,
    directories, dangling links, loops and unreadable files. Never opens ``path``.
    """
    try:
        resolved = os.path.realpath(path, strict=True)
    except FileNotFoundError:
        if os.path.lexists(path) and os.path.islink(path):
            return None, "skipped: dangling symlink (its target does not exist)"
        return None, "skipped: no such file"
    except OSError as exc:
        if exc.errno == 40:  # ELOOP
            return None, "skipped: symlink loop"
        return None, f"skipped: cannot resolve ({why(exc)})"
    except RuntimeError:  # a loop (older Pythons)
        return None, "skipped: symlink loop"
    except ValueError:  # a NUL in the path
        return None, "skipped: not a path"
    if not inside(resolved, bases):
        return None, ("skipped: symlink to a file outside the transcript root"
                      if resolved != os.path.abspath(path) else
                      "skipped: outside Claude's transcript folders")
    try:
        mode = os.stat(resolved).st_mode
    except OSError as exc:
        return None, f"skipped: cannot stat ({why(exc)})"
    if stat.S_ISDIR(mode):
        return None, "skipped: a directory named like a transcript"
    if not stat.S_ISREG(mode):
        return None, "skipped: not a regular file (FIFO, socket or device)"
    if not os.access(resolved, os.R_OK):
        return None, "skipped: no read permission"
    return resolved, None


def claude_transcript(path) -> tuple[str | None, str | None]:
    """A path a hook or the status line was given: its resolved path, or why it is refused.

    An absolute ``*.jsonl`` path that resolves to a ``*.jsonl`` regular file inside Claude's
    transcript folders (:func:`projects_folders`): the files ``ingest claude`` reads.
    """
    if not isinstance(path, str) or not path.endswith(SUFFIX) or not os.path.isabs(path):
        return None, "skipped: not an absolute *.jsonl path"
    if "\0" in path:
        return None, "skipped: not a path"
    found = _found()
    if not found:
        return None, "skipped: outside Claude's transcript folders (there are none)"
    resolved, reason = check(path, found)
    if resolved is not None and not resolved.endswith(SUFFIX):
        return None, "skipped: symlink to a file that is not a transcript"
    return resolved, reason


def open_transcript(path) -> tuple[int | None, str | None]:
    """A read-only descriptor on the transcript ``path`` names, or why it is refused.

    The rule of :func:`claude_transcript` (nothing outside Claude's folders is ever opened),
    with the checks a descriptor answers made on it: opened without blocking and without
    following a link (``O_NONBLOCK | O_NOFOLLOW``: a file swapped for a FIFO or a link
    meanwhile fails at once), then a regular file, and (where ``/proc`` says) still inside
    the folders. Fewer system calls than :func:`check`: the status line runs it each message.
    """
    if not isinstance(path, str) or not path.endswith(SUFFIX) or not os.path.isabs(path) \
            or "\0" in path:
        return None, "skipped: not an absolute *.jsonl path"
    found = _found()
    try:
        resolved = os.path.realpath(path, strict=True)
    except (OSError, RuntimeError, ValueError):  # missing, dangling, a loop
        return None, "skipped: cannot resolve"
    if not inside(resolved, found):
        return None, "skipped: outside Claude's transcript folders"
    if not resolved.endswith(SUFFIX):
        return None, "skipped: symlink to a file that is not a transcript"
    try:
        fd = os.open(resolved, _OPEN_FLAGS)
    except OSError as exc:
        return None, f"skipped: cannot open ({why(exc)})"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("skipped: not a regular file (FIFO, socket or device)")
        try:
            opened = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            opened = None  # no /proc: the checks above stand
        if opened is not None and not inside(opened, found):
            raise ValueError("skipped: moved outside Claude's transcript folders")
    except (OSError, ValueError) as exc:
        os.close(fd)
        return None, str(exc) if isinstance(exc, ValueError) else f"skipped: {why(exc)}"
    return fd, None


def why(exc: OSError) -> str:
    """An OSError's reason in words."""
    return exc.strerror or type(exc).__name__
