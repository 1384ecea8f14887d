"""``<out>/index.html``: every rendered week with its headline figures and a link.

Each successful render leaves ``<out>/<week>/summary.json`` (written atomically with the
report); the index is rebuilt from those files, so it always matches the reports on disk.
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

from brainlab.report.html import atomic_write, page

SUMMARY = "summary.json"
REPORT = "weekly_health.html"

COLUMNS = (  # summary key, column heading, digits ("$": dollars and cents)
    ("sessions", "brain sessions", 0),
    ("mean_health", "mean health", 2),
    ("mean_health_change", "Δ health", 2),
    ("last_ratio", "ratio (last)", 2),
    ("last_ratio_band", "band", None),
    ("coach_triggers", "coach", 0),
    ("inefficient", "inefficient", 0),
    ("conserve_next", "conserve next", 0),
)
TRANSCRIPT_COLUMNS = (  # measured from Claude Code transcripts (report/measured_week.py)
    ("cc_sessions", "Claude Code sessions", 0),
    ("cost_usd", "cost", "$"),
)


def _cell(value, digits) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if digits is None or not isinstance(value, int | float):
        return html.escape(str(value))
    if digits == "$":
        return html.escape(f"${value:,.2f}")
    return html.escape(f"{value:,.{digits}f}")


def _shown(summaries: list[dict]) -> tuple[tuple, list[str]]:
    """The columns worth showing, and one note per group left out (no data in any week)."""
    brain = any(s.get("sessions") for s in summaries)
    transcripts = any(s.get("cc_sessions") is not None for s in summaries)
    notes = []
    if summaries and not brain:
        notes.append("No metabolism log in these weeks: the health, ratio and signal columns"
                     " are not shown (brainlab ingest brain PATH adds them).")
    if summaries and not transcripts:
        notes.append("No Claude Code transcripts: the sessions and cost columns are not shown"
                     " (brainlab ingest claude [PATH] adds them).")
    columns = ((COLUMNS if brain or not summaries else ())
               + (TRANSCRIPT_COLUMNS if transcripts else ()))
    return columns, notes


def read_summaries(out: Path) -> list[dict]:
    """Every week's summary found under ``out``, newest week first."""
    rows = []
    for path in sorted(Path(out).glob(f"*/{SUMMARY}")):
        if not (path.parent / REPORT).exists():
            continue
        try:
            rows.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError):
            continue  # a damaged summary only drops its line from the index
    return sorted(rows, key=_week_start, reverse=True)


def _week_start(summary: dict) -> str:
    """Sort key: the week's first day (ISO and Sunday weeks may share a folder), else its name."""
    from brainlab.common.errors import ConfigError
    from brainlab.spec.weeks import Week

    label = str(summary.get("week", ""))
    try:
        return Week.parse(label).start.isoformat()
    except ConfigError:
        return label


def write_index(out: Path) -> Path:
    """Rebuild ``<out>/index.html`` from the weeks' summaries."""
    out = Path(out)
    summaries = read_summaries(out)
    columns, notes = _shown(summaries)
    rows = []
    for s in summaries:
        week = html.escape(str(s.get("week", "")))
        cells = "".join(f'<td class="num">{_cell(s.get(key), digits)}</td>'
                        for key, _h, digits in columns)
        rows.append(f'<tr><th><a href="{week}/{REPORT}">{week}</a></th>{cells}</tr>')
    head = "".join(f"<th>{html.escape(h)}</th>" for _k, h, _d in columns)
    said = "".join(f'<p class="note">{html.escape(n)}</p>' for n in notes)
    body = ("<h1>brainlab weekly health reports</h1>"
            f'<p class="note">{len(rows)} week(s). Each link is one self-contained HTML file.</p>'
            f"{said}"
            f'<table class="data"><thead><tr><th>week</th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')
    return atomic_write(out / "index.html", page("brainlab weekly health reports", body))
