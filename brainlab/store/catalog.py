"""What the package's SQL files define, read with the standard library alone.

The names and fingerprint the rest of the store checks a database against: the SQL files of
a folder, the schema fingerprint (a change means a store of another schema: upgrade it), and
the lookup tables written from brainlab.spec. It sits below the connection factory, the
schema writer and the upgrade, so none of them imports another to learn these (issue 23 item
4: no import cycle).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

FOLDER = Path(__file__).parent  # schema/, views/, models/ (an installed package's folder)
# the lookup tables schema._write_lookups writes from brainlab.spec (derived: rewritten by
# every apply; the lake rebuilds, not exports them)
LOOKUP_TABLES = ("session_categories", "claim_ttl", "session_type_sets", "rule_catalogue",
                 "stop_codes", "session_modes", "mode_perimeters", "mode_budgets")


def sql_files(folder: str) -> list[tuple[str, str]]:
    """``(name, text)`` of every ``.sql`` file of ``folder`` (schema, views), in name order."""
    base = FOLDER / folder
    return sorted((p.name, p.read_text(encoding="utf-8")) for p in base.iterdir()
                  if p.name.endswith(".sql"))


def schema_fingerprint() -> str:
    """A hash of the table definitions: a change means an old store must be upgraded."""
    digest = hashlib.sha256()
    for name, text in sql_files("schema"):
        digest.update(name.encode() + b"\0" + text.encode())
    return digest.hexdigest()[:16]


def stale_schema(con) -> str | None:
    """The schema fingerprint a store was written with, when it is not this package's."""
    try:
        row = con.execute("SELECT value FROM brainlab_meta WHERE key = 'schema'").fetchone()
    except Exception:  # noqa: BLE001  (no meta table: not a brainlab store of any version)
        return None
    return row[0] if row and row[0] != schema_fingerprint() else None
