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
CONFIG_ENV = "BRAINLAB_CONFIG"  # the settings file (brainlab.settings)
DEFAULT_CONFIG = Path("brainlab.toml")  # read when present in the user's working folder
SETTINGS_ENV = "BRAINLAB_SETTINGS"  # the settings a command resolved, for the processes it starts
# the environment's level of the settings (brainlab.settings): one variable per setting
DB_ENV = "BRAINLAB_DB"  # the store
PRICES_ENV = "BRAINLAB_PRICES"  # a price file over the package's
TZ_ENV = "BRAINLAB_TIMEZONE"  # the IANA zone of the dated views
WEEK_ENV = "BRAINLAB_START_OF_WEEK"  # monday or sunday
THRESHOLDS_ENV = "BRAINLAB_THRESHOLDS"  # key=value,... over [thresholds]
REGULATOR_ENV = "BRAINLAB_REGULATOR"  # key=value,... over [regulator]
# every variable brainlab.settings reads: one of them set means settings to resolve
SETTINGS_ENVS = (SETTINGS_ENV, CONFIG_ENV, DB_ENV, PRICES_ENV, TZ_ENV, WEEK_ENV, THRESHOLDS_ENV,
                 REGULATOR_ENV)


def config_requested(path: str | os.PathLike | None = None) -> bool:
    """True when settings must be resolved: a file given or found, or a settings variable set.

    A few lookups and a stat at most, so a command without settings never imports the
    settings code (brainlab.settings).
    """
    import os

    return bool(path or any(os.environ.get(name) for name in SETTINGS_ENVS)
                or user_path(DEFAULT_CONFIG).is_file())


def user_path(value: str | os.PathLike) -> Path:
    """``value`` made absolute against the folder where the user typed the command.

    That folder is ``$PWD`` (every shell sets it, and a kernel or a ``cd`` inside a program
    does not change it), else the current directory. A relative path that exists only from the
    current directory is still found there; a path that exists nowhere is given from ``$PWD``
    (so the error names the file the user meant).
    """
    import os

    path = Path(value).expanduser()
    if path.is_absolute():
        return path
    bases = []
    shell = os.environ.get("PWD")
    if shell and Path(shell).is_absolute() and Path(shell).is_dir():
        bases.append(Path(shell))
    bases.append(Path.cwd())
    for base in bases:
        if (base / path).exists():
            return base / path
    return bases[0] / path


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
