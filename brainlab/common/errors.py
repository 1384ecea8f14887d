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


def fatal_message(exc: BaseException) -> tuple[str, int] | None:
    """The one-line message and exit code of an interrupt or a full disk, else None.

    Ctrl-C inside a DuckDB transaction surfaces as a ``TransactionException`` whose context
    is the ``KeyboardInterrupt``; a full disk as an ``OSError`` (ENOSPC) or a DuckDB error
    saying so. Both are the user's situation, not a bug: one ``Error:`` line (issue 29).
    """
    import errno

    chain, seen = [], exc
    while seen is not None and len(chain) < 20:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    if any(isinstance(e, KeyboardInterrupt) or "Query interrupted" in str(e)
           or str(e).startswith("INTERRUPT Error") for e in chain):  # DuckDB's own SIGINT
        return ("interrupted: the store keeps what its last committed step wrote; run the"
                " command again to finish", 130)
    for e in chain:
        text = str(e).strip().splitlines()[0] if str(e).strip() else ""
        if (isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT)) \
                or "No space left on device" in text or "disk is full" in text.lower():
            return (f"the disk is full ({text or e.__class__.__name__}): free space and run the"
                    " command again", 1)
    return None
