"""Data tests on the models, as dbt's generic tests: each yml's declarations run against a store.

A model's yml (``models/<layer>/<name>.yml``) declares, beside its grain in words:

- ``unique_key: [col, ...]``: the grain as columns; no two rows share these values (NULLs
  compare equal, as in GROUP BY: a main-chain row's NULL ``agent_id`` is one value);
  ``unique_key: []`` for a relation of one row at most; ``unique_key: ~`` with a comment
  saying why, where the columns cannot state the grain (no test);
- on a column, ``not_null: true``: no row has it NULL;
- on a column, ``accepted_values: [a, b, ...]``, or ``{spec: module.NAME}`` for a tuple or a
  dict's keys of ``brainlab.spec`` (one fact in one place): every non-NULL value is one of them
  (compared as text).

The violation contract's declarations (``models/rules/_violation.yml``) reach every rule
through :func:`brainlab.store.schema.models`. :func:`run` reads each table and view of a store
once (one query per model; the rules layer through ``violations``, the union of every
rule's rows) and returns what breaks a declaration; the test suite runs it on
the demo and the corpus stores (``tests/test_model_data.py``). Table macros are tested through
the views that call them with the SPEC defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from brainlab.store.connection import sql_ident, sql_literal

if TYPE_CHECKING:
    import duckdb

KINDS = ("unique_key", "not_null", "accepted_values")
# every rule's rows, with the violation contract's columns: the rules layer is tested through
# it (each rule view alone recomputes what violations shares: 3x the time on the demo store)
ALL_VIOLATIONS = "violations"


@dataclass(frozen=True)
class Finding:
    """One declaration a store's rows break."""

    model: str
    test: str  # one of KINDS
    columns: tuple[str, ...]
    rows: int  # rows that break it (for unique_key: keys held by more than one row)
    example: str  # one offending key or value, as text

    def __str__(self) -> str:
        return (f"{self.model}: {self.test} ({', '.join(self.columns)}) broken by {self.rows}"
                f" row(s), e.g. {self.example}")


def spec_values(reference: str) -> tuple[str, ...]:
    """The values ``{spec: module.NAME}`` names, as text.

    A tuple, set or a dict's keys of ``brainlab.spec.<module>``; ValueError when it names
    nothing of the spec.
    """
    from brainlab.spec import modes, rules, session_types, stops, vocabulary

    modules = {"modes": modes, "rules": rules, "session_types": session_types, "stops": stops,
               "vocabulary": vocabulary}
    module, _, name = reference.rpartition(".")
    if module not in modules:
        raise ValueError(f"accepted_values: {reference!r} names no module of brainlab.spec"
                         f" ({', '.join(modules)})")
    value = getattr(modules[module], name, None)
    if not isinstance(value, (tuple, list, set, frozenset, dict)):
        raise ValueError(f"accepted_values: {reference!r} is not a tuple, set or dict of the spec")
    return tuple(str(v) for v in value)


def declared(model: dict) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """A model's data tests, ``(kind, columns, accepted values)`` each.

    ValueError names the model when a declaration names a column it does not document.
    """
    columns = [c["name"] for c in model.get("columns", [])]
    out: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = []
    key = model.get("unique_key")
    if key is not None:
        missing = [c for c in key if c not in columns]
        if missing:
            raise ValueError(f"{model['_file']}: unique_key names {missing}, not its columns")
        out.append(("unique_key", tuple(key), ()))
    for column in model.get("columns", []):
        if column.get("not_null"):
            out.append(("not_null", (column["name"],), ()))
        values = column.get("accepted_values")
        if values is not None:
            values = (spec_values(values["spec"]) if isinstance(values, dict)
                      else tuple(str(v) for v in values))
            out.append(("accepted_values", (column["name"],), values))
    return out


def check_sql(name: str, tests: list[tuple[str, tuple[str, ...], tuple[str, ...]]]) -> str:
    """One query reading the relation once: per test, the rows that break it and an example.

    The rows are grouped by the unique key (or not at all), each group counting its rows,
    NULLs and values not accepted; the outer query sums the groups.
    """
    key = next((columns for kind, columns, _v in tests if kind == "unique_key"), ())
    group = ", ".join(sql_ident(c) for c in key) or "()"
    inner, outer = ["count(*) AS _rows"], []
    for index, (kind, columns, values) in enumerate(tests):
        column = sql_ident(columns[0]) if columns else ""
        if kind == "unique_key":
            shown = (f"CAST({column} AS VARCHAR)" if len(key) == 1 else "'()'" if not key
                     else "CAST(row(" + ", ".join(sql_ident(c) for c in key) + ") AS VARCHAR)")
            inner.append(f"{shown} AS _key")
            outer.append("count(*) FILTER (WHERE _rows > 1), min(_key) FILTER (WHERE _rows > 1)")
        elif kind == "not_null":
            inner.append(f"count(*) FILTER (WHERE {column} IS NULL) AS _n{index}")
            outer.append(f"sum(_n{index}), NULL")
        else:
            allowed = ", ".join(sql_literal(v) for v in values)
            bad = f"{column} IS NOT NULL AND CAST({column} AS VARCHAR) NOT IN ({allowed})"
            inner.append(f"count(*) FILTER (WHERE {bad}) AS _n{index},"
                         f" min(CAST({column} AS VARCHAR)) FILTER (WHERE {bad}) AS _e{index}")
            outer.append(f"sum(_n{index}), min(_e{index})")
    return (f"SELECT {', '.join(outer)} FROM (SELECT {', '.join(inner)}"
            f" FROM {sql_ident(name)} GROUP BY {group})")


def run(con: duckdb.DuckDBPyConnection, names: list[str] | None = None) -> list[Finding]:
    """Every declaration of the store's tables and views (or of ``names``) its rows break."""
    from brainlab.store.schema import models

    relations = {r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' UNION ALL "
        "SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'"
    ).fetchall()}
    found = []
    for name, model in models().items():
        if (names is not None and name not in names) or name not in relations:
            continue
        if names is None and model["_layer"] == "rules" and name != ALL_VIOLATIONS:
            continue  # every rule's rows are read once, in violations
        tests = declared(model)
        if not tests:
            continue
        row = con.execute(check_sql(name, tests)).fetchone()
        for index, (kind, columns, _values) in enumerate(tests):
            broken, example = row[2 * index], row[2 * index + 1]
            if broken:
                found.append(Finding(name, kind, columns, broken, str(example)))
    return found
