"""The DuckDB store: one connection factory, SQL schema and views, the ingest log.

Readers use :func:`query` or :func:`reader`; only :mod:`brainlab.store.ingest` writes.
"""

from brainlab.store.connection import StoreConfig, connect, query, reader
from brainlab.store.schema import open_writer

__all__ = ["StoreConfig", "connect", "open_writer", "query", "reader"]
