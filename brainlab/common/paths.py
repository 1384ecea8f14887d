"""Default places of the database, the demo brain and the reports (relative to the cwd).

Apart from :mod:`brainlab.settings` (which re-exports them) so the command line and the store's
connection factory name them without building the threshold dataclasses (issue 12: read
commands start fast).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import os

DEFAULT_DB = Path("data/brainlab.duckdb")
DEMO_DIR = Path("data/demo")
DEFAULT_REPORTS = Path("reports")

CACHE_ENV = "BRAINLAB_CACHE_DIR"
CONFIG_ENV = "BRAINLAB_CONFIG"  # the settings file (brainlab.settings), for kernels a command runs
DEFAULT_CONFIG = Path("brainlab.toml")  # read when present in the working directory


def config_requested(path: str | os.PathLike | None = None) -> bool:
    """True when a settings file must be read: given, in ``$BRAINLAB_CONFIG``, or ./brainlab.toml.

    A stat at most, so a command without settings never imports the settings code.
    """
    import os

    return bool(path or os.environ.get(CONFIG_ENV) or DEFAULT_CONFIG.exists())


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
