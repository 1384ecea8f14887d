"""The weekly report's sections, called one per cell by notebooks/reports/weekly_health.ipynb.

Each section fetches its DataFrames from :mod:`brainlab.metrics.report`, draws its charts with
:mod:`brainlab.viz.charts` (inline SVG) and displays ONE escaped HTML fragment. Strings that
came from logs (session ids, notes, agent names, file paths) reach HTML only through
``html.escape`` or ``DataFrame.to_html`` with its default escaping; never build markup from
them any other way.
"""

from __future__ import annotations

import html
import os
import threading
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pandas as pd

from brainlab.common.tables import MISSING, NUMERIC, SHORT_ID, column_kind, format_cell, is_missing
from brainlab.metrics import report as data
from brainlab.metrics.report import Week
from brainlab.report import measured_week, once, whatif
from brainlab.settings import Thresholds, thresholds_of
from brainlab.viz import charts
from brainlab.viz.chart_process import PROBE, ChartProcess, Pending

NO_SESSIONS = "No sessions this week"
NO_LOG = "No metabolism log this week"  # said instead when transcript sessions exist


@dataclass
class ReportContext:
    """What every section needs: the database, the week, the thresholds, the trend span."""

    db: Path
    week: Week
    thresholds: Thresholds
    history_weeks: int = 12
    run_id: str = ""
    figures: dict | None = None  # the week's weekly_health_for row; None = no sessions
    threshold_source: str = "SPEC defaults"
    basis: str = "best"  # logged | measured | best: which side of each session (issue 13)
    charts_drawn: list[str] = field(default_factory=list)
    transcript_sessions: int = 0  # Claude Code sessions started this week
    shape: measured_week.Shape | None = None  # which sides the store holds (None: all)
    timezone: str = "UTC"  # IANA zone of the usage section's days (--timezone, issue 24)
    trend_rows: pd.DataFrame | None = None  # trend_observations_for up to the week's end
    found: pd.DataFrame | None = None  # their weekly change points, scanned once per render
    queried: dict = field(default_factory=dict, repr=False)  # frames two sections read

    def weekly_trend(self) -> pd.DataFrame:
        """``weekly_health_for`` over the trend window, queried once (headline, conserve)."""
        if "weekly_trend" not in self.queried:
            self.queried["weekly_trend"] = data.weekly_trend(
                self.db, self.week, self.thresholds, self.history_weeks, basis=self.basis)
        return self.queried["weekly_trend"]

    def week_sessions(self) -> pd.DataFrame:
        """The week's sessions with their signals, queried once (conserve, sessions)."""
        if "week_sessions" not in self.queried:
            self.queried["week_sessions"] = data.week_sessions(
                self.db, self.week, self.thresholds, basis=self.basis)
        return self.queried["week_sessions"]

    def observations(self) -> pd.DataFrame:
        """The trend observations up to the week's end (issue 43).

        The whole history's are queried once per store state (``report weekly --all``
        renders its weeks in one kernel) and cut at this week's end, as the query would.
        """
        if self.trend_rows is None:
            from brainlab.metrics import trends

            every = once.once(
                self.db, f"trend_observations:{self.thresholds}:{self.basis}:"
                         f"{self.week.first_day}",
                lambda: trends.observations(self.db, self.thresholds, self.basis,
                                            self.week.first_day))
            self.trend_rows = trends.cut(every, self.week.end_at)
        return self.trend_rows

    def changes(self) -> pd.DataFrame:
        """The weekly change points of every series up to the week's end, scanned once.

        The headline lists them and the charts draw them (issue 43): one scan per render.
        """
        if self.found is None:
            from brainlab.metrics import trends

            self.found = trends.changes(self.observations(), "week", self.week.first_day)
        return self.found

    def marks(self, series: tuple[str, ...] = (), prefix: str | None = None) -> pd.DataFrame:
        """The change points a chart of the trend window draws (trends.change_marks)."""
        from brainlab.metrics import trends

        weeks = [self.week.shifted(-i).label for i in range(self.history_weeks)]
        return trends.change_marks(self.changes(), series, prefix, weeks, self.week.first_day)

    def skipped(self, key: str) -> bool:
        """True when the store holds no data for section ``key``: the headline names it."""
        return self.shape is not None and key in self.shape.missing

    @property
    def transcripts_only(self) -> bool:
        """No brain session to score (no log, no typed transcript) but transcripts."""
        return (self.shape is not None and not self.shape.has_logs
                and self.shape.has_transcripts)

    @property
    def no_logs(self) -> str:
        """The empty state of the brain's own sections: no session at all, or no log only."""
        return NO_LOG if self.transcript_sessions else NO_SESSIONS

    @property
    def has_sessions(self) -> bool:
        """True when the week holds at least one session."""
        return self.figures is not None


def open_report(db: str, week: str, ratio_window: int = 0, thresholds_file: str = "",
                history_weeks: int = 12, run_id: str = "", basis: str = "best",
                timezone: str = "") -> ReportContext:
    """Resolve the notebook's parameters into a context (empty week = latest with sessions).

    ``timezone``: the IANA zone of the usage section's days; empty: ``$BRAINLAB_TIMEZONE``,
    else brainlab.toml's, else the machine's (:func:`usage_time.kernel_timezone`). The
    context holds one read-only connection for every section (:mod:`brainlab.report.once`):
    call :func:`finish` after the last section.
    """
    from brainlab.metrics.usage_time import kernel_timezone, kernel_week_start

    warm_charts()  # vl-convert's engine starts while the first queries run
    tz = kernel_timezone(timezone or None)
    thresholds, threshold_source = thresholds_of(thresholds_file or None)
    if ratio_window:
        thresholds = thresholds.replace(ratio_window=int(ratio_window))
    store = once.store(db)
    if not week:
        first_day = kernel_week_start()
        weeks = data.session_weeks(store, first_day, tz)
        week = weeks[-1] if weeks else Week.of(pd.Timestamp.now().date(), first_day).label
    parsed = Week.parse(week)
    shape = once.shape(store, basis)
    return ReportContext(
        db=store, week=parsed, thresholds=thresholds, history_weeks=int(history_weeks),
        run_id=run_id, figures=data.week_figures(store, parsed, thresholds, basis=basis),
        threshold_source=threshold_source, basis=basis,
        transcript_sessions=data.transcript_sessions(store, parsed, tz), shape=shape,
        timezone=tz)


def finish(ctx: ReportContext) -> None:
    """The notebook's last cell: the index's figures, then close the report's connection.

    A run by ``brainlab report weekly`` (a ``run_id``) displays the week's figures for
    ``summary.json`` (:mod:`brainlab.report.summary`; the page leaves them out); then the
    connection closes, so an ingest may write again, and the chart process ends.
    """
    from brainlab.report import summary

    try:
        if ctx.run_id:
            summary.show(summary.figures(ctx.db, ctx.week, ctx.thresholds, ctx.basis,
                                         current=ctx.figures, tz=ctx.timezone))
    finally:
        once.close(ctx.db)
        close_charts()


def close_charts() -> None:
    """End the chart process and reap it (its CPU counts as this process's children's).

    The report kernel is killed after its last cell, so the render's end is the last moment
    to wait for it; the next render in this process (``--all``) starts another.
    """
    global _CHARTS
    if _CHARTS is not None:
        _CHARTS.close()
        _CHARTS = None


# --- HTML building blocks (everything dynamic is escaped here) -------------------------------

def esc(value: object) -> str:
    """Escape any value for HTML text or attribute use."""
    return html.escape("" if value is None else str(value), quote=True)


def _fmt(value: object, digits: int = 2) -> str:
    if is_missing(value):
        return MISSING
    if isinstance(value, float):
        return f"{value:,.{digits}f}" if not value.is_integer() else f"{int(value):,}"
    return str(value)


# Top-level folders of a brain checkout and of ~/.claude: a stored path is shown from the last
# of them on, i.e. relative to the brain (or transcripts) root, never the machine's own path.
ROOT_FOLDERS = ("claims", "progression", "metabolism", "agents", "contexts", "handoffs",
                "workspace", "circuits", "projets", "projects")
PATH_COLUMNS = ("source_file", "file", "path", "file_path")


def relative_path(value: object) -> object:
    """``/home/u/brain/claims/x.yml`` -> ``claims/x.yml`` (other values unchanged)."""
    if not isinstance(value, str) or "/" not in value:
        return value
    parts = value.replace("\\", "/").split("/")
    cut = max((i for i, p in enumerate(parts[:-1]) if p in ROOT_FOLDERS), default=None)
    return "/".join(parts[cut:]) if cut is not None else value


SHORT_TOKEN = 24  # identifiers up to this length never wrap
HEADERS = {"first_ts": "first call", "last_ts": "last call", "sess_id": "session",
           "session_id": "session"}
SHORT_IDS = ("session_id",)  # transcript UUIDs, shown by their first characters as git does


def header(name: str) -> str:
    """A column name as a header that wraps between words: ``tokens_this_week`` -> words."""
    if name in HEADERS:
        return HEADERS[name]
    return str(name).replace("_usd", " (USD)").replace("_pct", " %").replace("_", " ")


def _cell(text: str, kind: str, path: bool = False) -> str:
    """One escaped cell; paths may wrap after their slashes, never inside a word."""
    body = esc(text).replace("/", "/<wbr>") if path else esc(text)
    if kind in ("date", "datetime"):  # may wrap between day and time, never inside either
        body = " ".join(f'<span class="nw">{part}</span>' for part in body.split(" "))
    cls = "num" if kind in NUMERIC else ("when" if kind in ("date", "datetime") else "")
    if not cls and len(text) <= SHORT_TOKEN and " " not in text:
        cls = "nw"  # a short identifier (model, agent, sprint) stays on one line
    return f'<td class="{cls}">{body}</td>' if cls else f"<td>{body}</td>"


def table(frame: pd.DataFrame, empty: str = "Nothing to report.") -> str:
    """Any section's DataFrame as an escaped HTML table that reads well and fits the page.

    Cells follow :mod:`brainlab.common.tables` (counts with separators, money in dollars and cents,
    shares as percentages, dates as dates, one missing marker); headers wrap between words;
    paths are relative to the brain root; a table too wide anyway scrolls inside its own box.
    """
    if frame is None or frame.empty:
        return f'<p class="empty">{esc(empty)}</p>'
    columns = []
    for name in frame.columns:
        values = frame[name].tolist()
        if name in PATH_COLUMNS:
            values = [relative_path(v) for v in values]
        if name in SHORT_IDS:
            values = [v[:SHORT_ID] if isinstance(v, str) else v for v in values]
        kind = column_kind(name, values)
        columns.append((name, kind, [format_cell(v, kind) for v in values]))
    paths = [name in PATH_COLUMNS for name, _k, _c in columns]
    head = "".join(f'<th class="{"num" if kind in NUMERIC else ""}">{esc(header(name))}</th>'
                   for name, kind, _cells in columns)
    body = "".join("<tr>" + "".join(_cell(cells[r], kind, path) for (_n, kind, cells), path
                                    in zip(columns, paths, strict=True))
                   + "</tr>" for r in range(len(frame)))
    wide = " wide" if len(columns) >= 10 else ""  # many columns: a smaller font fits them
    return (f'<div class="table-box"><table class="data{wide}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


_CHARTS_READY: threading.Thread | None = None
_CHARTS: ChartProcess | None = None
CHART_PROCESS_ENV = "BRAINLAB_REPORT_CHART_PROCESS"


def _first_chart() -> None:
    import vl_convert

    try:
        vl_convert.vegalite_to_svg(PROBE)  # the chart process's own engine-start spec
    except Exception:  # noqa: BLE001  (a real chart reports any problem of the converter)
        pass


def warm_charts() -> None:
    """Start the chart converter once per process: a :class:`ChartProcess`, else a thread.

    A process's first chart costs ~0.4 CPU-s more than the next ones (the engine starting),
    and vl-convert holds the GIL while it works (docs/report.md §4): in a process of its own
    the start and every conversion leave this process's main thread, which goes on with its
    queries meanwhile (the report kernel starts it in its warm-up). With
    ``BRAINLAB_REPORT_CHART_PROCESS=0``, or when the process cannot start, the engine starts
    in a thread here as before and :func:`figure` converts in this process.
    """
    global _CHARTS, _CHARTS_READY
    if _CHARTS is not None or _CHARTS_READY is not None:
        return
    if os.environ.get(CHART_PROCESS_ENV, "1") != "0":
        try:
            _CHARTS = ChartProcess()
            return
        except OSError:  # no process: the thread below
            pass
    _CHARTS_READY = threading.Thread(target=_first_chart, name="brainlab-charts-warm",
                                     daemon=True)
    _CHARTS_READY.start()


class Figure:
    """A chart's ``<figure>`` while its SVG converts; ``str()`` waits for it (see section)."""

    def __init__(self, name: str, pending: Pending) -> None:
        self.name, self._pending = name, pending

    def __str__(self) -> str:
        return (f'<figure class="chart" data-chart="{esc(self.name)}">'
                f"{self._pending.result()}</figure>")


def figure(ctx: ReportContext, name: str, chart) -> Figure | str:
    """A chart rendered to inline SVG inside a <figure data-chart=name> (escaped by vl-convert).

    With the chart process (:func:`warm_charts`) the SVG converts there while the section
    goes on: a :class:`Figure` that :func:`section` turns into its markup.
    """
    ctx.charts_drawn.append(name)
    if _CHARTS is not None:
        return Figure(name, _CHARTS.submit(charts.spec(chart)))
    if _CHARTS_READY is not None:
        _CHARTS_READY.join()
    return f'<figure class="chart" data-chart="{esc(name)}">{charts.to_svg(chart)}</figure>'


# Issue 44 item 6: the notebook (and its section) that explores each report section further.
# tests/test_report_links.py checks that every notebook and heading named here exists.
FURTHER: dict[str, tuple[str, str]] = {
    "headline": ("05_protocol_tour", "4. Its health score, step by step"),
    "health": ("01_metabolism_trends", "1. Explore with filters"),
    "ratio": ("01_metabolism_trends", "3. The ratio over the whole history"),
    "conserve": ("04_threshold_tuning",
                 "1. Session thresholds, judged on held-out weeks (SPEC §3.3)"),
    "sessions": ("01_metabolism_trends", "2. The weeks at a glance"),
    "agents": ("01_metabolism_trends", "4. Agent cost"),
    "breath": ("02_context_broker_policies", "Breath over sprints"),
    "regulator": ("03_regulator_rules", "3.3 Outcome shares per rule set"),
    "usage": ("01_metabolism_trends", "0. Without metabolism logs"),
    "telemetry": ("06_logged_vs_measured", "1. The audit, filtered"),
    "limits": ("01_metabolism_trends", "0. Without metabolism logs"),
    "audit": ("06_logged_vs_measured", "3. Does the basis change the conclusions?"),
    "compliance": ("07_compliance", "1. By rule"),
    "data-quality": ("05_protocol_tour", "3. The metabolism log"),
}


def further(key: str) -> str:
    """The "explore further" line of a section: its notebook and section, and the glossary."""
    if key not in FURTHER:
        return ""
    notebook, heading = FURTHER[key]
    return (f'<p class="further">Explore further: notebook <code>notebooks/{esc(notebook)}'
            f'.ipynb</code>, section “{esc(heading)}” (<code>brainlab lab</code>); '
            "every name is defined in <code>docs/glossary.md</code>.</p>")


def section(key: str, heading: str, *parts: str | Figure) -> str:
    """Wrap already-escaped parts into one report section (a Figure: its SVG, waited for).

    The section ends with the notebook that explores it further (:data:`FURTHER`).
    """
    body = "\n".join(map(str, parts))
    return (f'<section class="report-section" id="{esc(key)}"><h2>{esc(heading)}</h2>\n'
            f"{body}{further(key)}</section>")


def note(text: str, kind: str = "note") -> str:
    """A short paragraph of plain text (escaped)."""
    return f'<p class="{esc(kind)}">{esc(text)}</p>'


def show(fragment: str) -> str:
    """Display one escaped fragment as the cell's HTML output; return it (for tests)."""
    from IPython.display import HTML, display

    display(HTML(fragment))
    return fragment


# --- sections -------------------------------------------------------------------------------

def title(ctx: ReportContext) -> str:
    """Report title, the week's dates and the thresholds in use."""
    week = ctx.week
    last_day = week.end - timedelta(days=1)
    t = ctx.thresholds
    return show(f'<header class="report-title"><h1>Weekly health — {esc(week.label)}</h1>'
         f'<p class="dates">{esc(week.start.isoformat())} to {esc(last_day.isoformat())}'
         f" · thresholds: {esc(ctx.threshold_source)} · ratio window {esc(t.ratio_window)}"
         f" {esc(t.ratio_window_unit)} · coach at ratio ≤ {esc(t.coach_ratio)}"
         f" · basis: {esc(ctx.basis)}</p></header>")


def headline(ctx: ReportContext) -> str:
    """Headline figures with week-over-week change, and sessions per week.

    A store without metabolism logs gets the week as measured from its transcripts; the
    sections the store has no data for are named here, in one line, with what adds them.
    """
    parts = []
    if ctx.transcripts_only:
        parts.append(note("Measured from Claude Code transcripts: this store holds no"
                          " metabolism log (nor a transcript declaring a brain session type),"
                          " so every figure below comes from the transcripts."))
        parts.append(_measured_headline(ctx))
    elif not ctx.has_sessions:
        also = (f" {ctx.transcript_sessions:,} Claude Code session(s) started this week:"
                " see Claude Code usage below." if ctx.transcript_sessions else "")
        parts.append(f'<p class="no-sessions"><strong>{esc(ctx.no_logs)}</strong> '
                     f"({esc(ctx.week.label)}): no metabolism log is dated in this week."
                     f"{esc(also)}</p>")
    else:
        parts.append(headline_table(ctx))
        parts.append(note(HEADLINE_NOTE))
        parts.append(changes_note(ctx))
    trend = ctx.weekly_trend()
    if not trend.empty:
        parts.append(figure(ctx, "sessions-per-week",
                            charts.sessions_per_week(trend, ctx.marks(prefix="share:"))))
    if ctx.shape is not None and ctx.shape.missing:
        parts.append(note(ctx.shape.not_shown(), "note not-shown"))
    return show(section("headline", "Headline figures", *parts))


HEADLINE_NOTE = (
    "n: sessions; intervals are 95%: a mean's by bootstrap over its sessions, a share's "
    "(k of n sessions) Wilson's, a change of shares Newcombe's, a change of the session "
    "count Poisson's. A change whose interval holds 0 is within noise; otherwise it is "
    "better (green) or worse (red) by the figure's direction (spec/trend_direction.py).")
VERDICT_CLASS = {"better": "better", "worse": "worse", "within noise": "noise", "up": "moved",
                 "down": "moved"}


def _estimate(kind: str, value, n, low, high) -> str:
    """One week's figure as text: a count, k of n with a share's interval, a mean's."""
    if is_missing(value):
        return MISSING
    if kind == "count":
        return f"{int(value):,}"
    if kind == "single":
        return _fmt(float(value))
    if kind == "share":
        if not n:
            return MISSING
        return f"{int(value)} of {int(n)} ({value / n:.0%}, {low:.0%}-{high:.0%})"
    interval = "" if is_missing(low) else f" ({_fmt(float(low))}-{_fmt(float(high))})"
    return f"{_fmt(float(value))}{interval}, n {int(n)}"


def _change(kind: str, row) -> str:
    if is_missing(row.change):
        return MISSING
    arrow = "" if row.change == 0 else ("▲ " if row.change > 0 else "▼ ")
    if kind == "share":
        text = f"{arrow}{row.change:+.0%}"
        interval = f" ({row.change_low:+.0%} to {row.change_high:+.0%})"
    else:
        text = f"{arrow}{_fmt(float(row.change))}"
        interval = ("" if is_missing(row.change_low)
                    else f" ({_fmt(float(row.change_low))} to {_fmt(float(row.change_high))})")
    return f"{text}{interval}" + (f": {row.verdict}" if row.verdict else "")


def headline_table(ctx: ReportContext) -> str:
    """The headline figures, each with its n and interval, and the change's verdict."""
    from brainlab.metrics import week_over_week

    frame = week_over_week.headline(ctx.db, ctx.week, ctx.thresholds, basis=ctx.basis)
    rows = []
    for row in frame.itertuples():
        cls = VERDICT_CLASS.get(row.verdict, "")
        this = _estimate(row.kind, row.this_week, row.this_n, row.this_low, row.this_high)
        previous = _estimate(row.kind, row.previous_week, row.previous_n, row.previous_low,
                             row.previous_high)
        rows.append(f'<tr data-figure="{esc(row.key)}"><th>{esc(row.figure)}</th>'
                    f"<td>{esc(this)}</td><td>{esc(previous)}</td>"
                    f'<td class="change {cls}">{esc(_change(row.kind, row))}</td></tr>')
    return ('<table class="data headline"><thead><tr><th>figure</th>'
            f"<th>{esc(ctx.week.label)}</th><th>{esc(ctx.week.shifted(-1).label)}</th>"
            f'<th>change (95% interval)</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')


def changes_note(ctx: ReportContext) -> str:
    """The change points of the history up to this week's end, newest first (issue 43)."""
    from brainlab.metrics import trends

    lines = trends.since_line(ctx.changes())
    if not lines:
        return note("Change points in the history up to this week (every trend series, "
                    "docs/trends.md): none.", "note changes")
    shown = lines[:8]
    more = f" (and {len(lines) - len(shown)} earlier)" if len(lines) > len(shown) else ""
    return ('<div class="changes"><p class="note">Change points in the history up to this '
            f"week (every trend series, docs/trends.md){esc(more)}:</p><ul>"
            + "".join(f"<li>{esc(line)}</li>" for line in shown) + "</ul></div>")


def _measured_headline(ctx: ReportContext) -> str:
    """The week's measured figures beside the previous week's (escaped table)."""
    frame = measured_week.week_figures(ctx.db, ctx.week, ctx.timezone)
    money = measured_week.FIGURE_NAMES["cost_usd"]

    def cell(figure_name: str, value) -> str:
        if is_missing(value):
            return MISSING
        return f"${value:,.2f}" if figure_name == money else _fmt(float(value), 1)

    rows = "".join(f"<tr><th>{esc(r.figure)}</th><td>{esc(cell(r.figure, r.this_week))}</td>"
                   f"<td>{esc(cell(r.figure, r.previous_week))}</td></tr>"
                   for r in frame.itertuples())
    return ('<table class="data headline"><thead><tr><th>measured</th>'
            f"<th>{esc(ctx.week.label)}</th><th>{esc(ctx.week.shifted(-1).label)}</th>"
            f"</tr></thead><tbody>{rows}</tbody></table>")


def health(ctx: ReportContext) -> str:
    """Health score over time by category (SPEC §3.2)."""
    if ctx.skipped("health"):
        return ""
    frame = health_points(ctx)
    weeks = [ctx.week.shifted(-i).label for i in range(ctx.history_weeks - 1, -1, -1)]
    body = (figure(ctx, "health-by-category",
                   charts.health_by_category(frame, weeks, ctx.marks(prefix="health:")))
            if not frame.empty else note("No scored session in the trend window.", "empty"))
    return show(section("health", "Health score by category", body))


def health_points(ctx: ReportContext) -> pd.DataFrame:
    """Mean health per week and category of the trend window, with n and 95% interval."""
    from brainlab.metrics import trends

    obs = ctx.observations()
    first = ctx.week.shifted(-(ctx.history_weeks - 1)).start
    obs = obs[obs["series"].str.startswith("health:") & (obs["week_start"] >= first)]
    pts = trends.points(obs, "week", ctx.week.first_day)
    pts = pts[pts["n"] > 0]
    return pd.DataFrame({"iso_week": pts["period"], "category": pts["series"].str.removeprefix(
        "health:"), "sessions": pts["n"], "mean_health": pts["value"], "low": pts["low"],
        "high": pts["high"]}).reset_index(drop=True)


def ratio(ctx: ReportContext) -> str:
    """The rolling ratio, the coach-trigger band and the sessions that fired it (SPEC §3.3)."""
    if ctx.skipped("ratio"):
        return ""
    t = ctx.thresholds
    series = data.ratio_series(ctx.db, ctx.week, t, ctx.history_weeks, basis=ctx.basis)
    parts = []
    if series["ratio"].notna().any():
        parts.append(figure(ctx, "rolling-ratio",
                            charts.rolling_ratio(series, t.coach_ratio, t.ratio_watch,
                                                 t.ratio_healthy,
                                                 ctx.marks(("ratio", "coach_triggers")))))
    triggered = series["coach_triggered"].fillna(False).astype(bool)
    fired = series[series["in_week"] & triggered]
    parts.append("<h3>Sessions that fired the coach trigger this week</h3>")
    parts.append(table(fired[["sess_id", "started_at", "category", "ratio_at_boot",
                              "coach_reason"]],
                       empty=ctx.no_logs if not ctx.has_sessions
                       else coach_silence(series[triggered & ~series["in_week"]], ctx)))
    return show(section("ratio", "Rolling ratio and coach trigger", *parts))


def coach_silence(earlier: pd.DataFrame, ctx: ReportContext) -> str:
    """What is true of the coach in a week it did not fire, and of the weeks before it."""
    text = f"The coach did not fire in {ctx.week.label}."
    if earlier.empty:
        return text + f" Nor earlier in the {ctx.history_weeks}-week trend window."
    last = pd.Timestamp(earlier["started_at"].max())
    return (text + f" It fired {len(earlier)} time(s) earlier in the {ctx.history_weeks}-week"
            f" trend window, last on {last:%Y-%m-%d}"
            f" ({Week.of(last.date(), ctx.week.first_day).label}).")


def conserve(ctx: ReportContext) -> str:
    """Conserve-mode signals (SPEC §3.3): inefficient, conserve next, narcissistic ratio."""
    if ctx.skipped("conserve"):
        return ""
    trend = ctx.weekly_trend()
    parts = []
    if not trend.empty:
        parts.append(figure(ctx, "conserve-signals", charts.conserve_signals(trend)))
    week = ctx.week_sessions()
    flagged = week[week[["is_inefficient", "recommend_conserve_next", "is_narcissistic"]]
                   .fillna(False).any(axis=1)]
    parts.append("<h3>This week's sessions with a conserve signal</h3>")
    parts.append(table(flagged[["sess_id", "type", "health_score", "context_peak_pct",
                                "context_at_close", "ratio", "is_inefficient",
                                "recommend_conserve_next", "is_narcissistic"]],
                       empty=ctx.no_logs if not ctx.has_sessions else "No conserve signal."))
    return show(section("conserve", "Conserve signals", *parts))


def sessions(ctx: ReportContext) -> str:
    """Every session of the week with its notes (log text: escaped); measured without logs."""
    if ctx.skipped("sessions"):
        return ""
    if ctx.transcripts_only:
        return show(section("sessions", "Sessions this week (measured from transcripts)",
                            table(measured_week.week_sessions(ctx.db, ctx.week, ctx.timezone),
                                  empty="No Claude Code session started this week.")))
    week = ctx.week_sessions()
    return show(section("sessions", "Sessions this week",
                 table(week[["sess_id", "started_at", "type", "health_score", "ratio_band",
                             "coach_reason", "notes"]], empty=ctx.no_logs)))


def agents(ctx: ReportContext) -> str:
    """Agent cost leaderboard and the always-loaded agents with little use (SPEC §2.5).

    Without metabolism logs: the cost of the main thread and of each subagent type, measured.
    """
    if ctx.skipped("agents"):
        return ""
    if ctx.transcripts_only:
        return show(section("agents", "Agent cost (measured from transcripts)", table(
            measured_week.week_agents(ctx.db, ctx.week, ctx.timezone),
            empty="No Claude Code request.")))
    board = data.agent_leaderboard(ctx.db, ctx.week, ctx.thresholds)
    parts = []
    if not board.empty:
        parts.append(figure(ctx, "agent-cost", charts.agent_cost(board)))
    parts.append(table(board.drop(columns=["is_always_loaded", "is_little_used"]),
                       empty="No session lists its loaded agents."))
    parts.append("<h3>Always loaded, little used</h3>")
    t = ctx.thresholds
    parts.append(note(f"Loaded in at least {t.always_loaded_share:.0%} of sessions and used in "
                      f"fewer than {t.little_use_share:.0%} of its loads (history up to this "
                      "week)."))
    parts.append(table(data.wasted_agents(ctx.db, t, until=ctx.week.end_at), empty="None."))
    return show(section("agents", "Agent cost", *parts))


def breath_table(ctx: ReportContext) -> pd.DataFrame | None:
    """The week's sprints: measured breath (replay of the recorded source maps) beside printed."""
    from brainlab.sim.tuning import breath as tuning_breath

    def replay() -> pd.DataFrame | None:  # store-wide: once for every week of a render
        replayable = data.has_rows(ctx.db, "sprint_agent_inputs")
        sprints = tuning_breath.load(ctx.db) if replayable else None
        return (tuning_breath.sprint_alerts(sprints, ctx.thresholds)
                if sprints is not None else None)

    measured = once.once(ctx.db, f"breath:{ctx.thresholds}", replay)
    return data.sprint_breath(ctx.db, ctx.week, ctx.thresholds, measured)


def breath(ctx: ReportContext) -> str:
    """Breath metrics and alerts of the week's sprints (SPEC §4.4), when sprints exist."""
    if ctx.skipped("breath"):
        return ""
    frame = breath_table(ctx)
    if frame is None:
        return ""  # no sprints table or no sprint rows yet: the section is left out
    alerting = frame[frame["alerts"].fillna("") != ""]
    basis = ("measured: the recorded source maps replayed against the files each agent "
             "referenced; printed_* = what the broker wrote"
             if "context_load" in frame else "as the broker printed them (no replayable sprint)")
    parts = [note(f"{len(frame)} sprint(s) this week, {len(alerting)} with an alert; "
                  f"metrics {basis}. Alerts: overload (context_load > "
                  f"{ctx.thresholds.context_load_max}, or files loaded and none referenced), "
                  f"noise, retention, accumulation (breath_depth rising over "
                  f"{ctx.thresholds.breath_depth_rising_sprints} sprints).")]
    parts.append(table(_breath_cells(frame), empty="No sprint this week."))
    parts += whatif_parts(ctx, "broker")  # issue 41 item 4: the replay's intervals
    return show(section("breath", "Sprints and breath metrics", *parts))


def _breath_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """One column per metric, ``measured / printed`` in one cell, so the table fits the page."""
    from brainlab.common.tables import MISSING, column_kind, format_cell
    from brainlab.metrics.report import BREATH_METRICS

    out = frame.drop(columns=["domain"], errors="ignore")
    for m in BREATH_METRICS:
        printed = out.pop(f"printed_{m}") if f"printed_{m}" in out else None
        if m not in out or printed is None:
            continue
        kind = column_kind(m, out[m].tolist())
        out[m] = [f"{format_cell(a, kind)} / {format_cell(b, kind)}"
                  if not (pd.isna(b) and pd.isna(a)) else MISSING
                  for a, b in zip(out[m], printed, strict=True)]
        out = out.rename(columns={m: f"{m} measured / printed"})
    return out


def whatif_parts(ctx: ReportContext, kind: str) -> list[str]:
    """The what-if of other broker policies or regulator rule sets (report/whatif.py), escaped.

    Nothing when the store holds nothing to replay (no sprint inputs, no circuit journal).
    """
    if not data.has_rows(ctx.db, whatif.NEEDS[kind]):
        return []
    heading, said, frame = whatif.summary(ctx, kind)
    head = f'<h3 class="whatif" data-whatif="{esc(kind)}">{esc(heading)}</h3>'
    if frame is None:
        return [head, note(said, "empty")]
    return [head, note(said), table(frame, empty="Nothing replayed.")]


def regulator(ctx: ReportContext) -> str:
    """Ticket circuit outcomes active this week (SPEC §6.6), when tickets exist."""
    if ctx.skipped("regulator"):
        return ""
    frame = data.ticket_outcomes(ctx.db, ctx.week)
    if frame is None:
        return ""
    parts = []
    if "outcome" in frame and not frame.empty:
        counts = frame["outcome"].fillna("open").value_counts().rename_axis("outcome")
        parts.append(table(counts.reset_index(name="tickets")))
    parts.append(table(frame, empty="No ticket active this week."))
    parts += whatif_parts(ctx, "regulator")  # issue 41 item 4: the replay's intervals
    return show(section("regulator", "Regulator outcomes", *parts))


def usage(ctx: ReportContext) -> str:
    """Claude Code tokens and cost of the week (SPEC §7), when transcripts were ingested."""
    found = data.transcript_usage(ctx.db, ctx.week, ctx.timezone)
    if found is None:
        return ""
    by_day, by_model = found["by_day"], found["by_model"]
    if by_day.empty:
        return show(section("usage", "Claude Code usage",
                            note("No Claude Code request this week.")))
    cost = by_model["cost_usd"].sum()
    previous = found["previous_cost_usd"]
    change = "" if previous is None or pd.isna(previous) else f" (previous week ${previous:,.2f})"
    parts = [note(f"{int(by_model['requests'].sum()):,} API calls, "
                  f"{int(by_day['total_tokens'].sum()):,} tokens, ${cost:,.2f}{change};"
                  f" days of {ctx.timezone}.")]
    unpriced = int(by_model["unpriced_requests"].sum())
    if unpriced:
        parts.append(note(f"{unpriced} request(s) of models without a price: their cost is "
                          "not counted (add the model with --prices).", "warning"))
    parts.append(figure(ctx, "usage-per-day", charts.usage_per_day(by_day, ctx.timezone)))
    parts += _reconciled(ctx)
    parts += ["<h3>By model</h3>", table(by_model),
              "<h3>Costliest sessions</h3>", table(found["sessions"], empty="None.")]
    return show(section("usage", "Claude Code usage", *parts))


def _reconciled(ctx: ReportContext) -> list[str]:
    """The week's cost measured three ways (issue 45): the reconciled figure and the gap."""
    from datetime import timedelta

    from brainlab.metrics.reconcile import reconcile_week

    found = reconcile_week(ctx.db, ctx.week.start_at.date(),
                           (ctx.week.end_at - timedelta(microseconds=1)).date())
    if found is None:
        return []
    text = (f"Reconciled cost ${found['reconciled_cost_usd']:,.2f} against the transcripts'"
            f" ${found['transcript_cost_usd']:,.2f} (gap ${found['gap_usd']:+,.2f});"
            f" {found['compared']:,} of {found['session_days']:,} session-days seen by more than"
            f" one source (transcripts, telemetry, status line), {found['flagged']:,} flagged"
            " (a gap over 1%: `brainlab usage reconcile`); UTC days.")
    parts = ["<h3>Three measures</h3>", note(text, "warning" if found["flagged"] else "note")]
    if found["flagged"]:
        parts.append(table(found["frame"]))
    return parts


def telemetry(ctx: ReportContext) -> str:
    """What Claude Code's telemetry adds (issue 26): waits, tools, retries, compactions, who."""
    from brainlab.metrics.telemetry import telemetry_week

    found = telemetry_week(ctx.db, ctx.week, ctx.timezone)
    if found is None:
        return ""
    activity, who = found["activity"], found["who"]
    parts = []
    if activity.empty:
        parts.append(note("No Claude Code event or span this week."))
    else:
        row = activity.iloc[0]
        parts.append(note(
            f"{int(row.api_requests):,} API calls in telemetry; {int(row.api_errors):,} API"
            f" errors of which {int(row.retries):,} retries; {int(row.tool_results):,} tool runs;"
            f" {int(row.compactions):,} compactions."))
        parts.append(table(activity.drop(columns=["week_start"])))
    parts += ["<h3>Who spent it</h3>", table(who, empty="No call this week.")]
    return show(section("telemetry", "What telemetry adds", *parts))


def limits(ctx: ReportContext) -> str:
    """Rate-limit use over the week (issue 25): the windows the status line saw; "" without any."""
    from brainlab.metrics.limits import limits_frame

    if not data.has_rows(ctx.db, "limit_snapshots"):
        return ""
    frame = limits_frame(ctx.db, since=ctx.week.start_at, until=ctx.week.end_at)
    if frame.empty:
        return show(section("limits", "Rate limits", note(
            "No rate-limit window this week (the status line records them: docs/live.md).")))
    parts = [figure(ctx, "limit-use", charts.limit_use(frame)), table(frame)]
    return show(section("limits", "Rate limits", *parts))


def logged_vs_measured(ctx: ReportContext) -> str:
    """The week's logs audited against their transcripts (issue 13).

    Coverage, disagreements of the week by field, worst offenders; names the command that
    adds the missing side.
    """
    if ctx.skipped("audit"):
        return ""
    found = data.audit_week(ctx.db, ctx.week)
    parts = []
    if not found["logs"] and not found["transcripts"]:
        return ""
    if not found["transcripts"]:
        parts.append(note("No Claude Code transcripts in the store: the logs cannot be audited"
                          " (add them with: brainlab ingest claude PATH --db DB)."))
    elif not found["logs"]:
        parts.append(note("No metabolism logs in the store: every figure of this report is"
                          " measured from transcripts (add logs with: brainlab ingest brain"
                          " PATH --db DB)."))
    else:
        parts += ["<h3>Coverage</h3>", table(found["coverage"], empty="No log this week."),
                  "<h3>Disagreements of the week (beyond tolerance)</h3>",
                  table(found["by_field"], empty="Every audited field within tolerance."),
                  "<h3>Worst offenders</h3>", table(found["worst"], empty="None.")]
    return show(section("audit", "Logged versus measured", *parts))


def hygiene(ctx: ReportContext) -> str:
    """Claims stale at the week's end (SPEC §2.6) and workspace rule violations (SPEC §5)."""
    if ctx.skipped("hygiene"):
        return ""
    return show(section(
        "hygiene", "Workspace and claim hygiene",
        "<h3>Stale claims at the end of the week</h3>",
        table(data.stale_claims(ctx.db, ctx.week), empty="No stale claim."),
        "<h3>Workspace rule violations</h3>",
        table(once.once(ctx.db, "workspace_violations",
                        lambda: data.workspace_violations(ctx.db)), empty="No violation."),
    ))


def compliance(ctx: ReportContext) -> str:
    """Protocol compliance (issue 14): the week's violations by rule, trend, top offenders."""
    from brainlab.metrics import compliance as rules_data

    if ctx.skipped("compliance") or not once.once(
            ctx.db, "has:rule_catalogue", lambda: data.has_rows(ctx.db, "rule_catalogue")):
        return ""  # no brain data, or a database older than the compliance rules
    start = ctx.week.shifted(-(ctx.history_weeks - 1)).start_at
    figures = once.compliance_week(ctx.db, ctx.week.start_at, ctx.week.end_at, start,
                                   ctx.week.first_day)
    week = figures["week"]
    parts = [note(f"{len(week)} violation(s) dated this week "
                  f"({(week['severity'] == 'error').sum() if len(week) else 0} error); "
                  "'current state' counts timeless ones (a workspace's files). "
                  "Lint a checkout with: brainlab check PATH.")]
    if not figures["trend"].empty:
        parts.append(figure(ctx, "violations-per-week",
                            charts.violations_per_week(figures["trend"])))
    parts += ["<h3>By rule</h3>", table(figures["by_rule"], empty="No violation."),
              "<h3>Top offenders this week</h3>",
              table(figures["offenders"], empty="No violation this week."),
              "<h3>Session modes (SPEC §2.7): share and redirections, history up to this"
              " week</h3>",
              table(rules_data.mode_usage(ctx.db, until=ctx.week.end_at),
                    empty="No brain session in the transcripts up to this week."),
              "<h3>Cold-start KPI (SPEC §3.3): the week's last measured boot</h3>",
              table(rules_data.cold_start(ctx.db, ctx.week.start_at, ctx.week.end_at),
                    empty="No measured cold start this week (handoff_level NO with a KPI"
                          " value).")]
    return show(section("compliance", "Protocol compliance", *parts))


def data_quality(ctx: ReportContext) -> str:
    """Ingest errors of the week's files, and the week's incomplete metabolism logs."""
    parts = ["<h3>Ingest errors</h3>",
             table(data.ingest_problems(ctx.db, ctx.week), empty="No ingest error.")]
    if not ctx.skipped("health"):  # a store without logs has no log to be incomplete
        parts += ["<h3>Metabolism logs missing a mandatory field</h3>",
                  table(data.incomplete_logs(ctx.db, ctx.week), empty="None.")]
    return show(section("data-quality", "Data quality", *parts))
