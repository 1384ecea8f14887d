"""Parse transcript files in worker processes that die with their parent.

Workers are forked (they inherit the column types and the memoised redaction) and parse
groups of whole files (:func:`brainlab.transcripts.scan.parse_group`: one set of Arrow
tables per group); the ingest process writes while they work. A worker asks the kernel to
kill it when its parent dies, so SIGTERM or SIGKILL of `ingest claude` leaves no process
behind. A small run (the usual incremental one) parses in the ingest process: starting
workers cost more than they save below PARALLEL_MIN_BYTES, so their modules are imported
only when a pool starts.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import types
import warnings
from collections.abc import Callable

from brainlab.transcripts.scan import FileJob, parse_group
from brainlab.transcripts.writer import BATCH_BYTES

# Below this, parsing in this process is as fast as a pool and costs less CPU: measured with
# 2 cores under load 3.8 (corpus files, one run each way), in-process vs 2 workers: 20 MB
# 0.14 vs 0.15 s wall, 40 MB 0.18-0.20 vs 0.23-0.26 s; a quiet machine's pool can at most
# halve a parse of ~0.15 s (32 MB) while paying its start-up (issue 12, +1% of 1 GB: 20 MB)
PARALLEL_MIN_BYTES = 32_000_000
# Below this, rows go to DuckDB as column lists (see rows); above it Arrow pays back
# (cheap to send from a worker, several times faster to insert than lists)
ARROW_MIN_BYTES = 64_000_000
# files parsed per task: converting rows to Arrow costs a call per column, so small files share
# one conversion (corpus x30: 870 files of 1.2 MB on average)
GROUP_BYTES = 16_000_000
GROUP_FILES = 64


def groups(jobs: list[FileJob]) -> list[list[FileJob]]:
    """Consecutive files of up to GROUP_BYTES (or GROUP_FILES) together: one task each."""
    out: list[list[FileJob]] = []
    size = GROUP_BYTES
    for job in jobs:
        if size >= GROUP_BYTES or len(out[-1]) >= GROUP_FILES:
            out.append([])
            size = 0
        out[-1].append(job)
        size += job.size - job.offset
    return out


def parse_all(jobs: list[FileJob], workers: int | None,
              meanwhile: Callable[[], None] | None = None):
    """Yield (jobs, GroupRead) pairs, parsing in worker processes when it pays.

    ``meanwhile`` (creating the store) runs once the workers have up to BATCH_BYTES of
    files to parse, before the first result is taken.
    """
    if workers is None:
        workers = os.cpu_count() or 1
    arrow = sum(job.size - job.offset for job in jobs) >= ARROW_MIN_BYTES
    tasks = groups(jobs)
    if not uses_pool(jobs, workers):
        if meanwhile:
            meanwhile()
        for task in tasks:
            yield task, parse_group(task, arrow)
        return
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    if arrow:
        import pyarrow  # noqa: F401  (once here, not once per forked worker)
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context,
                             initializer=_die_with_parent, initargs=(os.getpid(), arrow)
                             ) as pool:
        pending, queue = {}, list(reversed(tasks))
        if meanwhile:  # keep the workers busy meanwhile: more files in flight, once
            ahead = 0
            while queue and ahead < BATCH_BYTES:
                task = queue.pop()
                ahead += sum(job.size - job.offset for job in task)
                pending[pool.submit(parse_group, task, arrow)] = task
            meanwhile()
        while queue or pending:
            while queue and len(pending) < 2 * workers:  # bound memory: few results in flight
                task = queue.pop()
                pending[pool.submit(parse_group, task, arrow)] = task
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield pending.pop(future), future.result()


def uses_pool(jobs: list[FileJob], workers: int | None) -> bool:
    """Whether :func:`parse_all` parses ``jobs`` in worker processes (else in this one)."""
    workers = (os.cpu_count() or 1) if workers is None else workers
    if workers <= 1 or len(jobs) < 2:
        return False
    if sum(job.size - job.offset for job in jobs) < PARALLEL_MIN_BYTES:
        return False
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def _die_with_parent(parent: int, arrow: bool = False) -> None:
    """Worker start-up: the kernel kills this worker when the parent dies (even by SIGKILL)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG (Linux)
    except (OSError, AttributeError):  # not Linux: the executor's own shutdown only
        pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
    # a task makes hundreds of thousands of row tuples, freed by reference counting: the
    # cyclic collector only walked them (as in the writer, which turns it off while it runs)
    gc.freeze()
    gc.set_threshold(200_000, 20, 20)
    if arrow:
        _arrow_without_pandas()


def _arrow_without_pandas() -> None:
    """Keep pyarrow from importing pandas in a worker (0.7 CPU-s each, for nothing here).

    pyarrow looks for pandas on its first ``pa.array`` and turns its pandas integration off
    when the version found is below 1.0: a stand-in module answers that once, then is
    removed, so nothing else in the worker can see it. Workers only build arrays from lists.
    """
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    stand_in = types.ModuleType("pandas")
    stand_in.__version__ = "0.0.0"
    sys.modules["pandas"] = stand_in
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pa.array([0])
    finally:
        del sys.modules["pandas"]
