"""The Parquet lake without Spark: export (idempotent), attach (views over the lake), filters.

Real DuckDB files and real Parquet files; the store being compared is a local ingest of the
real corpus (fixture ``corpus_store``). The Spark path is in test_spark.py.
"""

from __future__ import annotations

import ast
import hashlib
import io
import shutil
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from brainlab.cli import main
from brainlab.lake import attach_lake, export_store, layout
from brainlab.store import query

PACKAGE = Path(__file__).resolve().parents[1] / "brainlab"
USAGE = ("usage_daily", "usage_weekly", "usage_sessions", "usage_models")


def lake_digest(lake: Path) -> dict[str, str]:
    """Every Parquet file of the lake (relative path) -> hash of its bytes."""
    return {str(p.relative_to(lake)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(lake.rglob("*.parquet"))}


def frame(db: Path, relation: str) -> pd.DataFrame:
    return query(db, f"SELECT * FROM {relation} ORDER BY ALL").reset_index(drop=True)


def assert_same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Equal frames; float sums may differ in the last bits (summation order)."""
    pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-9)


@pytest.fixture(scope="module")
def exported(corpus_store, tmp_path_factory):
    lake = tmp_path_factory.mktemp("lake") / "lake"
    summary = export_store(corpus_store, lake, user="alice", machine="laptop")
    return lake, summary


def test_export_writes_the_documented_layout(exported):
    lake, summary = exported
    assert summary.rows["cc_request_lines"] > 1000
    requests = list((lake / "cc_request_lines").rglob("*.parquet"))
    assert [p.relative_to(lake).parts[:3] for p in requests] == [
        ("cc_request_lines", "user=alice", "machine=laptop")]
    errors = list((lake / "ingest_errors").rglob("*.parquet"))
    assert {p.relative_to(lake).parts[3] for p in errors} == {"source=claude"}
    assert list((lake / "cc_prices").glob("*.parquet"))  # team-wide, not partitioned


def own_copy(exported, tmp_path):
    """A copy of the module's lake for a test that writes to it: the other tests read the
    module's lake as the corpus store's export alone, whatever order they run in."""
    return Path(shutil.copytree(exported[0], tmp_path / "lake"))


def test_export_is_idempotent_and_replaces_its_partition(exported, corpus_store, tmp_path):
    lake = own_copy(exported, tmp_path)
    before = lake_digest(lake)
    export_store(corpus_store, lake, user="alice", machine="laptop")
    assert lake_digest(lake) == before
    # a second machine adds its own partition and leaves alice/laptop's files untouched
    export_store(corpus_store, lake, user="alice", machine="desktop")
    after = lake_digest(lake)
    assert {k: v for k, v in after.items() if "machine=desktop" not in k} == before
    assert any("machine=desktop" in k for k in after)
    # an export of an emptied store removes that partition's rows
    empty = tmp_path / "empty.duckdb"
    from brainlab.store import open_writer
    open_writer(empty).close()
    export_store(empty, lake, user="alice", machine="desktop")
    assert lake_digest(lake) == before


def test_attach_answers_like_the_store(exported, corpus_store, tmp_path):
    lake, _ = exported
    db = tmp_path / "attached.duckdb"
    summary = attach_lake(lake, db)
    assert "cc_request_lines" in summary.views and "agents" in summary.empty
    for view in USAGE:
        assert_same(frame(db, view), frame(corpus_store, view))
    for table in ("cc_request_lines", "cc_tool_call_lines", "cc_spans", "ingest_errors"):
        assert_same(frame(db, table), frame(corpus_store, table))
    kinds = dict(query(db, "SELECT table_name, table_type FROM information_schema.tables"
                           " WHERE table_name IN ('cc_request_lines', 'agents')").values)
    assert kinds == {"cc_request_lines": "VIEW", "agents": "BASE TABLE"}



def test_attach_runs_sealed_so_a_store_view_reads_nothing_but_the_lake(
        exported, tmp_path, monkeypatch):
    """Issue 46 item 4's seal, for `attach` too: its writer runs the store's views (the
    measures over the attached lines, ``INSERT ... BY NAME SELECT * FROM cc_measured``) with
    external access on, so a view that reads a local file (a tampered cached empty store,
    which every new store copies) copied the file into the attached store. Sealed, the lake
    is the one folder it reads: the attach stops and the file is read nowhere."""
    import shutil

    import duckdb

    from brainlab.common.errors import StoreError
    from brainlab.common.paths import CACHE_ENV
    from brainlab.store.schema import template_key
    from brainlab.store.template import template_path

    lake, _ = exported
    secret = tmp_path / "local.txt"
    secret.write_text("top-secret-local-file-contents")
    template = template_path(template_key())
    assert template.is_file()
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    tampered = template_path(template_key())
    tampered.parent.mkdir()
    shutil.copyfile(template, tampered)
    con = duckdb.connect(str(tampered))
    con.execute(f"CREATE OR REPLACE VIEW cc_measured AS SELECT content AS transcript_session"
                f" FROM read_text('{secret}')")
    con.close()
    db = tmp_path / "attached.duckdb"
    with pytest.raises(StoreError, match="attach refused: a view of the empty store") as raised:
        attach_lake(lake, db)
    assert "top-secret" not in str(raised.value)
    for path in tmp_path.rglob("*"):
        if path.is_file() and path != secret and path.parent != tampered.parent:
            assert b"top-secret-local-file-contents" not in path.read_bytes(), path

def test_attach_filters_users(exported, corpus_store, tmp_path):
    lake = own_copy(exported, tmp_path)
    # bob's copy of the same store: the team total counts each call once (SPEC §7 dedup)
    export_store(corpus_store, lake, user="bob", machine="laptop")
    team, alice, nobody = (tmp_path / f"{n}.duckdb" for n in ("team", "alice", "nobody"))
    attach_lake(lake, team)
    attach_lake(lake, alice, users=("alice",), machines=("laptop",))
    attach_lake(lake, nobody, users=("carol",))
    lines = query(corpus_store, "SELECT count(*) AS n FROM cc_request_lines").n[0]
    assert query(team, "SELECT count(*) AS n FROM cc_request_lines").n[0] == 2 * lines
    assert query(alice, "SELECT count(*) AS n FROM cc_request_lines").n[0] == lines
    assert_same(frame(team, "usage_daily"), frame(corpus_store, "usage_daily"))
    assert query(nobody, "SELECT count(*) AS n FROM usage_daily").n[0] == 0


def test_cli_export_attach_usage(corpus_store, tmp_path):
    lake, db = tmp_path / "lake", tmp_path / "team.duckdb"
    runner = CliRunner()
    result = runner.invoke(main, ["export", "--db", str(corpus_store), "--lake", str(lake),
                                  "--user", "alice", "--machine", "m1"])
    assert result.exit_code == 0, result.output
    assert "user=alice machine=m1" in result.output
    result = runner.invoke(main, ["attach", "--lake", str(lake), "--db", str(db)])
    assert result.exit_code == 0, result.output
    ours = runner.invoke(main, ["usage", "daily", "--json", "--db", str(db)])
    theirs = runner.invoke(main, ["usage", "daily", "--json", "--db", str(corpus_store)])
    assert ours.exit_code == 0, ours.output
    assert_same(pd.read_json(io.StringIO(ours.output)), pd.read_json(io.StringIO(theirs.output)))


@pytest.mark.parametrize("args, message", [
    (["attach", "--lake", "{tmp}/nowhere", "--db", "{tmp}/x.duckdb"], "no lake at"),
    (["export", "--db", "{tmp}/missing.duckdb", "--lake", "{tmp}/lake"], "no database at"),
    (["export", "--db", "{tmp}/missing.duckdb", "--lake", "s3://bucket/lake"], "local or mounted"),
    (["export", "--db", "{tmp}/missing.duckdb", "--lake", "{tmp}/l", "--user", "a/b"],
     "cannot be a lake partition"),
])
def test_cli_errors_are_one_line(tmp_path, args, message):
    if "a/b" in args:
        from brainlab.store import open_writer
        open_writer(tmp_path / "missing.duckdb").close()
    result = CliRunner().invoke(main, [a.format(tmp=tmp_path) for a in args])
    assert result.exit_code == 1
    assert result.output.startswith("Error: ") and message in result.output
    assert "Traceback" not in result.output


def test_layout_partitions_and_uris():
    assert layout.partitions("cc_request_lines") == ("user", "machine")
    assert layout.partitions("ingest_errors") == ("user", "machine", "source")
    assert layout.partitions("cc_prices") == ()
    assert layout.normalize("s3://bucket/lake/") == "s3://bucket/lake"
    assert layout.is_remote("s3a://b/l") and not layout.is_remote("/tmp/l")


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_spark_and_the_lake_stay_optional():
    """Nothing outside brainlab/lake imports pyspark or the lake (cli only inside commands);
    brainlab/lake imports pyspark only inside functions (DESIGN §2)."""
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        names = _imports(path)
        if not rel.startswith("lake/"):
            assert not any(n.split(".")[0] == "pyspark" for n in names), rel
            if not rel.startswith("cli/"):  # commands import it inside functions (below)
                assert not any(n.startswith("brainlab.lake") for n in names), rel
            continue
        top = ast.parse(path.read_text(encoding="utf-8")).body
        for node in top:
            if isinstance(node, ast.ImportFrom | ast.Import):
                mods = [node.module] if isinstance(node, ast.ImportFrom) else [
                    a.name for a in node.names]
                assert not any((m or "").startswith("pyspark") for m in mods), rel
    for module in sorted((PACKAGE / "cli").glob("*.py")):  # the lake is imported lazily
        cli = ast.parse(module.read_text(encoding="utf-8")).body
        top_level = {n.module for n in cli if isinstance(n, ast.ImportFrom)}
        assert not any((m or "").startswith("brainlab.lake") for m in top_level), module


def test_the_declared_pyspark_range_is_the_one_tested():
    """Issue 47 item 7: the spark extra declared pyspark>=3.5 while the roll-ups need 4
    (groupingSets, DataFrame.toArrow). The lower bound is declared once in pyproject.toml,
    environment.yml says the same, and the tests run on exactly that version (the Makefile's
    test extras pin it), so the oldest version a user may have is the one tested."""
    import importlib.metadata
    import re
    import tomllib

    root = PACKAGE.parent
    extra = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["spark"]
    (lowest,) = [re.fullmatch(r"pyspark>=([0-9.]+)", d).group(1) for d in extra]
    assert f"pyspark>={lowest} " in (root / "environment.yml").read_text()
    assert "pyspark==$(PYSPARK_LOWEST)" in (root / "Makefile").read_text()
    pytest.importorskip("pyspark")
    assert importlib.metadata.version("pyspark") == lowest
    from pyspark.sql import DataFrame

    assert hasattr(DataFrame, "groupingSets") and hasattr(DataFrame, "toArrow")


def test_a_vanished_transcript_keeps_its_rows_through_export_and_attach(tmp_path):
    """Issue 24's rule at team scale (27.3): a transcript Claude Code deleted keeps its rows in
    the store, so `export` writes them to the lake and `attach` shows them; the attached
    usage equals the store's. Real CLI commands on two real corpus transcripts."""
    import shutil

    from tests.conftest import CORPUS

    projects = tmp_path / "claude" / "projects"
    for name in ("-Users-paul-src-entireio-cli", "-home-moxa-sda2-home-moxa-WORK-ci-project"):
        shutil.copytree(CORPUS / "projects" / name, projects / name)
    gone = next((projects / "-home-moxa-sda2-home-moxa-WORK-ci-project").glob("*.jsonl"))
    store, lake, db = tmp_path / "ada.duckdb", tmp_path / "lake", tmp_path / "team.duckdb"
    runner = CliRunner()

    def run(*args):
        result = runner.invoke(main, list(args))
        assert result.exit_code == 0, result.output
        return result.output

    run("ingest", "claude", str(tmp_path / "claude"), "--db", str(store))
    lines = f"SELECT count(*) AS n FROM cc_request_lines WHERE source_file = '{gone}'"
    before = query(store, lines).n[0]
    assert before > 0
    gone.unlink()
    assert "1 file(s) gone from disk, their rows kept" in run(
        "ingest", "claude", str(tmp_path / "claude"), "--db", str(store))
    run("export", "--db", str(store), "--lake", str(lake), "--user", "ada", "--machine", "box")
    run("attach", "--lake", str(lake), "--db", str(db), "--user", "ada")
    assert query(db, lines).n[0] == before
    gone_at = f"SELECT gone_at IS NOT NULL AS g FROM cc_files WHERE source_file = '{gone}'"
    assert bool(query(db, gone_at).g[0])
    for view in ("usage_daily", "usage_sessions", "cc_session_measures"):
        assert_same(frame(db, view), frame(store, view))
