"""Data flows one way (DESIGN §1): each package imports only the layers below it, and no cycle.

``ALLOWED`` has a row for every package and top-level module of brainlab (a new one fails
``test_every_package_has_a_row`` until it gets its row); imports are read from the source with
``ast``, function-level imports included, so a lazy import cannot hide an upward dependency
or a cycle.
"""

import ast
import functools
import re
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "brainlab"

# the bottom: the spec layer (imports nothing of brainlab) and what every layer may use
SPEC = {"spec"}
BASE = SPEC | {"brainlab", "common"}  # "brainlab": __init__; common: errors, paths, tables, ...
# package (or top-level module) -> the packages and modules it may import
ALLOWED: dict[str, set[str]] = {
    "spec": set(),
    "common": SPEC,  # the ground floor: errors, paths, plaintext, terminal, tables
    "brainlab": set(),
    # the one settings object (issue 40 item 1); it quotes values as every message does
    # (sources/messages.py) and checks zones against DuckDB's list (store/zones.py)
    "settings": BASE | {"sources", "store"},
    "sources": BASE,
    "store": BASE | {"sources"},
    # the transcript pipeline (issue 23 item 3): discovery to writer, above the store it fills
    "transcripts": BASE | {"sources", "store"},
    "otel": BASE | {"sources", "store"},  # telemetry sits with sources/store (issue 26)
    "lake": BASE | {"sources", "store", "transcripts"},
    "rules": BASE | {"sources", "store"},
    "metrics": BASE | {"settings", "store"},
    "live": BASE | {"settings", "sources", "store", "transcripts", "metrics"},  # issue 25
    "sim": BASE | {"settings", "sources", "store", "transcripts", "metrics"},
    "synth": BASE | {"otel"},  # synth/telemetry writes OTLP files with otel/export.py
    "viz": BASE | {"settings", "store", "metrics", "sim"},
    # lab: running notebooks (launch, kernels and the papermill engine, the user's copies)
    "lab": BASE | {"settings", "store", "demo"},
    "report": BASE | {"settings", "lab", "store", "metrics", "sim", "viz"},
    "demo": BASE | {"settings", "sources", "store", "transcripts", "metrics", "sim", "synth",
                    "report", "viz", "otel"},
    "docgen": BASE | {"cli", "rules", "store"},
    "cli": set(),  # the top (a package: one module per command group): imports anything
}
TOP = {"cli", "docgen"}  # may import anything
# private names read across modules, allowed (none since the transcripts package, issue 23 item 3)
PRIVATE_ALLOWED: set[tuple[str, str]] = set()


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit(module: str) -> str:
    """The row of ``module``: its package under brainlab, or the top-level module's name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "brainlab"


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def resolve(name: str) -> str:
    """The brainlab module an import names: the longest existing module prefix of ``name``."""
    parts = name.split(".")
    while parts and ".".join(parts) not in MODULES:
        parts.pop()
    return ".".join(parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skip


@functools.cache
def parsed(path: Path) -> ast.Module:
    """The file's syntax tree, parsed once per process (the graph and the private-name check
    both read every module: 2.4 CPU-s parsing each twice, issue 28 item 1)."""
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache
def imports(path: Path) -> list[tuple[str, list[str]]]:
    """Every ``(module, names)`` imported anywhere in the file (TYPE_CHECKING blocks aside)."""
    tree = parsed(path)
    skip = _type_checking_nodes(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names]
    return found


def edges(path: Path) -> set[str]:
    """The brainlab modules this file imports (``from pkg import mod`` names the module)."""
    out = set()
    for module, names in imports(path):
        if module != "brainlab" and not module.startswith("brainlab."):
            continue
        if not names:
            out.add(resolve(module))
        for imported in names:
            full = f"{module}.{imported}"
            out.add(full if full in MODULES else resolve(module))
    return out - {""}


@functools.cache
def graph() -> dict[str, set[str]]:
    """Each brainlab module -> the brainlab modules it imports. Built on first use, not at
    import: every xdist worker imports this file to collect it, and parsing the package
    there cost each of the four about 1 CPU-s for tests only one of them runs."""
    return {name: edges(path) - {name} for name, path in MODULES.items()}


def test_every_package_has_a_row():
    missing = sorted({unit(m) for m in MODULES} - set(ALLOWED))
    assert missing == [], f"add a row to ALLOWED for {missing}"


def test_no_package_imports_above_its_layer():
    problems = []
    for name, targets in sorted(graph().items()):
        layer = unit(name)
        if layer in TOP:
            continue
        bad = sorted({unit(t) for t in targets} - ALLOWED[layer] - {layer})
        if bad:
            problems.append(f"{MODULES[name].relative_to(PACKAGE.parent)} imports {bad}")
    assert problems == []


def test_spec_imports_nothing_of_brainlab():
    """The spec layer is the bottom: the store writes it as lookup tables, everything reads it."""
    assert {t for m, ts in graph().items() if unit(m) == "spec" for t in ts
            if unit(t) != "spec"} == set()


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_find_cycles_sees_a_cycle_hidden_in_a_function():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycles(graph) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle():
    """Over the whole import graph, function-level imports included."""
    assert find_cycles(graph()) == []


def test_no_private_name_crosses_modules():
    """``from brainlab.x import _name`` or ``x._name`` on an imported brainlab module."""
    problems = []
    for name, path in MODULES.items():
        tree = parsed(path)
        aliases = {}
        for module, names in imports(path):
            if not module.startswith("brainlab"):
                continue
            for imported in names:
                full = f"{module}.{imported}"
                if imported.startswith("_") and not imported.startswith("__"):
                    problems.append(f"{name} imports {full}")
                if full in MODULES:
                    aliases[imported] = full
        for node in ast.walk(tree):
            if isinstance(node, ast.alias) and node.asname and node.name in aliases:
                aliases[node.asname] = aliases[node.name]
        reads = defaultdict(set)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                reads[aliases[node.value.id]].add(node.attr)
        problems += [f"{name} reads {target}.{sorted(attrs)}" for target, attrs in reads.items()
                     if (name, target) not in PRIVATE_ALLOWED]
    assert problems == []


# --- issue 40 item 5: what the import graph cannot see, read from the syntax tree ---
# An import the graph above does not follow (a relative import, ``__import__``,
# ``importlib.import_module``) could hide an upward dependency or a cycle; a DuckDB connection
# opened outside the one factory escapes its set-up (settings, read-only seal, lock wait).
FACTORY = "brainlab/store/connection.py"
DUCKDB_MODULES = {"duckdb", "_duckdb"}  # the package and its compiled engine
ENGINE = "brainlab.store.connection.engine"  # returns one of DUCKDB_MODULES
DYNAMIC_IMPORTS = {"__import__", "builtins.__import__", "importlib.import_module",
                   "importlib.__import__"}


def _dotted(node: ast.AST, names: dict[str, str]) -> str | None:
    """What an expression names, its aliases resolved: ``d.connect`` after ``import duckdb as
    d`` is ``duckdb.connect``, ``engine()`` is ``ENGINE()`` and ``engine().connect`` is
    ``duckdb.connect``; None when it is not a plain name, attribute or call of one."""
    if isinstance(node, ast.Name):
        return names.get(node.id, node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, names)
        return None if base is None else f"{base}.{node.attr}"
    if isinstance(node, ast.Call):
        called = _dotted(node.func, names)
        return "duckdb" if called == ENGINE else None
    return None


def _names(tree: ast.AST, module: str) -> dict[str, str]:
    """Local name -> the dotted thing it stands for: imports (aliases and ``from x import y``,
    relative ones resolved against ``module``), and plain assignments of a module or of
    ``engine()`` (``db = engine(); db.connect()``)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = module.split(".")[:len(module.split(".")) - node.level + 1]
                base = ".".join([*parent[:-1], base] if base else parent[:-1])
            for alias in node.names:
                names[alias.asname or alias.name] = f"{base}.{alias.name}"
    for _ in range(2):  # an assignment of an assignment
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name):
                value = _dotted(node.value, names)
                if value is not None and (value.split(".")[0] in DUCKDB_MODULES
                                          or value in DYNAMIC_IMPORTS | {ENGINE}):
                    names[node.targets[0].id] = value
    return names


def _literal_head(node: ast.AST | None) -> str | None:
    """The start of a module name given as a string or an f-string; None when not literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values \
            and isinstance(node.values[0], ast.Constant):
        return node.values[0].value
    return None


def hidden_imports(path: Path, module: str) -> list[str]:
    """Relative imports, and ``__import__`` / ``importlib.import_module`` of a brainlab module
    (or of a name computed at run time, which could be one), as ``file:line what``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = _names(tree, module)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            found.append(f"{node.lineno} relative import "
                         f"{'.' * node.level}{node.module or ''}: write the brainlab.… path")
        elif isinstance(node, ast.Call) and _dotted(node.func, names) in DYNAMIC_IMPORTS:
            head = _literal_head(node.args[0] if node.args else None)
            if head is None or head == "brainlab" or head.startswith(("brainlab.", ".")):
                found.append(f"{node.lineno} {_dotted(node.func, names)}({head or '...'}...):"
                             " import it with an import statement")
    return [f"{path.name}:{line}" for line in found]


def connections(path: Path, module: str) -> list[str]:
    """Every DuckDB connection opened in the file, in any spelling: ``duckdb.connect``,
    ``from duckdb import connect``, ``import duckdb as d; d.connect``, ``engine().connect()``,
    ``getattr(duckdb, "connect")``, as ``file:line``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = _names(tree, module)
    found = []
    for node in ast.walk(tree):
        target = None
        if isinstance(node, (ast.Attribute, ast.Name)):
            target = _dotted(node, names)
        elif isinstance(node, ast.Call) and _dotted(node.func, names) == "getattr" \
                and len(node.args) >= 2 and _literal_head(node.args[1]) == "connect":
            base = _dotted(node.args[0], names)
            target = None if base is None else f"{base}.connect"
        if target is not None and target.split(".")[0] in DUCKDB_MODULES \
                and target.split(".")[-1] == "connect" and target.count(".") == 1:
            found.append(f"{path.name}:{node.lineno} {target}")
    return sorted(set(found))


def _qualified(module: str) -> str:
    """The dotted name relative imports are resolved against (a package's ``__init__``)."""
    return f"{module}.__init__" if MODULES[module].name == "__init__.py" else module


def test_no_hidden_import():
    """No relative import, no ``__import__`` or ``importlib.import_module`` of brainlab."""
    assert [f"{MODULES[m].relative_to(PACKAGE.parent).parent}/{problem}"
            for m in sorted(MODULES) for problem in hidden_imports(MODULES[m], _qualified(m))
            ] == []


def test_only_the_factory_opens_a_duckdb_connection():
    callers = {MODULES[m].relative_to(PACKAGE.parent).as_posix():
               connections(MODULES[m], _qualified(m)) for m in MODULES}
    assert {p: found for p, found in callers.items() if found} == {
        FACTORY: callers[FACTORY]}
    assert callers[FACTORY], "the factory itself opens connections: the check sees it"


PLANTED_IMPORTS = {
    "relative": "from .store import query\n",
    "relative parent": "from .. import settings\n",
    "relative in a function": "def f():\n    from .connection import connect\n",
    "__import__": "mod = __import__('brainlab.sim.regulator')\n",
    "__import__ f-string": "def f(n):\n    return __import__(f'brainlab.{n}')\n",
    "__import__ computed": "def f(name):\n    return __import__(name)\n",
    "builtins.__import__": "import builtins\nbuiltins.__import__('brainlab.store')\n",
    "import_module": "import importlib\nimportlib.import_module('brainlab.store.graph')\n",
    "import_module f-string": ("import importlib\n\ndef f(n):\n"
                               "    return importlib.import_module(f'brainlab.sources.{n}')\n"),
    "import_module relative": "import importlib\nimportlib.import_module('.graph', 'brainlab')\n",
    "from importlib import": "from importlib import import_module as im\nim('brainlab.sim')\n",
    "import importlib as": "import importlib as il\nil.import_module('brainlab.viz')\n",
    "assigned": "import importlib\nload = importlib.import_module\nload('brainlab.sim')\n",
}


@pytest.mark.parametrize("source", PLANTED_IMPORTS.values(), ids=PLANTED_IMPORTS.keys())
def test_a_planted_hidden_import_is_caught(tmp_path, source):
    path = tmp_path / "planted.py"
    path.write_text(source, encoding="utf-8")
    assert len(hidden_imports(path, "brainlab.store.planted")) == 1, source


def test_imports_of_other_packages_pass(tmp_path):
    path = tmp_path / "fine.py"
    path.write_text("import importlib\nimport brainlab.store\nfrom brainlab import sim\n"
                    "importlib.import_module(f'detect_secrets.plugins.{1}')\n"
                    "__import__('os')\ncode = \"__import__('brainlab.store')\"\n",
                    encoding="utf-8")
    assert hidden_imports(path, "brainlab.store.fine") == []


PLANTED_CONNECTIONS = {
    "duckdb.connect": "import duckdb\ncon = duckdb.connect('x.duckdb')\n",
    "from duckdb import connect": "from duckdb import connect\ncon = connect()\n",
    "from duckdb import connect as": "from duckdb import connect as open_db\nopen_db()\n",
    "import duckdb as d": "import duckdb as d\n\ndef f():\n    return d.connect()\n",
    "_duckdb": "import _duckdb\n_duckdb.connect(':memory:')\n",
    "engine().connect()": ("from brainlab.store.connection import engine\n"
                           "con = engine().connect()\n"),
    "engine(full=True).connect": ("from brainlab.store.connection import engine\n"
                                  "con = engine(full=True).connect('x', read_only=True)\n"),
    "connection.engine().connect": ("from brainlab.store import connection\n"
                                    "connection.engine().connect()\n"),
    "relative engine": "from .connection import engine\nengine().connect()\n",
    "engine assigned": ("from brainlab.store.connection import engine\n\ndef f():\n"
                        "    db = engine()\n    return db.connect()\n"),
    "module assigned": "import duckdb\nengine = duckdb\nengine.connect()\n",
    "getattr": "import duckdb\ngetattr(duckdb, 'connect')()\n",
    "passed as a function": "import duckdb\nopen_it = duckdb.connect\n",
}


@pytest.mark.parametrize("source", PLANTED_CONNECTIONS.values(), ids=PLANTED_CONNECTIONS.keys())
def test_a_planted_connection_is_caught(tmp_path, source):
    path = tmp_path / "planted.py"
    path.write_text(source, encoding="utf-8")
    assert connections(path, "brainlab.store.planted") != [], source


def test_the_factory_and_other_duckdb_names_pass(tmp_path):
    path = tmp_path / "fine.py"
    path.write_text("import duckdb\nfrom brainlab.store.connection import StoreConfig, connect,"
                    " engine\ncon = connect(StoreConfig())\nerror = engine().Error\n"
                    "con.execute('SELECT 1')\nduckdb.sql('SELECT 1')\n"
                    "text = 'duckdb.connect('\n", encoding="utf-8")
    assert connections(path, "brainlab.metrics.fine") == []


# --- issue 40 item 4: commands parse, call the library and print; no SQL in the command tree ---
SQL_TEXT = re.compile(r"\b(SELECT\b[\s\S]*\bFROM|INSERT\s+INTO|DELETE\s+FROM|CREATE\s+(OR\s+"
                      r"REPLACE\s+)?(TABLE|VIEW|MACRO)|UPDATE\s+\w+\s+SET|COPY\s+\w+\s+TO)\b")
QUERY_METHODS = {"execute", "executemany", "sql", "query", "fetchall", "fetchone", "fetchdf",
                 "fetch_arrow_table"}


def sql_in(path: Path) -> list[str]:
    """SQL written in a command module: a string holding a statement, or a query method called
    (``con.execute(...)``), as ``file:line``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and SQL_TEXT.search(node.value):
            found.append(f"{path.name}:{node.lineno} SQL text {node.value[:40]!r}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in QUERY_METHODS:
            found.append(f"{path.name}:{node.lineno} .{node.func.attr}(...)")
    return found


def test_commands_hold_no_sql():
    """The command tree calls library functions (store/ingest_text.recorded_problems,
    store/sql.run_sql...); SQL lives in the library and the models."""
    assert [problem for path in sorted((PACKAGE / "cli").glob("*.py"))
            for problem in sql_in(path)] == []


@pytest.mark.parametrize("source", [
    "rows(db, 'SELECT file, line FROM ingest_errors')\n",
    "SQL = '''\nselect 1;\nSELECT count(*)\n  FROM claims'''\n",
    "con.execute('PRAGMA version')\n",
    "found = con.sql(text).fetchall()\n",
    "q = f'INSERT INTO {table} VALUES (1)'\n",
])
def test_planted_sql_in_a_command_is_caught(tmp_path, source):
    path = tmp_path / "planted.py"
    path.write_text(source, encoding="utf-8")
    assert sql_in(path) != [], source


def test_help_text_is_not_sql(tmp_path):
    path = tmp_path / "fine.py"
    path.write_text("HELP = 'Select the rows from the store; --select IDS picks rules'\n"
                    "click.echo(render(result, fmt))\n", encoding="utf-8")
    assert sql_in(path) == []
