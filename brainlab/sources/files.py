"""Which brain files are read, and how: regular files inside the ingested root, each once.

Discovery (:func:`list_files`) lists names and never raises: a directory named ``x.yml``, a
FIFO, a dangling symlink or a symlink loop is listed like a file, so the runner can give it an
error row instead of a traceback. :func:`read_input` then decides: a path whose real target is
outside the root is refused (its content is never read), anything that is not a regular file
is refused (a FIFO is opened non-blocking, so it can never hang a run), and a symlink to
another brain file yields that file's real path, so the runner reads it once.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

_KINDS = {stat.S_IFDIR: "a directory", stat.S_IFIFO: "a FIFO (named pipe)",
          stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFLNK: "a symlink"}


@dataclass(frozen=True)
class Refused:
    """Why a listed path was not read (the runner records it as an error row)."""

    reason: str


def list_files(folder: Path, pattern: str = "*", recursive: bool = False) -> list[Path]:
    """Entries of ``folder`` whose name matches ``pattern``, sorted; never raises.

    Hidden names (``.x``) are left out. Non-recursive: every matching entry, directories
    included (a directory named ``x.yml`` is a mistake worth an error row). Recursive: real
    sub-directories are walked and never listed; symlinks are listed, never followed.
    """
    found: list[Path] = []
    try:
        if not folder.is_dir():
            return []
        if not recursive:
            with os.scandir(folder) as entries:
                found = [Path(e.path) for e in entries
                         if not e.name.startswith(".") and fnmatchcase(e.name, pattern)]
            return sorted(found)
        for dirpath, dirnames, filenames in os.walk(folder):
            links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
            dirnames[:] = sorted(d for d in dirnames if d not in links and not d.startswith("."))
            found += [Path(dirpath, n) for n in [*filenames, *links]
                      if not n.startswith(".") and fnmatchcase(n, pattern)]
    except OSError:
        pass
    return sorted(found)


def read_input(path: Path, root: Path) -> tuple[str, bytes] | Refused:
    """``(identity, bytes)`` of a regular file inside ``root``, or why it is refused.

    The identity is the file's real path: two names for one file (a symlink beside its
    target) give one identity, so the runner reads and stores it once.
    """
    root = Path(root)
    try:
        real = Path(path).resolve(strict=True)
    except FileNotFoundError:
        if Path(path).is_symlink():
            return Refused(f"dangling symlink (target {os.readlink(path)!r} does not exist): "
                           "not read")
        return Refused("file vanished during the ingest: not read")
    except RuntimeError:
        return Refused("symlink loop: not read")
    except OSError as exc:
        return Refused(f"cannot resolve the path ({exc.strerror or exc}): not read")
    if real != root and root not in real.parents:
        return Refused(f"symlink pointing outside the ingested root (to {real}): refused, "
                       "its content is not read")
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        return Refused(f"cannot open ({exc.strerror or exc}): not read")
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
        return Refused(f"{kind}, not a regular file: not read")
    with os.fdopen(fd, "rb") as handle:
        try:
            return str(real), handle.read()
        except OSError as exc:
            return Refused(f"cannot read ({exc.strerror or exc}): not read")
