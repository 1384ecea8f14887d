"""What the package's SQL model files define, read with the standard library alone.

The names and fingerprint the rest of the store checks a database against: the model files
of a layer (``models/<layer>/<name>.sql``), the schema fingerprint over the raw tables (a
change means a store of another schema: upgrade it), and the lookup tables written from
brainlab.spec. It sits below the connection factory, the schema writer and the upgrade, so
none of them imports another to learn these (issue 23 item 4: no import cycle).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

FOLDER = Path(__file__).parent / "models"  # raw/, staging/, marts/, rules/ (package files)
# the lookup tables schema._write_lookups fills from brainlab.spec and the rule ymls (derived:
# rewritten by every apply; the lake rebuilds, not exports them); their DDL is in raw/
LOOKUP_TABLES = ("session_categories", "claim_ttl", "session_type_sets", "rule_catalogue",
                 "stop_codes", "session_modes", "mode_perimeters", "mode_budgets",
                 "scored_categories", "workspace_retention")
META = "brainlab_meta"  # raw/brainlab_meta.sql: the store's bookkeeping, created first
# A store written before the one-model-per-file layout (issue 23 item 2) carries the hash of
# the same CREATE TABLE statements grouped in schema/*.sql: old fingerprint -> this layout's
# fingerprint of those very statements. Such a store is current, not upgraded (its rows are
# not moved nor its files re-read); any later edit of a table changes the new fingerprint, so
# the pair no longer matches and the store is upgraded as usual.
SAME_TABLES = {"30af70d81a9ccc05": "41f2c5a3d8cad054"}

# The store's schema version (issue 47 item 5): an integer that only grows, one step for each
# change of the raw tables' definitions (each new schema fingerprint). A store records the
# version and the release that last wrote it in brainlab_meta (``schema_version``,
# ``release``); a brainlab whose version is lower never writes that store (it would "upgrade"
# it to its older tables and drop the columns it does not know) and reads it with a warning.
# Stores written before the version was recorded are version 1 or older: upgraded as before.
# Changing a raw table: add one to SCHEMA_VERSION and set SCHEMA_VERSION_FINGERPRINT to the
# new schema_fingerprint() (tests/test_store_version.py checks the pair).
SCHEMA_VERSION = 3
SCHEMA_VERSION_FINGERPRINT = "cdbd292a80b0958a"


def sql_files(layer: str) -> list[tuple[str, str]]:
    """``(file name, text)`` of every ``.sql`` file of a layer folder, in name order.

    ``"schema"`` is the raw layer's name before issue 23 (tables only, without the lookups
    and brainlab_meta, as the schema/ folder held them).
    """
    if layer == "schema":
        return [(n, t) for n, t in sql_files("raw") if n[:-4] not in (*LOOKUP_TABLES, META)]
    base = FOLDER / layer
    return sorted((p.name, p.read_text(encoding="utf-8")) for p in base.iterdir()
                  if p.name.endswith(".sql"))


def raw_tables() -> list[str]:
    """The tables the ingest writes (raw layer, less the lookups and brainlab_meta)."""
    return sorted(p.name[:-4] for p in (FOLDER / "raw").iterdir() if p.name.endswith(".sql")
                  and p.name[:-4] not in (*LOOKUP_TABLES, META))  # names only: no file read


def schema_fingerprint() -> str:
    """A hash of the table definitions: a change means an old store must be upgraded."""
    digest = hashlib.sha256()
    for name, text in sql_files("schema"):
        digest.update(name.encode() + b"\0" + text.encode())
    return digest.hexdigest()[:16]


def current_schema(stored: str | None) -> bool:
    """True when a store's schema fingerprint is this package's (or the same tables' older one)."""
    fingerprint = schema_fingerprint()
    return stored == fingerprint or SAME_TABLES.get(stored or "") == fingerprint


def version_number(value: str | None) -> int | None:
    """A store's recorded ``schema_version`` as an int (None: not recorded, an older store)."""
    if value is None:
        return None
    try:
        return int(str(value).strip())
    except ValueError:
        return -1  # not a number: never taken as older, never as this package's


def newer_store(stored: dict, path: str, writing: bool) -> str | None:
    """Why this brainlab must not write (or may only read) a store, from its brainlab_meta.

    None when the store's schema version is not above this package's :data:`SCHEMA_VERSION`.
    """
    from brainlab import __version__

    version = version_number(stored.get("schema_version"))
    if version is None or (0 <= version <= SCHEMA_VERSION):
        return None
    release = str(stored.get("release") or "of an unknown release")[:40]
    if version < 0:
        return (f"store {path} records schema version {str(stored.get('schema_version'))[:40]!r}, not a"
                " version number: this brainlab does not write it; use the brainlab that wrote it, or"
                " ingest into a new store")
    head = (f"store {path} was written by brainlab {release} (schema version {version}), newer"
            f" than this brainlab {__version__} (schema version {SCHEMA_VERSION})")
    if writing:
        return (f"{head}: this brainlab never writes a newer store (it would drop the columns"
                " it does not know); upgrade brainlab (pip install -U brainlab) and run the"
                " command again")
    return (f"{head}: read only; a figure the newer version added may be missing or a query"
            " may fail: upgrade brainlab (pip install -U brainlab)")


def stale_schema(con) -> str | None:
    """The schema fingerprint a store was written with, when it is not this package's."""
    try:
        row = con.execute("SELECT value FROM brainlab_meta WHERE key = 'schema'").fetchone()
    except Exception:  # noqa: BLE001  (no meta table: not a brainlab store of any version)
        return None
    return row[0] if row and not current_schema(row[0]) else None
