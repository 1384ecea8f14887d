"""Helpers every benchmark shares: spans of timings, the load average, one machine-readable line.

A benchmark runs as a script (``python benchmarks/bench_x.py``): its own folder is on
``sys.path``, so it imports this module and its sibling benchmarks' generators without any
``sys.path`` edit, and brainlab as installed (or as ``PYTHONPATH`` gives it). Beside its
table each benchmark prints one ``BENCH {json}`` line (:func:`emit`): its name, the load
average and its headline figures, for scripts that compare runs.
"""

from __future__ import annotations

import io
import json
import os
import statistics
import subprocess
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

MARKER = "BENCH"
REPO = Path(__file__).resolve().parent.parent


def checkout(rev: str, into: Path, paths: tuple[str, ...] = ("brainlab",)) -> Path:
    """The ``brainlab`` package of git revision ``rev`` under ``into`` (a before/after run).

    ``PYTHONPATH=into`` then imports that revision's code beside today's in the same run.
    ``paths``: what to take besides (``notebooks``: the report notebook a render runs).
    """
    into = Path(into)
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, *paths],
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def median_span(values: list[float], unit: str = "s") -> str:
    """``median unit (min-max)``, the median padded to 6 characters."""
    return f"{statistics.median(values):6.2f} {unit} ({min(values):.2f}-{max(values):.2f})"


def span(values: list[float]) -> str:
    """``median (min-max)`` of a list of timings."""
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def timed(func: Callable[[], object]) -> float:
    """Seconds ``func()`` took (wall clock)."""
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def load_average() -> list[float]:
    """The 1, 5 and 15-minute load averages (a busy machine slows every figure)."""
    return [round(x, 2) for x in os.getloadavg()]


def _plain(value):
    """A JSON value: numbers rounded to 6 digits, numpy scalars as Python ones, else str."""
    item = getattr(value, "item", None)
    value = item() if callable(item) and getattr(value, "ndim", None) == 0 else value
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, int | str | bool) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return str(value)


def summary_line(name: str, **figures) -> str:
    """``BENCH {"bench": name, "load_average": [...], **figures}`` as one line."""
    record = {"bench": name, "load_average": load_average(), **figures}
    return f"{MARKER} {json.dumps(_plain(record), ensure_ascii=False)}"


def emit(name: str, **figures) -> None:
    """Print the benchmark's machine-readable summary line (see :func:`summary_line`)."""
    print(summary_line(name, **figures), flush=True)
