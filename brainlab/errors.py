"""The brainlab exception hierarchy: every error a user can meet, one class each.

The CLI turns any ``BrainlabError`` into a one-line ``Error: ...`` and exit code 1; anything
else is a bug and keeps its traceback. The root class and ``ConfigError`` are defined in
:mod:`brainlab.spec.errors` (the spec layer raises them and imports nothing of brainlab).
"""

from brainlab.spec.errors import BrainlabError, ConfigError

__all__ = ["BrainlabError", "ConfigError", "LakeError", "ReportError", "SimulationError",
           "SourceError", "StoreError", "StoreLockedError", "StoreMissingError"]


class StoreError(BrainlabError):
    """The DuckDB store cannot be opened or used as asked."""


class StoreLockedError(StoreError):
    """Another process holds the database open for writing (DuckDB allows one writer)."""


class StoreMissingError(StoreError):
    """A reader asked for a database file that does not exist yet."""


class SourceError(BrainlabError):
    """An input path cannot be ingested at all (missing, not a brain tree, ...)."""


class ReportError(BrainlabError):
    """A report could not be rendered; the previous report, if any, was left untouched."""


class SimulationError(BrainlabError):
    """A replay was given inputs or parameters it cannot work with."""


class LakeError(BrainlabError):
    """The Parquet lake cannot be written or read as asked, or Spark is not installed."""
