"""The live folder: per-session status line state, the spool, limit snapshots and the log.

``<cache>/live/`` (``$BRAINLAB_CACHE_DIR``, else ``$XDG_CACHE_HOME/brainlab``, else
``~/.cache/brainlab``), created with mode 0700 since it names the user's projects. Every
write is atomic (a temporary file in the same folder, then ``os.replace``) or an append of
one whole line (``O_APPEND``), so concurrent or killed runs leave either the old or the new
file, never half of one. Standard library only: the status line imports this at each run.
"""

from __future__ import annotations

import json
import os
import stat
import time

# brainlab.common.paths.CACHE_ENV, spelled here: importing that module means importing pathlib, a
# tenth of a status line started without site (tests/test_live_statusline.py checks both)
CACHE_ENV = "BRAINLAB_CACHE_DIR"
# the characters a state file's name keeps of a session id (any other becomes "_"): a set, not
# a pattern, so the status line compiles no regular expression of its own
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")

LOG_NAME = "live.log"
SPOOL_NAME = "spool.jsonl"
LIMITS_NAME = "limit_snapshots.jsonl"
DIGEST_NAME = "digest.json"
LOG_MAX_BYTES = 1_000_000  # past it the log starts over (it is for diagnosis, not a record)
JSON_MAX_BYTES = 8 << 20  # a state or digest file larger than this is not one of ours
# a file of the live folder is opened without blocking or following a link (issue 46: a FIFO
# or a link planted there fails at once instead of hanging the status line)
_SAFE = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = os.O_RDONLY | _SAFE
_APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | _SAFE


def live_dir(create: bool = True) -> str:
    """The live folder, made (mode 0700) when ``create``.

    :func:`brainlab.common.paths.cache_dir`'s rule, with ``os.path`` strings.
    """
    key = (os.environ.get(CACHE_ENV), os.environ.get("XDG_CACHE_HOME"), os.environ.get("HOME"))
    made = _MADE.get(key)
    if made is not None:  # this process made or saw it already (a status line asks 3 times)
        return made
    base = key[0]
    if base:
        base = os.path.expanduser(base)
    else:
        xdg = key[1] or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(xdg, "brainlab")
    path = os.path.join(base, "live")
    if create and not os.path.isdir(path):
        os.makedirs(path, mode=0o700, exist_ok=True)
        os.chmod(path, 0o700)  # makedirs' mode is masked by the umask
    if create:
        _MADE.clear()
        _MADE[key] = path
    return path


_MADE: dict[tuple, str] = {}  # the settings live_dir depends on -> the folder it made


def file(name: str) -> str:
    """A file of the live folder (the folder made first)."""
    return os.path.join(live_dir(), name)


def crc32(data: bytes) -> int:
    """``binascii.crc32(data)``, computed here for a short id.

    binascii is a shared library whose loading cost the status line half a millisecond at
    each run (issue 46: its CPU per call must not grow).
    """
    if len(data) > 256:  # a long (hostile) id: the library's loop, not this one
        import binascii

        return binascii.crc32(data)
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0xEDB88320 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def state_path(session_id: str) -> str:
    """The state file of one session: its id made safe (hashlib costs 20 ms to import).

    Claude Code's ids are UUIDs; anything else is cut to 64 safe characters and told apart
    by the CRC-32 of the whole id.
    """
    raw = session_id.encode("utf-8", "replace")
    safe = "".join(c if c in _NAME_CHARS else "_" for c in session_id[:64])
    name = f"{safe}-{crc32(raw):08x}"
    return os.path.join(live_dir(), "sessions", f"{name}.json")


def read_json(path: str) -> dict | None:
    """A JSON object read from ``path``, or None.

    None: missing, unreadable, not a regular file (opened without blocking or following a
    link), larger than :data:`JSON_MAX_BYTES`, not strict JSON (``NaN``) or not an object.
    """
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            raw = handle.read(JSON_MAX_BYTES + 1)
        if len(raw) > JSON_MAX_BYTES:
            return None
        value = json.loads(raw, parse_constant=_not_a_number, parse_float=_finite)
    except (OSError, ValueError, RecursionError):
        return None
    finally:
        os.close(fd)
    return value if isinstance(value, dict) else None


def _not_a_number(word: str):
    raise ValueError(f"{word} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):  # 1e400
        raise ValueError(f"{text} is not a finite number")
    return value


def write_json(path: str, value: dict) -> None:
    """Write ``value`` to ``path`` atomically (temporary file named by pid, then replace)."""
    folder, name = os.path.split(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(value, handle, separators=(",", ":"), allow_nan=False)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def append_line(path: str, value: dict) -> None:
    """Append ``value`` as one JSON line with a single ``write`` on an ``O_APPEND`` file.

    Never a non-finite number (``NaN``, ``Infinity`` are not JSON): ValueError instead.
    """
    data = (json.dumps(value, separators=(",", ":"), allow_nan=False) + "\n").encode()
    fd = _open_append(path)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _open_append(path: str) -> int:
    """A descriptor appending to the regular file ``path`` (created 0600).

    A FIFO, a device or a link planted in its place is an OSError at once, never a blocked
    ``open``.
    """
    fd = os.open(path, _APPEND_FLAGS, 0o600)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{path} is not a regular file")
    return fd


def log(message: str) -> None:
    """Append one timestamped line to ``live.log``; never raises (a hook must exit 0)."""
    try:
        path = file(LOG_NAME)
        try:
            if os.path.getsize(path) > LOG_MAX_BYTES:
                os.unlink(path)
        except OSError:
            pass
        line = f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} pid={os.getpid()} {message}"
        fd = _open_append(path)
        try:
            os.write(fd, (line.replace("\n", " ") + "\n").encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:  # noqa: BLE001 - logging must not be the thing that fails a hook
        pass
