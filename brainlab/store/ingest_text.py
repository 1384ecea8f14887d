"""What an ingest run did, and what ingest recorded (``brainlab errors``), as text.

One line per source, the problems line, the store. Apart from :mod:`brainlab.store.ingest`
(pyarrow, the sources, redaction) so every ingest command, ``ingest claude``'s nothing-new
run included, prints its problems line without loading them (issue 12: that run imports no
parser).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from brainlab.store.ingest import IngestSummary


SUMMARY_COLUMNS = ("source", "loaded", "unchanged", "removed", "rows", "errors", "warnings")


def summary_lines(summary: IngestSummary, db: str | Path, width: int = 80) -> list[str]:
    """What an ingest run did as text: the sources' table, the problems line, the store.

    One row per source (files loaded / unchanged / removed, rows, errors, warnings), fitted
    into ``width`` like every command's table (before: a fixed line of 89 columns a source).
    """
    from brainlab.common.tables import text_table

    names = sorted(set(summary.loaded) | set(summary.unchanged) | set(summary.removed))
    rows = [(name, summary.loaded.get(name, 0), summary.unchanged.get(name, 0),
             summary.removed.get(name, 0), summary.rows.get(name, 0),
             summary.errors.get(name, 0), summary.warnings.get(name, 0)) for name in names]
    table = text_table(SUMMARY_COLUMNS, rows, width=width, see="brainlab errors") if rows else ""
    lines = [line.rstrip() for line in table.splitlines() if line.strip()]
    if summary.total_errors or summary.total_warnings:
        lines.append(problems_line(summary.total_errors, summary.total_warnings, db))
    return [*lines, f"database: {db}"]


def problems_line(errors: int, warnings: int, db: str | Path) -> str:
    """How many errors (not loaded) and warnings (loaded, flagged) a run recorded."""
    return (f"{errors} error(s), {warnings} warning(s) recorded in ingest_errors"
            f" (see: brainlab errors --db {db})")


def recorded_problems(db: str | Path, limit: int) -> list[str]:
    """``brainlab errors``: the first ``limit`` problems ingest recorded, then the counts.

    Each as ``file:line: severity: reason`` in plain text; one line saying so when there is
    none.
    """
    from brainlab.common.plaintext import visible
    from brainlab.store.connection import rows

    _names, found = rows(db, "SELECT file, line, severity, reason FROM ingest_errors"
                             " ORDER BY file, line NULLS FIRST LIMIT ?", [limit])
    if not found:
        return ["No ingest errors or warnings recorded."]
    lines = [f"{visible(file if line is None else f'{file}:{int(line)}')}: {severity}:"
             f" {visible(reason)}" for file, line, severity, reason in found]
    _names, ((errors, warnings),) = rows(db, "SELECT count(*) FILTER (WHERE severity = 'error'),"
                                             " count(*) FILTER (WHERE severity <> 'error')"
                                             " FROM ingest_errors")
    lines.append(f"{errors} error(s) (rows not loaded), {warnings} warning(s) (loaded, flagged)"
                 + (f"; first {limit} shown" if errors + warnings > limit else ""))
    return lines
