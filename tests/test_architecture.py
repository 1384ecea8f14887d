"""Data flows one way (DESIGN §1): no package layer imports a layer downstream of it."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "brainlab"

# layer -> layers it must never import (downstream of it, or beside it in the flow)
FORBIDDEN = {
    "sources": {"store", "metrics", "sim", "viz", "report", "synth", "cli", "demo", "lab"},
    "store": {"metrics", "sim", "viz", "report", "synth", "cli", "demo", "lab"},
    "metrics": {"sim", "viz", "report", "synth", "cli", "demo", "lab"},
    "sim": {"viz", "report", "synth", "cli", "demo", "lab"},
    "viz": {"report", "cli", "demo", "lab"},
    "synth": {"store", "metrics", "viz", "report", "cli", "demo", "lab"},
}


def imported_layers(path: Path) -> set[str]:
    layers = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "brainlab" and len(parts) > 1:
                layers.add(parts[1])
    return layers


def test_no_layer_imports_downstream():
    problems = []
    for layer, forbidden in FORBIDDEN.items():
        for path in sorted((PACKAGE / layer).rglob("*.py")):
            bad = imported_layers(path) & forbidden
            if bad:
                problems.append(f"{path.relative_to(PACKAGE.parent)} imports {sorted(bad)}")
    assert problems == []


def test_rule_catalogue_is_pure_data():
    """The store writes the catalogue as a lookup table: it must not pull rules/ code in."""
    assert imported_layers(PACKAGE / "rules" / "catalogue.py") == set()


def test_only_the_factory_calls_duckdb_connect():
    callers = [p.relative_to(PACKAGE.parent).as_posix() for p in PACKAGE.rglob("*.py")
               if "duckdb.connect(" in p.read_text(encoding="utf-8")]
    assert callers == ["brainlab/store/connection.py"]
