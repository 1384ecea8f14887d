"""The SQL model tree (issue 23 item 2): one model per file by layer, load order from reads.

brainlab/store/models/{raw,staging,marts,rules}/<name>.sql with <name>.yml beside it; the
order comes from what each file reads (store/graph.py), a cycle or an upward read (a marts
model reading a rules model...) fails; a rule is one .sql and one .yml carrying its
catalogue entry (store/rulebook.py); violations and the per-rule filters are rendered from
models/rules/_violations.sql.tmpl.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from brainlab.store import catalog, graph, rulebook, template
from brainlab.store.schema import SPEC_MACROS, apply, models, open_writer, schema_fingerprint

MODELS = graph.FOLDER


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_every_model_file_has_its_yml_naming_its_object():
    files = graph.model_files()
    documented = models()
    assert len(files) > 150
    for model in files:
        entry = documented.get(model.name)
        assert entry is not None, f"{model.path}: no {model.name}.yml beside it"
        assert entry["_layer"] == model.layer and entry.get("kind", "table") == model.kind, \
            model.path
    rendered = {r.view for r in rulebook.load_rules() if r.rows_view} | {"violations"}
    without_sql = set(documented) - {m.name for m in files}
    assert without_sql == rendered | set(SPEC_MACROS), \
        "a yml without its .sql (and not rendered by the template nor written from spec)"
    assert {p.parent.name for p in MODELS.glob("*/*")} == set(graph.LAYERS)
    assert not list(MODELS.glob("*.yml")) and not list(MODELS.glob("*.sql"))


def test_the_tree_loads_in_an_order_with_no_cycle_and_no_upward_read():
    models_ = graph.model_files()
    deps = graph.references(models_)
    assert graph.layer_errors(models_, deps) == []
    order = [m.name for m in graph.ordered()]
    seen = set()
    for name in order:
        assert deps[name] <= seen, f"{name} is created before {sorted(deps[name] - seen)}"
        seen.add(name)
    assert order.index("cc_request_dedup") < order.index("cc_requests") < order.index(
        "usage_daily")


def test_the_scan_finds_every_read_the_parser_finds():
    """The load order's identifier scan never misses a relation DuckDB's parser sees."""
    models_ = graph.model_files()
    scanned, parsed = graph.references(models_), graph.parsed_references(models_)
    missed = {name: sorted(parsed[name] - scanned[name]) for name in parsed
              if parsed[name] - scanned[name]}
    assert missed == {}
    assert parsed["cc_requests"] >= {"cc_request_dedup", "cc_model_prices"}
    assert "rule_rows_boot_close" in parsed and "rule_bot003_for" in parsed[
        "rule_rows_boot_close"]


def test_a_cycle_fails_and_names_it(tmp_path):
    write(tmp_path / "raw" / "t.sql", "CREATE TABLE IF NOT EXISTS t (a INT);\n")
    write(tmp_path / "marts" / "a.sql", "CREATE OR REPLACE VIEW a AS SELECT * FROM b;\n")
    write(tmp_path / "marts" / "b.sql", "CREATE OR REPLACE VIEW b AS SELECT * FROM a, t;\n")
    models_ = graph.model_files(tmp_path)
    with pytest.raises(ValueError, match=r"cycle: a -> b -> a"):
        graph.load_order(models_, graph.references(models_))


def test_a_model_in_the_wrong_layer_folder_fails(tmp_path):
    """A marts model reading a rules model; a staging view reading a marts one."""
    write(tmp_path / "raw" / "t.sql", "CREATE TABLE IF NOT EXISTS t (a INT);\n")
    write(tmp_path / "staging" / "s.sql", "CREATE OR REPLACE VIEW s AS SELECT * FROM m;\n")
    write(tmp_path / "marts" / "m.sql", "CREATE OR REPLACE VIEW m AS SELECT a FROM rule_x;\n")
    write(tmp_path / "rules" / "rule_x.sql", "CREATE OR REPLACE VIEW rule_x AS\n"
          "-- a comment naming m is no read\nSELECT a FROM t;\n")
    models_ = graph.model_files(tmp_path)
    deps = graph.references(models_)
    assert deps == {"t": set(), "s": {"m"}, "m": {"rule_x"}, "rule_x": {"t"}}
    assert graph.layer_errors(models_, deps) == [
        "marts/m reads rules/rule_x: move one of them", "staging/s reads marts/m: move one of them"]
    assert [m.name for m in graph.load_order(models_, deps)] == ["t", "rule_x", "m", "s"]


def test_a_file_must_create_the_object_it_is_named_after(tmp_path):
    write(tmp_path / "marts" / "a.sql", "CREATE OR REPLACE VIEW b AS SELECT 1;\n")
    with pytest.raises(ValueError, match="a.sql: its first statement must create `a`"):
        graph.model_files(tmp_path)


@pytest.mark.parametrize("where", ["views/15_claude.sql", "models/x.sql", "models/extra/x.sql"])
def test_sql_outside_the_model_tree_fails(tmp_path, where):
    """A topic file of the old layout (a branch's new view in store/views/) is not skipped."""
    write(tmp_path / "models" / "raw" / "t.sql", "CREATE TABLE IF NOT EXISTS t (a INT);\n")
    write(tmp_path / where, "CREATE OR REPLACE VIEW x AS SELECT 1;\n")
    with pytest.raises(ValueError, match="SQL outside the model tree"):
        graph.model_files(tmp_path / "models")


def test_the_scan_ignores_aliases_qualified_columns_ctes_and_named_arguments(tmp_path):
    write(tmp_path / "raw" / "t.sql", "CREATE TABLE IF NOT EXISTS t (a INT);\n")
    write(tmp_path / "raw" / "u.sql", "CREATE TABLE IF NOT EXISTS u (a INT);\n")
    write(tmp_path / "marts" / "f.sql", "CREATE OR REPLACE MACRO f(u := 1) AS TABLE SELECT u;\n")
    write(tmp_path / "marts" / "v.sql", "CREATE OR REPLACE VIEW v AS\nWITH u AS (SELECT 1 AS a)\n"
          "SELECT x.t, count(*) AS t, 'u' AS s FROM u AS x, f(u := 2);\n")
    models_ = graph.model_files(tmp_path)
    assert graph.references(models_)["v"] == {"f"}
    assert graph.parsed_references(models_, duckdb.connect())["v"] == {"f"}


def test_rules_come_from_the_rule_ymls():
    rules = rulebook.load_rules()
    assert len(rules) >= 36 and [r.id for r in rules] == sorted(r.id for r in rules)
    for rule in rules:
        own = MODELS / "rules" / f"{rule.view}.yml"
        assert own.is_file()
        assert (own.with_suffix(".sql").is_file()) != bool(rule.rows_view), rule.id
    assert {r.id for r in rules if r.rows_view == "rule_rows_boot_close"} >= {"BOT001", "CLO007"}
    sql = rulebook.render()
    assert "CREATE OR REPLACE VIEW rule_bot001 AS" in sql
    assert "WHERE rule IN ('BOT001', 'BOT002', 'BOT003'" in sql
    assert "SELECT 'SES001' AS rule, * FROM rule_ses001" in sql


@pytest.mark.parametrize("change, message", [
    (("severity: \"warning\"", "severity: \"fatal\""), "severity 'fatal' is not one of"),
    (("id: \"SES001\"", "id: \"SES01\""), "id 'SES01' is not three capitals and three digits"),
    (("id: \"SES001\"", "id: \"SES009\""), "the file of rule SES009 must be named rule_ses009.yml"),
    (("rows_view: null", "rows_view: \"rule_nowhere\""), "rows_view 'rule_nowhere' is not"),
    (("  checks:", "  unchecked:"), "missing checks"),
])
def test_a_bad_rule_entry_names_its_file(tmp_path, change, message):
    folder = tmp_path / "rules"
    shutil.copytree(MODELS / "rules", folder)
    path = folder / "rule_ses001.yml"
    text = path.read_text(encoding="utf-8")
    assert change[0] in text
    path.write_text(text.replace(change[0], change[1]), encoding="utf-8")
    with pytest.raises(ValueError, match=f"rule_ses001.yml: rule entry: {message}"):
        rulebook.load_rules.__wrapped__(folder)


def test_a_store_of_the_topic_file_layout_is_current_not_upgraded(tmp_path):
    """A store written before issue 23 item 2 carries the old fingerprint of the same
    tables: it is not upgraded (its files are not read again) when the tables are unchanged."""
    db = tmp_path / "old.duckdb"
    open_writer(db).close()
    con = duckdb.connect(str(db))
    (old, new), = catalog.SAME_TABLES.items()
    con.execute("UPDATE brainlab_meta SET value = ? WHERE key = 'schema'", [old])
    con.execute("UPDATE brainlab_meta SET value = 'older' WHERE key IN ('catalog',"
                " 'catalog_files')")
    assert apply(con) is (new != schema_fingerprint())
    assert con.execute("SELECT value FROM brainlab_meta WHERE key = 'schema'").fetchone() == (
        schema_fingerprint(),)
    con.close()


def test_adding_a_rule_is_one_sql_and_one_yml(tmp_path):
    """The worked example of docs/ARCHITECTURE.md: a copy of the package with one new rule
    file pair builds a store whose violations, catalogue and `brainlab check` carry it."""
    package = tmp_path / "pkg"
    shutil.copytree(Path(template.__file__).parents[1], package / "brainlab",
                    ignore=shutil.ignore_patterns("__pycache__"))
    rules = package / "brainlab" / "store" / "models" / "rules"
    write(rules / "rule_ses009.sql", """\
-- SPEC §2.2: a claim without a session type (an example rule).
CREATE OR REPLACE VIEW rule_ses009 AS
SELECT 'claim' AS subject_kind, sess_id AS subject, opened_at AS occurred_at,
       source_file AS file, NULL::BIGINT AS line, 'claim declares no session type' AS message,
       to_json({sess_id: sess_id}) AS evidence
FROM claims WHERE type IS NULL;
""")
    entry = (rules / "rule_ses001.yml").read_text(encoding="utf-8")
    write(rules / "rule_ses009.yml", entry.replace("rule_ses001", "rule_ses009").replace(
        '"SES001"', '"SES009"').replace('"unknown-session-type"', '"claim-without-type"'))
    store = tmp_path / "store.duckdb"
    code = ("import sys; from brainlab.store import open_writer; from brainlab.rules.catalogue "
            "import BY_ID; con = open_writer(sys.argv[1]); con.execute(\"INSERT INTO claims"
            " (source_file, sess_id) VALUES ('/b/claims/x.yml', 'x')\"); print(BY_ID['SES009']"
            ".name); print(con.execute(\"SELECT rule, rule_name, subject FROM violations WHERE"
            " rule = 'SES009'\").fetchall()); con.close()")
    done = subprocess.run([sys.executable, "-c", code, str(store)], capture_output=True,
                          text=True, env={"PYTHONPATH": str(package), "PATH": "/usr/bin:/bin",
                                          template.CACHE_ENV: str(tmp_path / "cache")},
                          cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["claim-without-type",
                                        "[('SES009', 'claim-without-type', 'x')]"]


def test_a_table_edit_changes_both_fingerprints_a_view_edit_the_catalog_only(tmp_path,
                                                                              monkeypatch):
    from brainlab.store import schema

    copy = tmp_path / "models"
    shutil.copytree(MODELS, copy)

    def fingerprints() -> tuple[str, str]:
        schema.catalog_fingerprint.cache_clear()
        try:
            return catalog.schema_fingerprint(), schema.catalog_fingerprint()
        finally:
            schema.catalog_fingerprint.cache_clear()

    monkeypatch.setattr(catalog, "FOLDER", copy)
    monkeypatch.setattr(schema, "FOLDER", copy)
    before = fingerprints()
    view = copy / "marts" / "sessions.sql"
    view.write_text(view.read_text(encoding="utf-8") + "-- edited\n", encoding="utf-8")
    after_view = fingerprints()
    assert after_view[0] == before[0] and after_view[1] != before[1]
    table = copy / "raw" / "claims.sql"
    table.write_text(table.read_text(encoding="utf-8").replace(
        "key_style     VARCHAR", "key_style     VARCHAR,\n    extra VARCHAR"), encoding="utf-8")
    after_table = fingerprints()
    assert after_table[0] != before[0] and after_table[1] != after_view[1]
    assert not catalog.current_schema(before[0])  # a store of the old tables: upgraded
    lookup = copy / "raw" / "stop_codes.sql"  # a lookup table is rebuilt by every apply
    lookup.write_text(lookup.read_text(encoding="utf-8") + "-- edited\n", encoding="utf-8")
    assert fingerprints()[0] == after_table[0]
