"""The compliance rule catalogue, loaded from the rule model files, and the SQL rendered over it.

A rule is ``models/rules/rule_<id>.sql`` (its view: one row per violation) and
``rule_<id>.yml`` beside it, whose ``rule:`` entry is its catalogue entry (id, name, SPEC
address, seed line, subject kind, severity, what it checks, its evidence; see
:class:`brainlab.spec.rules.Rule`). A rule computed with others in a shared rows view names
it in ``rows_view`` and has no .sql of its own: its filter view is rendered from
``models/rules/_violations.sql.tmpl``, as is ``violations``, the union of every rule's rows.
Every rule returns the same seven columns, the violation contract, declared once in
``models/rules/_violation.yml`` (:func:`violation_contract`).
The store writes the catalogue into ``rule_catalogue``; ``brainlab check`` reads it through
:mod:`brainlab.rules.catalogue`. yaml and jinja2 are imported where used.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from brainlab.spec.rules import SEVERITIES, SUBJECT_KINDS, Rule

FOLDER = Path(__file__).parent / "models" / "rules"
TEMPLATE = "_violations.sql.tmpl"
CONTRACT = "_violation.yml"  # the seven columns every rule returns, declared once
_ID = re.compile(r"[A-Z]{3}\d{3}")
_FIELDS = ("id", "name", "spec", "seed", "subject_kind", "severity", "checks", "evidence")


def _rule(path: Path, entry: dict) -> Rule:
    """The catalogue entry of one rule yml, checked; ValueError names the file."""
    data = entry.get("rule") or {}
    missing = [f for f in _FIELDS if not isinstance(data.get(f), str) or not data[f]]
    problem = (f"missing {', '.join(missing)}" if missing
               else f"id {data['id']!r} is not three capitals and three digits"
               if not _ID.fullmatch(data["id"])
               else f"the file of rule {data['id']} must be named rule_{data['id'].lower()}.yml"
               if path.stem != "rule_" + data["id"].lower()
               else f"severity {data['severity']!r} is not one of {', '.join(SEVERITIES)}"
               if data["severity"] not in SEVERITIES
               else f"subject_kind {data['subject_kind']!r} is not one of"
                    f" {', '.join(SUBJECT_KINDS)}" if data["subject_kind"] not in SUBJECT_KINDS
               else None)
    rows_view = data.get("rows_view")
    if problem is None and rows_view is not None \
            and not (path.parent / f"{rows_view}.sql").is_file():
        problem = f"rows_view {rows_view!r} is not a model of models/rules/"
    if problem is None and rows_view is None and not path.with_suffix(".sql").is_file():
        problem = f"no {path.stem}.sql beside it (nor a rows_view)"
    if problem:
        raise ValueError(f"{path}: rule entry: {problem}")
    return Rule(**{f: data[f] for f in _FIELDS},
                needs_transcripts=bool(data.get("needs_transcripts", False)),
                rows_view=rows_view)


@lru_cache(maxsize=1)
def violation_contract(folder: Path = FOLDER) -> tuple[dict, ...]:
    """The violation contract: the columns every model of rules/ ends with, in order.

    Each with its description and data tests (``models/rules/_violation.yml``).
    """
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return tuple(yaml.load((folder / CONTRACT).read_text(encoding="utf-8"),
                           Loader=loader)["columns"])


@lru_cache(maxsize=1)
def load_rules(folder: Path = FOLDER) -> tuple[Rule, ...]:
    """Every rule of ``folder``'s ymls (those with a ``rule:`` entry), sorted by id."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    found = []
    for path in sorted(folder.glob("rule_*.yml")):
        entry = yaml.load(path.read_text(encoding="utf-8"), Loader=loader) or {}
        if "rule" in entry:
            found.append(_rule(path, entry))
    return tuple(sorted(found, key=lambda r: r.id))


def render(rules: tuple[Rule, ...] | None = None) -> str:
    """The SQL of the per-rule filter views and ``violations`` (the template, rendered)."""
    import jinja2

    rules = load_rules() if rules is None else rules
    sources: dict[str, list[str]] = {}
    for rule in rules:
        sources.setdefault(rule.source, []).append(rule.id)
    template = jinja2.Environment(autoescape=False, keep_trailing_newline=True,
                                  undefined=jinja2.StrictUndefined).from_string(
        (FOLDER / TEMPLATE).read_text(encoding="utf-8"))
    columns = ", ".join(c["name"] for c in violation_contract())
    return template.render(rules=rules, sources=list(sources.items()), columns=columns,
                           own_views={r.view for r in rules if not r.rows_view})
