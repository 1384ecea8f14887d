"""Render the weekly health report of one week, or of many, into ``<out>/<week>/``.

Weeks are ISO weeks (``2026-W48``) unless ``--start-of-week sunday`` (then named by their
Sunday, ``2026-11-22``; brainlab/spec/weeks.py); a transcript session belongs to the week of
its first request's day in the report's zone (``--timezone``).

``render_weekly`` = check the database, execute notebooks/reports/weekly_health.ipynb with
papermill (or in the kernel :func:`render_weeks` shares between weeks) into a temporary file,
convert it to one HTML file, then move the notebook, the HTML and a summary into place (each
by an atomic rename) and rebuild ``<out>/index.html``. ``--all`` and ``--since`` skip the
weeks holding no session; a week after the newest session is refused (:func:`plan_weeks`).
A failed run raises ReportError and leaves the week's previous files as they were.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from brainlab.common.errors import ReportError
from brainlab.lab import kernels
from brainlab.metrics import session_days
from brainlab.report import html, index, runner, summary
from brainlab.settings import DEFAULT_REPORTS
from brainlab.spec.weeks import Week
from brainlab.store import rows

NOTEBOOK = "weekly_health.ipynb"
REPORT = index.REPORT
FAILED = "weekly_health.failed.ipynb"
# Errors a cell meets when the database is unavailable (an ingest holds it, it vanished).
STORE_ERRORS = ("StoreError", "StoreLockedError", "StoreMissingError")


def no_session_message(db: Path) -> str:
    """What to do when the store holds no session of any kind."""
    return (f"{db} holds no session (no metabolism log, no Claude Code transcript): add them"
            " with `brainlab ingest brain PATH` or `brainlab ingest claude [PATH]`, or name a"
            " week with --week")


def latest_week(db: Path, first_day: str = "monday", tz: str = "UTC") -> str:
    """The week of the newest session in ``db`` (ReportError when there is none)."""
    from brainlab.metrics import report as data

    weeks = data.session_weeks(db, first_day, tz)
    if not weeks:
        raise ReportError(no_session_message(db))
    return weeks[-1]


def held_weeks(db: Path, first_day: str = "monday", tz: str = "UTC") -> list[str]:
    """The weeks holding at least one session (metabolism log or transcript session), in order."""
    weeks = {Week.of(day, first_day) for day in session_days.held_days(db, tz)}
    return [w.label for w in sorted(weeks, key=lambda w: w.start)]


@dataclass
class WeekPlan:
    """The weeks a command renders and the empty weeks of its range it skips."""

    weeks: list[str]
    skipped: list[str] = field(default_factory=list)


def plan_weeks(db: Path, week: str | None = None, all_weeks: bool = False,
               since: str | None = None, first_day: str = "monday",
               tz: str = "UTC") -> WeekPlan:
    """The weeks a command asked for: one week, every week with data, or since a week.

    ``--all`` and ``--since`` render only weeks holding a session (the empty ones are counted in
    ``skipped``); a week after the newest session is refused (a typo, not a report). Weeks
    start on ``first_day``; ``week``/``since`` may name an ISO week or any day of the week.
    """
    if sum(bool(x) for x in (week, all_weeks, since)) > 1:
        raise ReportError("give one of --week, --all or --since")

    def parse(label: str) -> Week:
        return Week.parse(label, first_day)

    asked = parse(week or since).label if (week or since) else None
    held = held_weeks(db, first_day, tz)
    if not held:
        if week:
            return WeekPlan([asked])
        raise ReportError(no_session_message(db))
    if asked and parse(asked).start > parse(held[-1]).start:
        raise ReportError(f"{asked} is after the data (the newest session is in {held[-1]}): "
                          f"name a week up to {held[-1]}")
    if week:
        return WeekPlan([asked])
    if not (all_weeks or since):
        return WeekPlan([held[-1]])
    first = parse(since) if since else parse(held[0])
    span, current = [], first
    while current.start <= parse(held[-1]).start:
        span.append(current.label)
        current = current.shifted(1)
    kept = set(held)
    return WeekPlan([w for w in span if w in kept], [w for w in span if w not in kept])


def select_weeks(db: Path, week: str | None = None, all_weeks: bool = False,
                 since: str | None = None, first_day: str = "monday",
                 tz: str = "UTC") -> list[str]:
    """The weeks :func:`plan_weeks` renders (empty weeks of a range left out)."""
    return plan_weeks(db, week, all_weeks, since, first_day, tz).weeks


def render_weekly(db: Path, week: str | None = None, out: Path = DEFAULT_REPORTS, *,
                  thresholds_file: Path | None = None, ratio_window: int = 0,
                  basis: str = "best", history_weeks: int = 12, timeout: int = runner.DEFAULT_TIMEOUT,
                  notebook: Path | None = None, update_index: bool = True,
                  session: runner.KernelSession | None = None, timezone: str | None = None,
                  start_of_week: str | None = None,
                  kernel: kernels.EarlyKernel | None = None) -> Path:
    """Render one week's report; return the path of ``<out>/<week>/weekly_health.html``.

    ``session``: run in that session's kernel (:func:`render_weeks` shares one for all weeks).
    ``kernel``: run in that kernel, started earlier by the caller (``runner.early_kernel``:
    importing while the caller worked) and closed by the run (``runner.NO_KERNEL``: papermill
    starts one when the run starts); without a session or a kernel, one is started here,
    before the store is checked (the check and papermill's imports overlap its start).
    ``timezone``: IANA zone of the transcript sessions' days (default: brainlab.toml's, else
    the machine's); ``start_of_week``: monday (ISO weeks, the default) or sunday.
    """
    if session is None and kernel is None:
        with runner.early_kernel() as started:
            return render_weekly(db, week, out, thresholds_file=thresholds_file,
                                 ratio_window=ratio_window, basis=basis,
                                 history_weeks=history_weeks, timeout=timeout,
                                 notebook=notebook, update_index=update_index,
                                 timezone=timezone, start_of_week=start_of_week,
                                 kernel=started or runner.NO_KERNEL)
    from brainlab.metrics.usage_time import resolve_time

    tz, first_day = resolve_time(timezone, start_of_week)
    db = Path(db).resolve()
    rows(db, "SELECT 1")  # a missing or locked database fails here with a clear message
    label = (Week.parse(week, first_day).label if week
             else latest_week(db, first_day, tz))
    notebook = Path(notebook) if notebook else runner.weekly_notebook()
    week_dir = Path(out) / label
    created = not week_dir.exists()
    week_dir.mkdir(parents=True, exist_ok=True)
    run_id = runner.new_run_id(label)
    parameters = {
        "db": str(db), "week": label, "ratio_window": int(ratio_window),
        "thresholds_file": str(Path(thresholds_file).resolve()) if thresholds_file else "",
        "history_weeks": int(history_weeks), "run_id": run_id, "basis": basis,
        "timezone": tz,
    }
    # The executing notebook lives outside the output folder: a killed render leaves nothing
    # there (issue 10 §12); the system's temp folder is cleaned by the system.
    scratch = Path(tempfile.mkdtemp(prefix="brainlab-report-"))
    tmp_nb = scratch / f"weekly_health.{run_id}.ipynb"
    try:
        html.preload()  # the page's HTML parser loads while the kernel works
        run = runner.execute(notebook, tmp_nb, parameters, run_id, timeout=timeout,
                             cwd=week_dir, session=session, kernel=kernel)
        page = html.report_html(run.notebook, f"brainlab weekly health — {label}")
        summary = _summary(db, label, run, parameters)
        executed = tmp_nb.read_bytes()
    except ReportError as exc:
        if getattr(exc, "ename", "") in STORE_ERRORS:  # not a notebook bug: nothing to debug
            if created:
                shutil.rmtree(week_dir, ignore_errors=True)
            raise ReportError(f"{exc.evalue} (the report of {label} was not written)") from None
        if tmp_nb.exists():
            shutil.move(tmp_nb, week_dir / FAILED)  # kept for debugging; never the report
        raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    html.atomic_write(week_dir / NOTEBOOK, executed)
    report = html.atomic_write(week_dir / REPORT, page)
    html.atomic_write(week_dir / index.SUMMARY, json.dumps(summary, indent=2) + "\n")
    (week_dir / FAILED).unlink(missing_ok=True)
    if update_index:
        index.write_index(Path(out))
    return report


def render_weeks(db: Path, weeks: list[str], out: Path = DEFAULT_REPORTS,
                 on_done: Callable[[str, Path], None] | None = None,
                 kernel: kernels.EarlyKernel | None = None, **options) -> list[Path]:
    """Render several weeks in one kernel (index rebuilt once at the end).

    Stops at the first failure. One week alone runs as :func:`render_weekly` does (papermill,
    its own kernel). ``kernel`` (``runner.early_kernel``, started by the caller before it
    planned the weeks) is the one week's kernel, or the shared kernel's first; it is closed
    here.
    """
    paths = []
    shared = len(weeks) > 1
    try:
        with runner.KernelSession(kernel if shared else None) as session:
            for label in weeks:
                path = render_weekly(db, label, out, update_index=False,
                                     session=session if shared else None,
                                     kernel=None if shared else kernel,
                                     **options)
                paths.append(path)
                if on_done:
                    on_done(label, path)
    finally:
        if paths:
            index.write_index(Path(out))
    return paths


def _summary(db: Path, label: str, run: runner.Execution, parameters: dict) -> dict:
    """Headline figures of the week for the index (summary.json).

    Those the notebook's last cell displayed (:mod:`brainlab.report.summary`), else the
    same figures queried here.
    """
    found = summary.from_notebook(run.notebook)
    if found is None:
        from brainlab.report import once

        store = once.store(db)  # one connection for the summary's queries
        try:
            found = _summary_of(store, label, parameters)
        finally:
            once.close(store)
    return {"week": label, "run_id": run.run_id, "seconds": round(run.seconds, 2), **found}


def _summary_of(db, label: str, parameters: dict) -> dict:
    from brainlab.settings import thresholds_of

    thresholds = thresholds_of(parameters["thresholds_file"] or None)[0]
    if parameters["ratio_window"]:
        thresholds = thresholds.replace(ratio_window=parameters["ratio_window"])
    return summary.figures(db, Week.parse(label), thresholds, parameters.get("basis", "best"),
                           tz=parameters.get("timezone", "UTC"))
