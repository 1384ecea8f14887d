"""Weekly health reports: papermill runner, self-contained HTML, index of reports.

``render_weekly(db, week, out) -> Path`` is the library entry point ``brainlab report weekly``
and ``brainlab demo`` call. The names below load :mod:`brainlab.report.weekly` on first use:
the report notebook's kernel imports ``brainlab.report.sections`` only, and must not pay for
the runner's and the HTML converter's imports (nbformat's JSON-schema stack, papermill:
issue 28 item 8, docs/report.md §4).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

# jsonschema (altair's validator, nbformat's) imports rfc3987_syntax when it is installed
# (Jupyter's extras bring it) for its "iri" format checker, and that module compiles a lark
# grammar at import: 1.2 CPU-s, half of a report kernel's imports (docs/report.md §4). Neither
# the Vega-Lite nor the notebook schema uses an "iri" format, so a report process goes without
# it: the module is marked missing and jsonschema skips that one checker. A process that
# loaded jsonschema first keeps whatever it has.
if "jsonschema" not in sys.modules:
    sys.modules.setdefault("rfc3987_syntax", None)

if TYPE_CHECKING:
    from brainlab.report.weekly import (
        latest_week,
        plan_weeks,
        render_weekly,
        render_weeks,
        select_weeks,
    )

__all__ = ["latest_week", "plan_weeks", "render_weekly", "render_weeks", "select_weeks"]


def __getattr__(name: str):
    """Import :mod:`brainlab.report.weekly` when one of its names is first asked for."""
    if name in __all__:
        from brainlab.report import weekly

        return getattr(weekly, name)
    raise AttributeError(f"module 'brainlab.report' has no attribute {name!r}")
