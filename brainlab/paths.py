"""Default places of the database, the demo brain and the reports (relative to the cwd).

Apart from :mod:`brainlab.config` (which re-exports them) so the command line and the store's
connection factory name them without building the threshold dataclasses (issue 12: read
commands start fast).
"""

from __future__ import annotations

from pathlib import Path

DEFAULT_DB = Path("data/brainlab.duckdb")
DEMO_DIR = Path("data/demo")
DEFAULT_REPORTS = Path("reports")

CACHE_ENV = "BRAINLAB_CACHE_DIR"


def cache_dir() -> Path:
    """Where brainlab keeps its caches (``$BRAINLAB_CACHE_DIR``, XDG, ``~/.cache/brainlab``).

    Caches hold what brainlab can rebuild from installed packages alone (the empty-store
    template, detect-secrets' patterns): deleting the folder costs one slower run, nothing else.
    """
    import os

    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "brainlab"
