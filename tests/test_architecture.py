"""Data flows one way (DESIGN §1): each package imports only the layers below it, and no cycle.

``ALLOWED`` has a row for every package and top-level module of brainlab (a new one fails
``test_every_package_has_a_row`` until it gets its row); imports are read from the source with
``ast``, function-level imports included, so a lazy import cannot hide an upward dependency
or a cycle.
"""

import ast
import functools
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "brainlab"

# the bottom: the spec layer (imports nothing of brainlab) and what every layer may use
SPEC = {"spec"}
BASE = SPEC | {"brainlab", "common"}  # "brainlab": __init__; common: errors, paths, tables, ...
# package (or top-level module) -> the packages and modules it may import
ALLOWED: dict[str, set[str]] = {
    "spec": set(),
    "common": SPEC,  # the ground floor: errors, paths, plaintext, terminal, tables
    "brainlab": set(),
    "settings": BASE,  # the one settings object (issue 40 item 1)
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


GRAPH = {name: edges(path) - {name} for name, path in MODULES.items()}


def test_every_package_has_a_row():
    missing = sorted({unit(m) for m in MODULES} - set(ALLOWED))
    assert missing == [], f"add a row to ALLOWED for {missing}"


def test_no_package_imports_above_its_layer():
    problems = []
    for name, targets in sorted(GRAPH.items()):
        layer = unit(name)
        if layer in TOP:
            continue
        bad = sorted({unit(t) for t in targets} - ALLOWED[layer] - {layer})
        if bad:
            problems.append(f"{MODULES[name].relative_to(PACKAGE.parent)} imports {bad}")
    assert problems == []


def test_spec_imports_nothing_of_brainlab():
    """The spec layer is the bottom: the store writes it as lookup tables, everything reads it."""
    assert {t for m, ts in GRAPH.items() if unit(m) == "spec" for t in ts
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
    assert find_cycles(GRAPH) == []


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


def test_only_the_factory_calls_duckdb_connect():
    callers = [p.relative_to(PACKAGE.parent).as_posix() for p in PACKAGE.rglob("*.py")
               if "duckdb.connect(" in p.read_text(encoding="utf-8")]
    assert callers == ["brainlab/store/connection.py"]
