"""A pooled transcript ingest stores what a one-worker run stores, whatever the task order.

The real corpus (tests/conftest.py ``CORPUS``) ingested by 2 workers, in several task
orders and with Arrow tables as in a cold run of a large tree, must equal the one-worker
store (``corpus_store``), error rows and derived tables included (issue 12); and a run
large enough to send Arrow tables works in a fresh process on an existing store.
"""

import subprocess
import sys

import duckdb
import pytest
from claude_factory import assistant, usage, write
from conftest import CORPUS
from test_claude_ingest import build_tree

from brainlab.store import open_writer
from brainlab.transcripts import pool as claude_pool
from brainlab.transcripts.ingest import ingest_claude
from brainlab.transcripts.writer import TABLES

DERIVED = ("cc_usage_rollup", "cc_session_measures")


def dump(con) -> dict[str, list]:
    """Every transcript table, error rows, file offsets and derived table, rows sorted."""
    out = {}
    for table in (*TABLES, "ingest_errors", "cc_files", "ingest_files", *DERIVED):
        select = ("SELECT * REPLACE (round(cost_usd, 9) AS cost_usd, round(reported_cost_usd, 9)"
                  " AS reported_cost_usd, round(auto_cost_usd, 9) AS auto_cost_usd)"
                  if table == "cc_usage_rollup" else "SELECT *")  # float sums: any order
        out[table] = sorted(con.execute(f'{select} FROM "{table}"').fetchall(), key=repr)
    return out


@pytest.mark.parametrize("order", ["as planned", "reversed"])
def test_two_workers_store_what_one_stores_whatever_the_task_order(
        tmp_path, monkeypatch, corpus_store, order):
    """Many small tasks, Arrow as in a cold run of a large tree, results taken in the order
    they finish: same rows, errors, offsets, roll-up and measures as the one-worker store."""
    monkeypatch.setattr(claude_pool, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(claude_pool, "ARROW_MIN_BYTES", 0)
    monkeypatch.setattr(claude_pool, "GROUP_BYTES", 1_000_000)  # ~30 tasks, not 2
    if order == "reversed":  # largest-first or any other order must not matter
        planned = claude_pool.groups
        monkeypatch.setattr(claude_pool, "groups", lambda jobs: planned(jobs)[::-1])
    con = open_writer(tmp_path / "pool.duckdb")
    try:
        summary = ingest_claude(con, CORPUS, workers=2)
        pooled = dump(con)
    finally:
        con.close()
    assert summary.read > 8
    with duckdb.connect(str(corpus_store), read_only=True) as one:
        single = dump(one)
    assert single["cc_request_lines"] and single["cc_session_measures"]
    for table, rows in single.items():
        assert pooled[table] == rows, table


ARROW_RUN = """
import sys
from brainlab.transcripts import pool as claude_pool
claude_pool.PARALLEL_MIN_BYTES = 0  # a pool sending Arrow tables, as for >= 64 MB
claude_pool.ARROW_MIN_BYTES = 0
from brainlab.cli import main
main(["ingest", "claude", sys.argv[1], "--db", sys.argv[2]])
"""


def test_a_large_run_into_an_existing_store_loads_arrow_in_a_fresh_process(tmp_path):
    """An existing store is opened with DuckDB's engine module alone; Arrow inserts need the
    duckdb package, so the writer imports it (before, a run with >= 64 MB to read into an
    existing store died: 'the duckdb package did not set up duckdb._sources')."""
    root = build_tree(tmp_path / "cfg")
    write(root / "projects" / "-home-u-projets-gamma" / "s5.jsonl", [
        assistant("s5", "2026-03-04T08:00:00.000Z", "m1", "r1", usage(1, 2, 3, 4))])
    db = tmp_path / "existing.duckdb"
    open_writer(db).close()
    run = subprocess.run([sys.executable, "-c", ARROW_RUN, str(root), str(db)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM cc_files").fetchone()[0] == 5
        assert con.execute("SELECT count(*) FROM cc_request_lines").fetchone()[0] > 0
