"""The SQL model files by layer, what each one reads, and the order they are created in.

A model is one table, view or table macro in ``models/<layer>/<name>.sql`` (the file name is
the object's name) with ``<name>.yml`` beside it. Layers, lowest first: ``raw`` (tables the
ingest writes), ``staging`` (views that clean, type or dedupe one raw source), ``marts``
(metrics, reports, usage...) and ``rules`` (one model per compliance rule). A model may read
its own layer or a lower one.

The load order comes from the relations each file reads, then a stable topological sort:
among the models ready at a step, the lowest layer, then the name, goes first. Tables read
nothing. What a view or macro reads is found by a scan of its query's identifiers (comments
and strings left out; a qualified column ``t.name``, an alias ``AS name``, a CTE's own name
and a named argument ``name :=`` are not reads): 20 ms for the whole tree, where DuckDB's
parser (``json_serialize_sql``, :func:`parsed_references`) takes 0.2 s. The scan may see a
column that bears a model's name as a read (an extra edge, harmless unless it makes a
cycle); the tests check it never misses a read the parser finds.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from brainlab.store.spec_sql import render

FOLDER = Path(__file__).parent / "models"
LAYERS = ("raw", "staging", "marts", "rules")

_HEAD = re.compile(r"(?is)^\s*(?:--[^\n]*\n|\s)*CREATE\s+(?:OR\s+REPLACE\s+)?(TABLE|VIEW|MACRO)"
                   r"\s+(?:IF\s+NOT\s+EXISTS\s+)?\"?(\w+)\"?")


@dataclass(frozen=True)
class Model:
    """One model file: its object's name, kind and layer, and its SQL text."""

    name: str
    kind: str  # table, view or macro (as the file's CREATE statement says)
    layer: str  # one of LAYERS: the folder the file is in
    path: Path
    sql: str


def model_files(folder: Path = FOLDER) -> list[Model]:
    """Every ``<layer>/<name>.sql`` under ``folder``, by layer then name (not yet ordered).

    A file whose CREATE statement names another object than its file name is an error: the
    file name is the object's name. So is a ``.sql`` file outside a layer folder, or left in
    the folders of the topic-file layout (``store/views/``, ``store/schema/``): a view added
    there by a branch written before the model tree fails loudly instead of being skipped.
    """
    stray = sorted(p for p in (*folder.glob("*.sql"), *folder.glob("*/*.sql"),
                               *(folder.parent / "views").glob("*.sql"),
                               *(folder.parent / "schema").glob("*.sql"))
                   if p.parent.name not in LAYERS)
    if stray:  # a topic file of the old layout (views/, schema/) or a file outside a layer
        raise ValueError(f"{stray[0]}: SQL outside the model tree: split it into"
                         f" {folder}/<layer>/<name>.sql, one model per file"
                         f" ({len(stray)} such file(s))")
    out = []
    for layer in LAYERS:
        base = folder / layer
        if not base.is_dir():
            continue
        for path in sorted(base.glob("*.sql")):
            text = render(path.read_text(encoding="utf-8"), str(path))  # spec values filled in
            head = _HEAD.match(text)
            if head is None or head.group(2) != path.stem:
                raise ValueError(f"{path}: its first statement must create `{path.stem}`"
                                 " (the file name is the object's name)")
            out.append(Model(path.stem, head.group(1).lower(), layer, path, text))
    return out


def _body(model: Model) -> str | None:
    """The query a view or macro runs, as a SELECT the parser can serialize (None: a table)."""
    text = model.sql.strip().rstrip(";")
    head = _HEAD.match(text)
    rest = text[head.end():]
    if model.kind == "view":
        return re.sub(r"(?is)^\s*AS\s+", "", rest, count=1)
    if model.kind == "macro":
        depth, end = 0, 0
        for index, char in enumerate(rest):  # the parameter list's closing parenthesis
            depth += (char == "(") - (char == ")")
            if char == ")" and depth == 0:
                end = index
                break
        query = re.sub(r"(?is)^\s*AS\s+", "", rest[end + 1:], count=1)
        table = re.match(r"(?is)TABLE\s+", query)
        return query[table.end():] if table else f"SELECT ({query})"
    return None


def _names(node, tables: set[str], ctes: set[str]) -> None:
    """Collect relation and function names (and CTE names) anywhere in a serialized query."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("table_name", "function_name") and isinstance(value, str):
                tables.add(value)
            elif key == "cte_map" and isinstance(value, dict):
                ctes.update(entry.get("key") for entry in value.get("map", []))
            _names(value, tables, ctes)
    elif isinstance(node, list):
        for item in node:
            _names(item, tables, ctes)


_IDENT = re.compile(r"(?<![.\w])(\w+)\b(?!\s*:=)")
_CTE = re.compile(r"(?i)\b(\w+)\s+AS\s+(?:(?:NOT\s+)?MATERIALIZED\s+)?\(")
_ALIAS = re.compile(r"(?i)\WAS\s*$")  # on the 32 characters before a name


def _code(sql: str) -> str:
    """The SQL without its comments, and its string literals emptied."""
    sql = re.sub(r"--[^\n]*", " ", sql)
    sql = re.sub(r"/\*.*?\*/", " ", sql, flags=re.S)
    return re.sub(r"'(?:[^']|'')*'", "''", sql)


def references(models: list[Model]) -> dict[str, set[str]]:
    """Each model's name -> the other models it reads, by a scan of identifiers (see above)."""
    known = {m.name for m in models}
    out: dict[str, set[str]] = {}
    for model in models:
        body = _body(model)
        found: set[str] = set()
        if body is not None:
            code = _code(body)
            ctes = set(_CTE.findall(code))
            for match in _IDENT.finditer(code):
                name = match.group(1)
                if name in known and name != model.name and name not in ctes \
                        and not _ALIAS.search(code[max(0, match.start() - 32):match.start()]):
                    found.add(name)
        out[model.name] = found
    return out


def parsed_references(models: list[Model], con=None) -> dict[str, set[str]]:
    """Each model's name -> the other models it reads, by DuckDB's parser (for the tests)."""
    if con is None:
        from brainlab.store.connection import memory

        con = memory()
    known = {m.name for m in models}
    out: dict[str, set[str]] = {}
    for model in models:
        body = _body(model)
        if body is None:
            out[model.name] = set()
            continue
        tree = json.loads(con.execute("SELECT json_serialize_sql(?)", [body]).fetchone()[0])
        if tree.get("error"):
            raise ValueError(f"{model.path}: cannot parse its query: {tree.get('error_message')}")
        tables: set[str] = set()
        ctes: set[str] = set()
        _names(tree, tables, ctes)
        out[model.name] = (tables - ctes) & known - {model.name}
    return out


def load_order(models: list[Model], deps: dict[str, set[str]]) -> list[Model]:
    """The models in creation order: each after what it reads; raises ValueError on a cycle.

    Stable: among the models whose dependencies are all created, the lowest layer, then the
    name, comes first.
    """
    by_name = {m.name: m for m in models}
    waiting = {m.name: set(deps.get(m.name, ())) for m in models}
    done: list[Model] = []
    while waiting:
        ready = [by_name[n] for n, need in waiting.items() if not need]
        if not ready:
            raise ValueError("the SQL models form a cycle: " + cycle(waiting))
        first = min(ready, key=lambda m: (LAYERS.index(m.layer), m.name))
        done.append(first)
        del waiting[first.name]
        for need in waiting.values():
            need.discard(first.name)
    return done


def cycle(waiting: dict[str, set[str]]) -> str:
    """One cycle among models that wait on each other, as ``a -> b -> a``."""
    start = next(iter(waiting))
    path = [start]
    while True:
        step = sorted(d for d in waiting[path[-1]] if d in waiting)[0]
        if step in path:
            return " -> ".join(path[path.index(step):] + [step])
        path.append(step)


def layer_errors(models: list[Model], deps: dict[str, set[str]]) -> list[str]:
    """Each model that reads a model of a higher layer (raw < staging < marts < rules)."""
    rank = {m.name: LAYERS.index(m.layer) for m in models}
    layer = {m.name: m.layer for m in models}
    return [f"{layer[name]}/{name} reads {layer[dep]}/{dep}: move one of them"
            for name, need in sorted(deps.items()) for dep in sorted(need)
            if rank[dep] > rank[name]]


@lru_cache(maxsize=1)
def ordered() -> tuple[Model, ...]:
    """The package's models in creation order (checked: no cycle, no upward read)."""
    models = model_files()
    deps = references(models)
    problems = layer_errors(models, deps)
    if problems:
        raise ValueError("SQL models in the wrong layer: " + "; ".join(problems))
    return tuple(load_order(models, deps))
