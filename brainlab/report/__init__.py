"""Weekly health reports: papermill runner, self-contained HTML, index of reports.

``render_weekly(db, week, out) -> Path`` is the library entry point ``brainlab report weekly``
and ``brainlab demo`` call. The names below load :mod:`brainlab.report.weekly` on first use:
the report notebook's kernel imports ``brainlab.report.sections`` only, and must not pay for
the runner's and the HTML converter's imports (nbformat's JSON-schema stack, papermill:
issue 28 item 8, docs/report.md §4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
