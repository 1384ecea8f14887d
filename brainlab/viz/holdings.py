"""What a database holds, and the notebooks' empty states: a plain note naming what is missing.

A notebook runs top to bottom on every database a user can have (the demo, transcripts only,
a brain without metabolism logs, an empty store). Before a section that needs some data it
calls :func:`require`; when the data is absent the section shows one note, "Not in this
database: ...", naming the command that adds it, and the notebook goes on.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from IPython.display import Markdown, display

from brainlab.store import reader
from brainlab.store.connection import store_state

NOTE_PREFIX = "Not in this database:"


@dataclass(frozen=True)
class Source:
    """One kind of data a notebook can need: the table holding it and the command adding it."""

    table: str
    label: str
    command: str


SOURCES: dict[str, Source] = {
    "metabolism": Source("raw_metabolism_logs", "metabolism logs (SPEC §3.1)",
                         "brainlab ingest brain PATH/TO/BRAIN"),
    "agent_loads": Source("raw_agent_loads", "agent loads of the metabolism logs (SPEC §2.5)",
                          "brainlab ingest brain PATH/TO/BRAIN"),
    "contexts": Source("context_files", "boot context layers (SPEC §2.3)",
                       "brainlab ingest brain PATH/TO/BRAIN"),
    "sprints": Source("sprints", "sprint records (SPEC §4)", "brainlab ingest sprints PATH"),
    "circuits": Source("circuit_events", "ticket circuit journals (SPEC §6.7)",
                       "brainlab ingest circuits PATH"),
    "transcripts": Source("cc_files", "Claude Code transcripts (SPEC §7)",
                          "brainlab ingest claude [PATH]"),
}


def _count(con, table: str) -> int:
    exists = con.execute(  # a table, or a view over a lake's Parquet files (brainlab attach)
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'main' "
        "AND table_name = ?", [table]).fetchone()[0]
    return con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0] if exists else 0


_COUNTS: dict[tuple, dict[str, int]] = {}  # store state -> rows per source (the last few)


def counts(db) -> dict[str, int]:
    """Rows per source of :data:`SOURCES` in ``db``: one connection per store state.

    A notebook asks before most sections (:func:`require`, :func:`has`); each asking opened
    the store again (~0.05 CPU-s). Any write gives the store a new state, counted again.
    """
    key = store_state(db)
    if key not in _COUNTS:
        with reader(db) as con:
            found = {name: _count(con, s.table) for name, s in SOURCES.items()}
        while len(_COUNTS) >= 4:
            del _COUNTS[next(iter(_COUNTS))]
        _COUNTS[key] = found
    return _COUNTS[key]


def holdings(db) -> pd.DataFrame:
    """Rows per kind of data in ``db`` and the command that adds each (one row per source)."""
    found = counts(db)
    rows = [(s.label, found[name], s.command) for name, s in SOURCES.items()]
    return pd.DataFrame(rows, columns=["data", "rows", "added by"], index=list(SOURCES))


def has(db, *sources: str) -> bool:
    """True when ``db`` holds rows of every one of ``sources`` (keys of :data:`SOURCES`)."""
    found = counts(db)
    return all(found[name] > 0 for name in sources)


def missing_note(what: str, sources: list[str], any_of: bool = False) -> str:
    """The note shown in place of ``what`` when ``sources`` are absent (markdown).

    ``any_of``: any one of the sources would do (the note says "or" instead of "and").
    """
    joint = " or " if any_of else " and "
    labels = joint.join(SOURCES[s].label for s in sources)
    commands = joint.join(dict.fromkeys(f"`{SOURCES[s].command}`" for s in sources))
    verb = "adds" if any_of or len(set(SOURCES[s].command for s in sources)) == 1 else "add"
    return f"**{NOTE_PREFIX} {labels}.** {what} needs them: {commands} {verb} them."


def note(what: str, *sources: str, any_of: bool = False) -> None:
    """Display the missing note for ``what`` (a notebook's empty state)."""
    display(Markdown(missing_note(what, list(sources), any_of)))


def require(db, *sources: str, what: str = "This section") -> bool:
    """True when ``db`` holds every source; else display the missing note and return False."""
    found = counts(db)
    absent = [s for s in sources if found[s] == 0]
    if absent:
        note(what, *absent)
    return not absent
