"""Cost by plugin and by skill (issue 45 item 4): ``usage_attribution`` as records.

The calls' own attribution (``attributionPlugin`` / ``attributionSkill`` on Claude Code's
newer assistant lines), else telemetry's ``skill.name``; each dimension's rows add up to
every call, so the costs sum exactly to ``usage daily``'s total. The ``usage`` command's
``--by plugin|skill`` is its join (the usage engineer's ``--by``); until then this is the
library call.
"""

from __future__ import annotations

from pathlib import Path

DIMENSIONS = ("plugin", "skill")


def cost_by(db: str | Path, dimension: str) -> list[dict]:
    """The rows of one dimension (``plugin`` or ``skill``), costliest first, '(none)' last."""
    from brainlab.common.errors import ConfigError
    from brainlab.store.connection import rows

    if dimension not in DIMENSIONS:
        raise ConfigError(f"unknown attribution {dimension!r}: give plugin or skill")
    names, found = rows(db, "SELECT * EXCLUDE (dimension) FROM usage_attribution"
                            " WHERE dimension = ? ORDER BY value = '(none)',"
                            " cost_usd DESC NULLS LAST, value", [dimension])
    return [dict(zip(names, row, strict=True)) for row in found]
