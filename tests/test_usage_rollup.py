"""The usage roll-up (issue 12): `brainlab usage` read from cc_usage_rollup equals the views.

cc_usage_rollup is rewritten by each `ingest claude` that changed rows or prices; each test
compares every usage view under every filter, read through the roll-up and through the
views over all request lines (SPEC §7 deduplication), after cold, incremental, rewriting and
removing runs, including a call whose last line moves to another day.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import shutil

import pytest
from claude_factory import assistant, usage, write
from conftest import CORPUS

from brainlab.metrics.usage import VIEWS, usage_sql, usage_table
from brainlab.store import open_writer, reader, usage_rollup
from brainlab.transcripts.ingest import ingest_claude


def _same(a: list[tuple], b: list[tuple]) -> bool:
    """Rows equal; costs (sums of doubles, summed in another order) to 1e-9 relative."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        for u, v in zip(x, y, strict=True):
            if isinstance(u, float) and isinstance(v, float):
                if not math.isclose(u, v, rel_tol=1e-9, abs_tol=1e-12):
                    return False
            elif u != v:
                return False
    return True


def _rollup_rows(con) -> list[tuple]:
    return sorted(con.execute("SELECT * FROM cc_usage_rollup").fetchall(), key=repr)


def _filters(con):
    """Every usage view x filter the checks cover: two projects and none, a middle day as
    ``since`` and ``until`` or none, a limit or none."""
    projects = [None, *(p for (p,) in con.execute(
        "SELECT DISTINCT project FROM cc_requests WHERE project IS NOT NULL ORDER BY 1"
        " LIMIT 2").fetchall())]
    first, last = con.execute("SELECT min(CAST(ts AS DATE)), max(CAST(ts AS DATE))"
                              " FROM cc_requests").fetchone()
    middle = first + (last - first) / 2 if first else None
    return itertools.product(VIEWS, projects, [None, middle], [None, middle], [None, 2])


def assert_rollup_matches_views(con, queries: bool = False) -> int:
    """Every usage view x filter: the roll-up's answer equals the views'; return the checks.

    Each view's roll-up SQL is its views' SQL with cc_usage_rollup read for usage_calls (the
    macro usage_by sums either: checked for every view x filter), so when the stored roll-up
    holds the view cc_usage_groups' rows (checked: the same rows, costs to 1e-9) every
    answer is the same.
    Issue 28 item 1: running both queries of every view x filter planned ~100 queries (1.2
    CPU-s) per call, after each step of the incremental tests; ``queries=True`` still runs
    them all (the corpus store's test), against one snapshot of the view usage_calls taken
    now (a temporary table: DuckDB plans the views under it in ~45 ms). A view whose SQL is
    the same text both ways (tools: it reads cc_usage_tools whatever ``rollup`` says) is not
    run twice to compare a query with itself.
    """
    assert usage_rollup.is_current(con)
    groups = sorted(con.execute("SELECT * FROM cc_usage_groups").fetchall(), key=repr)
    assert _same(_rollup_rows(con), groups)
    if queries:
        con.execute("CREATE OR REPLACE TEMP TABLE usage_calls_now AS"
                    " SELECT * FROM usage_calls")
    checks = 0
    for view, project, since, until, limit in _filters(con):
        sql, params = usage_sql(view, since, until, project, limit)
        rolled_sql, rolled_params = usage_sql(view, since, until, project, limit, rollup=True)
        assert rolled_params == params
        assert rolled_sql == re.sub(r"\busage_calls\b", "cc_usage_rollup", sql), rolled_sql
        checks += 1
        if (sql, params) == (rolled_sql, rolled_params) or not queries:
            continue  # tools: one query both ways
        assert re.search(r"\busage_calls\b", sql), sql
        views = con.execute(re.sub(r"\busage_calls\b", "temp.usage_calls_now", sql),
                            params).fetchall()
        rolled = con.execute(rolled_sql, rolled_params).fetchall()
        key = repr
        assert _same(sorted(views, key=key), sorted(rolled, key=key)), (
            view, project, since, until, limit)
    if queries:
        con.execute("DROP TABLE temp.usage_calls_now")
    return checks


def test_corpus_rollup_equals_views(corpus_store):
    with reader(corpus_store) as con:
        assert con.execute("SELECT count(*) FROM cc_usage_rollup").fetchone()[0] > 0
        assert assert_rollup_matches_views(con, queries=True) == len(VIEWS) * 3 * 2 * 2 * 2


S1, S2 = "sess-roll-1", "sess-roll-2"


def _line(session, ts, msg, out, cwd="/home/u/projets/alpha", model="claude-opus-4-5-20251101"):
    return assistant(session, ts, msg, "r" + msg, usage(1, out, 10, 100), model=model, cwd=cwd)


def test_incremental_runs_refresh_the_touched_days(tmp_path):
    root = tmp_path / "projects"
    one = write(root / "p" / f"{S1}.jsonl", [
        _line(S1, "2026-04-01T10:00:00.000Z", "m1", 5),
        _line(S1, "2026-04-02T10:00:00.000Z", "m2", 7, cwd="/home/u/projets/beta")])
    two = write(root / "q" / f"{S2}.jsonl", [
        _line(S2, "2026-04-03T10:00:00.000Z", "m3", 9, model="glm-4.6")])
    con = open_writer(tmp_path / "b.duckdb")
    ingest_claude(con, root, workers=1)
    assert_rollup_matches_views(con)
    days = {d for (d,) in con.execute("SELECT DISTINCT day FROM cc_usage_rollup").fetchall()}
    assert len(days) == 3

    # m1's last line is written a day later in another file: the call moves from day 1 to 4
    write(root / "q" / "other.jsonl", [_line(S2, "2026-04-04T09:00:00.000Z", "m1", 50)])
    with open(one, "a") as handle:  # and a grown tail with a line without timestamp
        handle.write(json.dumps(_line(S1, None, "m4", 3)) + "\n")
    ingest_claude(con, root, workers=1)
    assert_rollup_matches_views(con)
    assert con.execute("SELECT sum(requests) FROM cc_usage_rollup WHERE day = '2026-04-01'"
                       ).fetchone()[0] is None

    # the later file is removed: kept until pruned (issue 24); pruned, the call goes back
    (root / "q" / "other.jsonl").unlink()
    ingest_claude(con, root, workers=1)
    assert_rollup_matches_views(con)
    assert con.execute("SELECT sum(requests) FROM cc_usage_rollup WHERE day = '2026-04-01'"
                       ).fetchone()[0] is None
    ingest_claude(con, root, workers=1, prune=True)
    assert_rollup_matches_views(con)
    assert con.execute("SELECT sum(requests) FROM cc_usage_rollup WHERE day = '2026-04-01'"
                       ).fetchone()[0] == 1

    # a rewritten file (read again from the start) with other days
    write(two, [_line(S2, "2026-05-01T10:00:00.000Z", "m9", 1)])
    ingest_claude(con, root, workers=1)
    assert_rollup_matches_views(con)
    assert not con.execute("SELECT count(*) FROM cc_usage_rollup WHERE day = '2026-04-03'"
                           ).fetchone()[0]

    # new prices: every cost changes, so the whole roll-up is rewritten
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."glm-4.6"]\ninput = 1.0\noutput = 2.0\ncache_write_5m = 1.0\n'
                      'cache_read = 0.1\n')
    write(two, [_line(S2, "2026-05-01T10:00:00.000Z", "m9", 1, model="glm-4.6")])
    ingest_claude(con, root, prices=prices, workers=1)
    assert_rollup_matches_views(con)
    assert con.execute("SELECT sum(cost_usd) FROM cc_usage_rollup WHERE model = 'glm-4.6'"
                       ).fetchone()[0] > 0
    con.close()


def test_stale_rollup_falls_back_to_the_views(tmp_path):
    root = tmp_path / "projects"
    write(root / "p" / f"{S1}.jsonl", [_line(S1, "2026-04-01T10:00:00.000Z", "m1", 5)])
    db = tmp_path / "b.duckdb"
    con = open_writer(db)
    ingest_claude(con, root, workers=1)
    # a line written by other means (an interrupted run, a tool): the roll-up no longer counts
    con.execute("INSERT INTO cc_request_lines (session_id, message_id, request_id, model, ts,"
                " input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens,"
                " source_file, line) VALUES (?, 'mx', 'rmx', 'claude-opus-4-5-20251101',"
                " '2026-04-09 10:00:00', 1, 2, 3, 4, 'elsewhere.jsonl', 1)", [S1])
    assert not usage_rollup.is_current(con)
    con.close()
    days = [str(row[0]) for row in usage_table(db, "daily").rows]
    assert days == ["2026-04-01", "2026-04-09"]


@pytest.mark.parametrize("copies", [2])
def test_a_second_copy_of_the_corpus_adds_its_days_once(tmp_path, copies):
    """Files copied under another name repeat every call: SPEC §7 counts each call once."""
    root = tmp_path / "projects"
    shutil.copytree(CORPUS, root / "a")
    con = open_writer(tmp_path / "b.duckdb")
    ingest_claude(con, root, workers=1)
    before = con.execute("SELECT sum(requests) FROM cc_usage_rollup").fetchone()[0]
    shutil.copytree(CORPUS, root / "b")
    ingest_claude(con, root, workers=1)
    assert_rollup_matches_views(con)
    assert con.execute("SELECT sum(requests) FROM cc_usage_rollup").fetchone()[0] == before
    con.close()


S3, S4 = "sess-roll-3", "sess-roll-4"


def test_incremental_refresh_equals_a_full_rebuild(tmp_path):
    """New calls, duplicates of stored calls in another session (later and earlier), new days.

    SPEC §7: a call's lines share (message.id, requestId) across files; the larger copy is
    kept, and the call belongs to the session of its earliest copy (issue 45 rules 2-3): a
    later, larger duplicate in another session gives its tokens and time but leaves the call
    in its session; an earlier one moves it.
    """
    root = tmp_path / "projects"
    one = write(root / "p" / f"{S1}.jsonl", [
        _line(S1, "2026-04-01T10:00:00.000Z", "m1", 5),
        _line(S1, "2026-04-02T10:00:00.000Z", "m2", 7, cwd="/home/u/projets/beta")])
    write(root / "q" / f"{S2}.jsonl", [
        _line(S2, "2026-04-03T10:00:00.000Z", "m3", 9, model="glm-4.6"),
        _line(S2, "2026-04-05T10:00:00.000Z", "m5", 11)])
    con = open_writer(tmp_path / "b.duckdb")
    ingest_claude(con, root, workers=1)
    assert_rollup_matches_views(con)

    write(root / "r" / f"{S3}.jsonl", [  # another session and file
        _line(S3, "2026-04-06T09:00:00.000Z", "m1", 50),  # later, larger: S1's, new day
        _line(S3, "2026-04-02T09:00:00.000Z", "m3", 70, model="glm-4.6"),  # earlier: moves
        _line(S3, "2026-04-07T09:00:00.000Z", "m6", 4)])  # a new call on a new day
    with open(one, "a") as handle:  # a grown tail: a new call on a day S1 already has
        handle.write(json.dumps(_line(S1, "2026-04-02T11:00:00.000Z", "m7", 2)) + "\n")
    ingest_claude(con, root, workers=1)
    assert_rollup_matches_views(con)
    incremental = _rollup_rows(con)
    usage_rollup.refresh(con)  # the full rebuild
    assert _same(incremental, _rollup_rows(con))
    moved = con.execute("SELECT session_id, day, requests, output_tokens FROM cc_usage_rollup"
                        " WHERE session_id = ? ORDER BY day", [S3]).fetchall()
    assert [(str(d), n, out) for _s, d, n, out in moved] == [("2026-04-02", 1, 70),
                                                             ("2026-04-07", 1, 4)]
    assert con.execute("SELECT session_id, output_tokens FROM cc_requests WHERE message_id"
                       " = 'm1'").fetchall() == [(S1, 50)]
    con.close()


def test_incremental_refresh_rewrites_only_the_touched_groups(tmp_path):
    """A run recomputes the sessions its lines can change, not the others."""
    root = tmp_path / "projects"
    write(root / "p" / f"{S1}.jsonl", [_line(S1, "2026-04-01T10:00:00.000Z", "m1", 5)])
    two = write(root / "q" / f"{S2}.jsonl", [_line(S2, "2026-04-03T10:00:00.000Z", "m3", 9)])
    con = open_writer(tmp_path / "b.duckdb")
    ingest_claude(con, root, workers=1)
    # a mark no refresh would write: it stays only where the groups were not recomputed
    con.execute("UPDATE cc_usage_rollup SET requests = 999 WHERE session_id = ?", [S1])
    with open(two, "a") as handle:
        handle.write(json.dumps(_line(S2, "2026-04-03T11:00:00.000Z", "m4", 3)) + "\n")
    write(root / "r" / f"{S4}.jsonl", [_line(S4, "2026-04-03T12:00:00.000Z", "m8", 1)])
    ingest_claude(con, root, workers=1)
    rows = dict(con.execute("SELECT session_id, CAST(sum(requests) AS INT) FROM cc_usage_rollup"
                            " GROUP BY session_id").fetchall())
    assert rows == {S1: 999, S2: 2, S4: 1}
    con.close()


_DIFFER = ("SELECT count(*) FROM (SELECT * FROM cc_usage_rollup"
           " EXCEPT ALL SELECT * FROM cc_usage_groups)")


def test_corpus_rollup_equals_groups_row_for_row(corpus_store):
    """The stored roll-up is the view's rows exactly, costs to the last bit (not isclose).

    The view's DOUBLE cost sums once depended on the order DuckDB's threads added the calls
    in, so 40-50 of the corpus's 162 groups differed in the last bit from the stored copy.
    """
    with reader(corpus_store) as con:
        assert con.execute("SELECT count(*) FROM cc_usage_rollup").fetchone()[0] == (
            con.execute("SELECT count(*) FROM cc_usage_groups").fetchone()[0])
        assert [con.execute(_DIFFER).fetchone()[0] for _ in range(3)] == [0, 0, 0]


def test_costs_are_summed_whatever_the_order(tmp_path):
    """A bucket whose calls cost from 1e-5 to 1e4 dollars: the sum is exact, every time."""
    root = tmp_path / "projects"
    for s in range(4):
        write(root / "p" / f"s{s}.jsonl", [
            assistant(f"s{s}", f"2026-04-01T10:{i % 15:02d}:{i % 60:02d}.{i % 1000:03d}Z",
                      f"m{s}-{i}", f"r{s}-{i}",
                      usage(1, 10**9 if i % 500 == 0 else 1 + i % 7, 0, 0))
            for i in range(2000)])
    con = open_writer(tmp_path / "b.duckdb")
    try:
        ingest_claude(con, root, workers=1)
        assert con.execute("SELECT count(*) FROM cc_usage_rollup").fetchone()[0] == 4
        assert [con.execute(_DIFFER).fetchone()[0] for _ in range(3)] == [0, 0, 0]
    finally:
        con.close()
