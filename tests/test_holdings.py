"""The notebooks' holdings (brainlab.viz.holdings): counted once per store state (issue 44 speed).

Every notebook asks what the store holds before most sections; each asking opened the store
again. The counts are now memoized under the store's state (path, size, mtime of the file
and its WAL, ``store.connection.store_state``): asked again, no connection; after a write,
counted again.
"""

from __future__ import annotations

from brainlab.store import connection, open_writer
from brainlab.viz import holdings


def test_holdings_are_counted_once_per_store_state(demo, tmp_path, monkeypatch):
    opened = []
    real = connection.connect
    monkeypatch.setattr(connection, "connect", lambda *a, **k: opened.append(1) or real(*a, **k))
    first = holdings.holdings(demo["db"])
    assert first.loc["metabolism", "rows"] > 0 and first.loc["sprints", "rows"] > 0
    assert holdings.has(demo["db"], "metabolism", "transcripts")
    assert holdings.require(demo["db"], "circuits", what="x")
    assert len(opened) == 1  # three questions, one connection
    assert holdings.holdings(demo["db"]).equals(first)

    db = tmp_path / "brainlab.duckdb"
    open_writer(db).close()
    assert not holdings.has(db, "metabolism")
    before = len(opened)
    con = open_writer(db)  # a write: the store's state changes
    con.execute("INSERT INTO context_files BY NAME SELECT 'x.md' AS source_file, "
                "'use-brain' AS session_type, 'L1' AS layer")
    con.close()
    assert holdings.counts(db)["contexts"] == 1  # counted again, the new row seen
    assert len(opened) > before
