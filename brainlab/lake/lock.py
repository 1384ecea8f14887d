"""The lake's lock: one writer at a time on a lake, export or Spark run (issue 47 item 7).

An ``flock`` on ``<lake>/_lake.lock``, taken before anything is written and held to the end:
``brainlab export`` waits for it (up to a minute, an export is short), a Spark run refuses at
once with one line (a run takes minutes; the second one is started again after the first).
Two overlapping Spark runs used to write every line twice (issue 47). An ``flock`` holds on
one machine and on a shared file system that supports it (NFSv4, most cluster mounts); an
object-store lake (``s3a://``) has no lock: its runs are serialised by whoever schedules them
(docs/lake.md).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from brainlab.common.errors import LakeError

LOCK = "_lake.lock"


@contextlib.contextmanager
def locked(root: str | os.PathLike, wait: float, what: str) -> Iterator[None]:
    """Hold the lake's lock, waiting up to ``wait`` seconds.

    ``what``: this writer, named in the refusal (``export``, ``Spark run``).
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    with open(root / LOCK, "a+") as handle:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LakeError(f"another export or Spark run is writing to {root} (lock"
                                    f" {LOCK}); this {what} wrote nothing: wait for that one"
                                    " to end and run it again") from None
                time.sleep(0.1)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
