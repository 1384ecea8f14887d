"""Incremental reads: new tails only, unfinished last lines picked up later, exact global dedup."""

import json

import duckdb
from claude_factory import assistant, usage, write

from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude, ingest_claude_db
from brainlab.transcripts.plan import HEAD_BYTES

S = "sess-incr"
TS = "2026-04-01T10:{:02d}:00.000Z"


def line(i, msg, out, req="r"):
    return json.dumps(assistant(S, TS.format(i), msg, req + msg, usage(1, out, 0, 100)),
                      separators=(",", ":")).encode() + b"\n"


def totals(con):
    return con.execute("SELECT input_tokens, output_tokens, cache_read_tokens, requests"
                       " FROM usage_daily").fetchall()


def test_tail_reads_truncated_line_and_cross_run_dedup(tmp_path):
    path = tmp_path / "projects" / "p" / f"{S}.jsonl"
    path.parent.mkdir(parents=True)
    first = line(0, "m1", 1) + line(1, "m2", 5)
    path.write_bytes(first)
    con = open_writer(tmp_path / "b.duckdb")
    s1 = ingest_claude(con, tmp_path)
    assert (s1.read, s1.bytes_read) == (1, len(first))
    assert totals(con) == [(2, 6, 200, 2)]

    # the writer appends m1's final line (output 40) and is cut in the middle of m3's line
    final_m1 = line(2, "m1", 40)
    m3 = line(3, "m3", 7)
    with open(path, "ab") as handle:
        handle.write(final_m1 + m3[:25])
    s2 = ingest_claude(con, tmp_path)
    assert s2.bytes_read == len(final_m1) and s2.pending_files == 1
    # m1 counted once, with its final output_tokens from the later run: 40 + 5
    assert totals(con) == [(2, 45, 200, 2)]
    assert con.execute("SELECT pending_bytes, lines_done FROM cc_files").fetchone() == (25, 3)

    with open(path, "ab") as handle:
        handle.write(m3[25:])
    s3 = ingest_claude(con, tmp_path)
    assert s3.bytes_read == len(m3)
    assert totals(con) == [(3, 52, 300, 3)]
    assert con.execute("SELECT max(line) FROM cc_request_lines").fetchone() == (4,)
    assert ingest_claude(con, tmp_path).read == 0
    assert con.execute("SELECT count(*) FROM ingest_errors").fetchone() == (0,)

    # a cold ingest of the final file gives the same rows
    cold = open_writer(tmp_path / "cold.duckdb")
    ingest_claude(cold, tmp_path)
    assert totals(cold) == totals(con)


def test_rewritten_file_is_reread_and_removed_file_kept_until_pruned(tmp_path):
    path = write(tmp_path / "projects" / "p" / f"{S}.jsonl",
                 [assistant(S, TS.format(0), "m1", "r1", usage(1, 10))])
    other = write(tmp_path / "projects" / "p" / "other.jsonl",
                  [assistant("other", TS.format(1), "m9", "r9", usage(1000, 0))])
    con = open_writer(tmp_path / "b.duckdb")
    ingest_claude(con, tmp_path)
    assert totals(con) == [(1001, 10, 0, 2)]
    write(path, [assistant(S, TS.format(0), "mX", "rX", usage(2, 20))])  # same size, new head
    other.unlink()
    summary = ingest_claude(con, tmp_path)
    assert (summary.reset, summary.removed, summary.gone, summary.gone_kept) == (1, 0, 1, 1)
    assert totals(con) == [(1002, 20, 0, 2)]  # the vanished file's call is kept (issue 24)
    summary = ingest_claude(con, tmp_path)  # noted once: nothing new
    assert (summary.read, summary.gone, summary.gone_kept) == (0, 0, 1)
    summary = ingest_claude(con, tmp_path, prune=True)
    assert (summary.removed, summary.removed_rows, summary.gone_kept) == (1, 2, 0)
    assert totals(con) == [(2, 20, 0, 1)]


def test_survey_while_the_store_opens_plans_as_before(tmp_path):
    """ingest_claude_db reads sizes and first-4-KB hashes in a thread while DuckDB opens the
    store (issue 12): a same-size rewrite of a large file, a rewrite of a small one (its
    hash covers fewer bytes), a grown file and a removed one are planned as ingest_claude
    plans them on an open store."""
    big = [assistant(S, TS.format(i), f"m{i}", f"r{i}", usage(1, i)) for i in range(40)]
    cfg = {name: tmp_path / name / "projects" / "p" for name in ("survey", "plain")}
    for folder in cfg.values():
        write(folder / "big.jsonl", big)
        write(folder / "small.jsonl", [assistant("sm", TS.format(1), "s1", "q1", usage(3, 3))])
        write(folder / "grows.jsonl", [assistant("g", TS.format(2), "g1", "h1", usage(5, 5))])
        write(folder / "gone.jsonl", [assistant("x", TS.format(3), "x1", "y1", usage(7, 7))])
    assert (cfg["survey"] / "big.jsonl").stat().st_size > HEAD_BYTES
    dbs = {name: tmp_path / f"{name}.duckdb" for name in cfg}
    for name in cfg:
        ingest_claude_db(dbs[name], tmp_path / name)
    for folder in cfg.values():
        data = (folder / "big.jsonl").read_bytes()  # same size, first message id changed
        (folder / "big.jsonl").write_bytes(data.replace(b'"m0"', b'"mZ"', 1))
        write(folder / "small.jsonl", [assistant("sm", TS.format(1), "s2", "q1", usage(3, 3))])
        with open(folder / "grows.jsonl", "ab") as handle:
            handle.write(line(4, "g2", 9))
        (folder / "gone.jsonl").unlink()
    surveyed = ingest_claude_db(dbs["survey"], tmp_path / "survey")
    con = open_writer(dbs["plain"])
    plain = ingest_claude(con, tmp_path / "plain")
    fields = ("read", "reset", "gone", "unchanged", "rows", "bytes_read")
    assert [getattr(surveyed, f) for f in fields] == [getattr(plain, f) for f in fields]
    assert (surveyed.read, surveyed.reset, surveyed.gone) == (3, 2, 1)
    with duckdb.connect(str(dbs["survey"])) as survey_con:
        assert totals(survey_con) == totals(con)
        ids = {r[0] for r in survey_con.execute(
            "SELECT message_id FROM cc_request_lines").fetchall()}
    assert {"mZ", "s2", "g2"} <= ids and not {"m0", "s1"} & ids


NOTHING_NEW = """
import json, sys
from brainlab.cli import main
try:
    main(["ingest", "claude", sys.argv[1], "--db", sys.argv[2]], standalone_mode=False)
finally:
    parser = [name for name in sys.modules if name.startswith(("msgspec", "orjson", "pyarrow"))
              or name in PARSER]
    print(json.dumps(parser))
"""
PARSER = ("brainlab.transcripts.tolerant", "brainlab.transcripts.fast",
          "brainlab.transcripts.build", "brainlab.transcripts.line",
          "brainlab.transcripts.values",
          "brainlab.transcripts.marks", "brainlab.transcripts.broker",
          "brainlab.sources.redact", "brainlab.sources.secret_rules",
          "brainlab.transcripts.scan", "brainlab.transcripts.pool",
          "brainlab.transcripts.writer",
          # the catalogue's check at open: its files' stat only (schema.catalog_files_key)
          "brainlab.rules.catalogue", "brainlab.spec.budget_rule",
          "brainlab.spec.vocabulary", "brainlab.spec.modes", "brainlab.spec.rules",
          "brainlab.spec.stops", "brainlab.spec.session_types",
          "importlib.resources", "zipfile")


def derived(con):
    """What a run derives: the roll-up (cost rounded: float sums), measures, prices, errors."""
    return [sorted(con.execute(sql).fetchall(), key=repr) for sql in (
        "SELECT * REPLACE (round(cost_usd, 9) AS cost_usd) FROM cc_usage_rollup",
        "SELECT * FROM cc_session_measures",  # the price table in force (issue 45: the
        "SELECT model, input_usd_mtok FROM cc_prices WHERE price_version"  # earlier kept)
        " = (SELECT max(price_version) FROM cc_prices)",
        "SELECT file, reason FROM ingest_errors")]


def test_run_with_nothing_new_imports_no_parser_and_keeps_the_store_current(tmp_path,
                                                                           monkeypatch):
    """A run that finds nothing to read (the usual ingest from a hook, issue 12) decides so
    before importing the parser's modules, yet still does what a full run does with an
    unchanged tree: a new price file prices the unpriced model's calls (issue 45: a price
    missing is filled, a given one kept), a stale roll-up and measures a
    rebuilt catalogue dropped are stored again: the store equals a cold ingest's."""
    import subprocess
    import sys

    root = tmp_path / "projects"
    write(root / "p" / f"{S}.jsonl", [
        assistant(S, TS.format(0), "m1", "r1", usage(1, 10)),
        assistant(S, TS.format(1), "m2", "r2", usage(3, 5), model="mystery-model-1")])
    db = tmp_path / "b.duckdb"
    ingest_claude_db(db, root)
    prices = tmp_path / "prices.toml"
    prices.write_text('[models.mystery-model-1]\ninput = 1.0\noutput = 2.0\n'
                      'cache_write_5m = 1.5\ncache_read = 0.1\n')

    def nothing_new():
        run = subprocess.run([sys.executable, "-c", NOTHING_NEW.replace(
            "PARSER", repr(PARSER)), str(root), str(db)], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        assert "0 read, 1 unchanged" in run.stdout
        assert json.loads(run.stdout.splitlines()[-1]) == [], run.stdout
        return run.stdout

    assert "no price for model(s): mystery-model-1" in nothing_new()
    monkeypatch.setenv("BRAINLAB_PRICES", str(prices))  # a new price: the roll-up repriced
    assert "no price" not in nothing_new()
    with duckdb.connect(str(db)) as con:  # as after a catalogue rebuild: derived rows gone
        con.execute("DELETE FROM brainlab_meta WHERE key = 'cc_usage_rollup'")
        con.execute("DELETE FROM cc_usage_rollup")
        con.execute("DELETE FROM cc_session_measures")
    nothing_new()
    cold = tmp_path / "cold.duckdb"
    ingest_claude_db(cold, root)
    with duckdb.connect(str(db)) as con, duckdb.connect(str(cold)) as cold_con:
        assert derived(con) == derived(cold_con)
        assert con.execute("SELECT count(*) FROM cc_usage_rollup WHERE cost_usd > 0"
                           ).fetchone()[0] == 2


def test_every_run_leaves_the_store_as_one_file(tmp_path):
    """Every ingest checkpoints at close: the store is one file a user may copy, move or
    restore (a WAL left beside it would be lost with a copy, or replayed by DuckDB into a
    restored backup it does not belong to). Incremental runs still equal a cold ingest, and
    a store deleted with a WAL left behind (a writer killed before its checkpoint) is
    created again as a cold ingest creates it."""
    from brainlab.store import connection

    path = write(tmp_path / "projects" / "p" / f"{S}.jsonl",
                 [assistant(S, TS.format(0), "m1", "r1", usage(1, 10))])
    db, wal = tmp_path / "b.duckdb", tmp_path / "b.duckdb.wal"
    ingest_claude_db(db, tmp_path / "projects")
    assert not wal.exists()  # a new store is checkpointed

    for i in (1, 2):
        with open(path, "ab") as handle:
            handle.write(line(i, f"m{i}", i))
        ingest_claude_db(db, tmp_path / "projects")
        assert not wal.exists()  # a small incremental run too
        cold = tmp_path / f"cold{i}.duckdb"
        ingest_claude_db(cold, tmp_path / "projects")
        with connection.reader(db) as con, connection.reader(cold) as cold_con:
            assert totals(con) == totals(cold_con)
            assert con.execute("SELECT count(*) FROM cc_usage_rollup").fetchone() == \
                cold_con.execute("SELECT count(*) FROM cc_usage_rollup").fetchone()
    ingest_claude_db(db, tmp_path / "projects")  # nothing new
    assert not wal.exists()

    con = connection.connect(connection.StoreConfig(path=db, read_only=False))  # a writer killed before its
    con.execute("PRAGMA disable_checkpoint_on_shutdown")  # checkpoint leaves its WAL
    con.execute("INSERT INTO brainlab_meta VALUES ('stale', 'from the deleted store')")
    con.close()
    assert wal.exists()
    db.unlink()  # the user deletes the store; its WAL stays behind
    summary = ingest_claude_db(db, tmp_path / "projects")
    assert summary.read == 1 and not wal.exists()
    with connection.reader(db) as con, connection.reader(tmp_path / "cold2.duckdb") as cold:
        for table in ("cc_request_lines", "cc_files", "cc_usage_rollup", "brainlab_meta"):
            query = f"SELECT * EXCLUDE (runs) FROM {table}" if table == "cc_files" else \
                f"SELECT * FROM {table}"
            assert sorted(con.execute(query).fetchall(), key=repr) == \
                sorted(cold.execute(query).fetchall(), key=repr), table


QUICK = """
import atexit, sys
atexit.register(lambda: print("interpreter teardown", flush=True))
sys.argv = ["brainlab", *sys.argv[1:]]
from brainlab.cli import run
run()
"""


def test_console_script_skips_teardown_after_ingest_claude_and_usage_only(tmp_path):
    """The console script (brainlab.cli:run) ends a successful `ingest claude` or `usage`
    view, whose store is closed, with os._exit once its output is flushed (teardown: 15-30
    ms, issues 12 and 40); an error or any other command exits as usual."""
    import subprocess
    import sys

    root = tmp_path / "projects"
    write(root / "p" / f"{S}.jsonl", [assistant(S, TS.format(0), "m1", "r1", usage(1, 10))])
    db = tmp_path / "b.duckdb"

    def brainlab(*args):
        return subprocess.run([sys.executable, "-c", QUICK, *args], capture_output=True,
                              text=True)

    for _ in range(2):  # a cold run, then one with nothing new
        done = brainlab("ingest", "claude", str(root), "--db", str(db), "--daily")
        assert done.returncode == 0, done.stderr
        assert "database: " in done.stdout and "2026-04-01" in done.stdout  # all flushed
        assert "interpreter teardown" not in done.stdout
    ingest_claude_db(tmp_path / "in-process.duckdb", root)
    with duckdb.connect(str(db), read_only=True) as con, \
            duckdb.connect(str(tmp_path / "in-process.duckdb"), read_only=True) as ref:
        assert totals(con) == totals(ref) != []  # closed cleanly: it opens, whole
    failed = brainlab("ingest", "claude", str(tmp_path / "missing"), "--db", str(db))
    assert failed.returncode == 1 and failed.stderr.startswith("Error: ")
    assert "interpreter teardown" in failed.stdout
    view = brainlab("usage", "daily", "--timezone", "UTC", "--db", str(db))
    assert view.returncode == 0 and "2026-04-01" in view.stdout and "total" in view.stdout
    assert "interpreter teardown" not in view.stdout
    other = brainlab("usage", "limits", "--db", str(db))
    assert other.returncode == 0 and "interpreter teardown" in other.stdout


def test_a_run_killed_before_its_measures_leaves_them_to_the_next_run(tmp_path, monkeypatch):
    """The hooks' drain worker is SIGKILLed at random (issue 46): one killed after its rows
    were committed but before cc_session_measures was refreshed left that session's measures
    stale for good (its file has nothing new for the next run). The interruption is injected
    at that point; the next run, with nothing new to read, measures the session again."""
    from brainlab.transcripts import ingest

    path = tmp_path / "projects" / "p" / f"{S}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(line(0, "m1", 1) + line(1, "m2", 5))
    con = open_writer(tmp_path / "b.duckdb")
    ingest_claude(con, tmp_path)
    with open(path, "ab") as handle:
        handle.write(line(30, "m3", 7))

    def killed(*_args, **_kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(ingest, "refresh_measures", killed)
        try:
            ingest_claude(con, tmp_path)
        except KeyboardInterrupt:
            pass
    measures = "SELECT transcript_session, duration_min FROM cc_session_measures"
    assert con.execute(measures).fetchall() == [(S, 1.0)]  # stale: the rows say 30 min
    assert ingest_claude(con, tmp_path).read == 0  # nothing new, measures made current
    cold = open_writer(tmp_path / "cold.duckdb")
    ingest_claude(cold, tmp_path)
    assert con.execute(measures).fetchall() == cold.execute(measures).fetchall() == [(S, 30.0)]
    assert con.execute("SELECT count(*) FROM brainlab_meta WHERE key = 'measures_pending'"
                       ).fetchone() == (0,)
    cold.close()
    con.close()
