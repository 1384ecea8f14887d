"""Every table and view is documented, documented columns match the real ones, docs are fresh."""

from pathlib import Path

from brainlab.store import docs, reader
from brainlab.store.schema import empty_store, models

ROOT = Path(__file__).resolve().parents[1]


def test_documented_columns_match_relations():
    live = docs.relations()
    documented = {n: m for n, m in models().items() if "columns" in m}  # less scalar macros
    assert sorted(set(live) - set(documented)) == [], "undocumented tables/views"
    assert sorted(set(documented) - set(live)) == [], "documented but missing"
    for name, model in documented.items():
        assert [c["name"] for c in model["columns"]] == [c for c, _ in live[name]], name


def test_every_macro_has_a_model_entry():
    """Table macros are documented like views (issue 23 item 2); scalar macros too."""
    with empty_store() as con:
        macros = {r[0] for r in con.execute(
            "SELECT function_name FROM duckdb_functions() WHERE schema_name = 'main' AND"
            " database_name = current_database() AND function_type IN ('macro', 'table_macro')").fetchall()}
    documented = {n for n, m in models().items() if m.get("kind") == "macro"}
    assert len(macros) >= 15 and macros == documented


def test_comments_written_into_duckdb(demo):
    with reader(demo["db"]) as con:
        comment = con.execute("SELECT comment FROM duckdb_columns() WHERE table_name = "
                              "'metabolism_sessions' AND column_name = 'health_score'").fetchone()[0]
    assert "Recomputed score" in comment


def test_schema_md_is_up_to_date():
    on_disk = (ROOT / "docs" / "schema.md").read_text(encoding="utf-8")
    assert on_disk == docs.render(), "run: python -m brainlab.store.docs"
