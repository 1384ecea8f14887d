"""Weekly health reports: papermill runner, self-contained HTML, index of reports.

``render_weekly(db, week, out) -> Path`` is the library entry point ``brainlab report weekly``
and ``brainlab demo`` call.
"""

from brainlab.report.weekly import (
    latest_week,
    plan_weeks,
    render_weekly,
    render_weeks,
    select_weeks,
)

__all__ = ["latest_week", "plan_weeks", "render_weekly", "render_weeks", "select_weeks"]
