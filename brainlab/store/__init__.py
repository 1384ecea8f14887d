"""The DuckDB store: one connection factory, SQL schema and views, the ingest log.

Readers use :func:`query` or :func:`reader`; only :mod:`brainlab.store.ingest` writes.
:func:`open_writer` (and the schema code with its YAML parser) loads on first use, so read
commands start fast.
"""

from brainlab.store.connection import HeldReader, StoreConfig, connect, query, reader, rows

__all__ = ["HeldReader", "StoreConfig", "connect", "open_writer", "query", "reader", "rows"]


def __getattr__(name: str):
    """Import the schema module only when a writer is asked for."""
    if name == "open_writer":
        from brainlab.store.schema import open_writer

        return open_writer
    raise AttributeError(f"module 'brainlab.store' has no attribute {name!r}")
