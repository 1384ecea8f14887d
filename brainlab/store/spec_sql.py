"""SPEC values written into the SQL models, so a model file never repeats one (issue 40 item 3).

A model file names a spec value instead of writing it: ``coach_ratio := {{ thresholds.coach_ratio }}``
in a macro's parameter list becomes ``coach_ratio := 0.4``, the default of
:class:`~brainlab.spec.thresholds.Thresholds`, when the store reads its models
(:func:`brainlab.store.graph.model_files`); a model ``.yml`` names it the same way in a
parameter's ``default`` (docs/schema.md shows the value). Tabular facts (the scored
categories, the workspace retention days) reach SQL as lookup tables instead
(:func:`brainlab.store.schema._write_lookups`). :data:`NAMESPACES` is every namespace a
placeholder may use; an unknown one is an error naming the file.
"""

from __future__ import annotations

import re
from typing import Any

PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\.(\w+)\s*\}\}")


def namespaces() -> dict[str, Any]:
    """The spec objects a placeholder may name: thresholds and vocabulary.

    ``thresholds`` holds the SPEC §3.3/§4.4 defaults, ``vocabulary`` brainlab/spec/vocabulary.py's
    constants (the default claim and workspace TTLs).
    """
    from brainlab.spec import vocabulary
    from brainlab.spec.thresholds import Thresholds

    return {"thresholds": Thresholds(), "vocabulary": vocabulary}


NAMESPACES = ("thresholds", "vocabulary")


def literal(value: Any) -> str:
    """``value`` as a SQL literal: a string quoted, a flag true/false, an integral float as an int."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)


# A parameter list several macros take whole: ``{{ parameters.signals }}`` in a macro header
# stands for ``ratio_window := {{ thresholds.ratio_window }}, ...``, one line per
# :data:`~brainlab.spec.thresholds.SIGNAL_PARAMETERS` entry (session_signals_for,
# weekly_health_for and trend_observations_for take the same set).
LIST = re.compile(r"\{\{\s*parameters\.(\w+)\s*\}\}")


def parameter_lists() -> dict[str, list[tuple[str, str]]]:
    """Each named parameter list: ``[(parameter, "thresholds.<field>"), ...]``."""
    from brainlab.spec.thresholds import SIGNAL_PARAMETERS

    return {"signals": [(name, f"thresholds.{field}") for name, field in SIGNAL_PARAMETERS]}


def expand(text: str, where: str = "a model") -> str:
    """``text`` with each ``{{ parameters.<list> }}`` written out as its parameter lines."""
    lists = parameter_lists()

    def one(match: re.Match) -> str:
        if match.group(1) not in lists:
            raise ValueError(f"{where}: unknown parameter list {match.group(0)}"
                             f" (known: {', '.join(sorted(lists))})")
        return ",\n    ".join(f"{name} := {{{{ {value} }}}}"
                               for name, value in lists[match.group(1)])

    return LIST.sub(one, text)


def render(text: str, where: str = "a model") -> str:
    """``text`` with every ``{{ namespace.field }}`` replaced by the spec value's SQL literal.

    Parameter lists are written out first (:func:`expand`).
    """
    if "{{" not in text:
        return text
    text = expand(text, where)
    spaces = namespaces()

    def one(match: re.Match) -> str:
        space, name = match.group(1), match.group(2)
        if space not in spaces or not hasattr(spaces[space], name):
            raise ValueError(f"{where}: unknown spec value {{{{ {space}.{name} }}}}"
                             f" (known: {', '.join(f'{s}.<field>' for s in NAMESPACES)})")
        return literal(getattr(spaces[space], name))

    return PLACEHOLDER.sub(one, text)


def bound(text: str) -> dict[str, str]:
    """Each macro parameter of a model file whose default names a spec value: param -> ``ns.field``."""
    return {m.group(1): f"{m.group(2)}.{m.group(3)}" for m in re.finditer(
        r"(\w+)\s*:=\s*\{\{\s*(\w+)\.(\w+)\s*\}\}", text)}
