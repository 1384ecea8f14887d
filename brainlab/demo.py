"""``brainlab demo``: synthesize a brain, ingest it, print what the metrics found.

The demo brain lives in ``<dir>/brain`` and its database in ``<dir>/brainlab.duckdb``, apart
from the user's own ``data/brainlab.duckdb``.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from brainlab import metrics
from brainlab.common.errors import SimulationError
from brainlab.store import query
from brainlab.synth import SynthOptions, synthesize


def demo_paths(demo_dir: Path) -> tuple[Path, Path]:
    """(brain folder, database file) of a demo folder."""
    return demo_dir / "brain", demo_dir / "brainlab.duckdb"


def run_demo(demo_dir: Path, weeks: int, seed: int, console: Console, ingest=None) -> Path:
    """Generate, ingest, summarise and render the latest week's report; return the database path.

    The brain is ingested by the library's :func:`brainlab.store.ingest.ingest_brain`, its
    summary printed on ``console``. ``ingest(db, sources, root, label)``: an older caller's
    own ingest, used instead when given.
    """
    from brainlab.sources import brain_sources
    from brainlab.store.ingest import ingest_brain
    from brainlab.store.ingest_text import summary_lines

    brain_dir, db = demo_paths(Path(demo_dir))
    options = SynthOptions(weeks=weeks, seed=seed)  # bad options fail before anything is said
    _say(console, f"1/4 synthesize {weeks} weeks (seed {seed}) into {brain_dir}")
    manifest = synthesize(brain_dir, options)
    _say(console, f"    {manifest.files_written:,} files, {len(manifest.sessions):,} sessions")
    _say(console, f"2/4 ingest into {db}")
    if ingest is not None:
        ingest(db, brain_sources(), brain_dir, "brain")
    else:
        for line in summary_lines(ingest_brain(db, brain_dir), db, width=_width(console)):
            console.print(line, markup=False, highlight=False)
    ingest_transcripts(db, brain_dir / "claude", console)
    price_telemetry(db, brain_dir)  # Claude Code's cost_usd, as the store prices the calls
    ingest_telemetry(db, brain_dir / "telemetry", console)  # otel (issue 26)
    store_trend_changes(db)
    _say(console, "3/4 summary")
    print_summary(db, console)
    from brainlab.report import render_weekly

    _say(console, f"4/4 report: latest week into {Path(demo_dir) / 'reports'}")
    report = render_weekly(db, None, Path(demo_dir) / "reports")
    console.print(f"weekly report: {report}", markup=False, highlight=False)
    return db


def build_store(brain_dir: Path, db: Path, weeks: int = 12, seed: int = 7,
                workers: int | None = None, transcripts: bool = True,
                plants: tuple[str, ...] | None = None):
    """Synthesize a brain into ``brain_dir`` and ingest it into ``db``; return the manifest.

    The brain files through :func:`~brainlab.store.ingest.ingest_brain`, then (unless
    ``transcripts`` is false) its Claude Code transcripts, as ``brainlab demo`` does, with
    ``workers`` parse workers; ``plants`` as ``SynthOptions.plants`` (None: the default
    plants). The one way tests and benchmarks build a synthetic store.
    """
    from brainlab.store import open_writer
    from brainlab.store.ingest import ingest_brain
    from brainlab.transcripts.ingest import ingest_claude

    chosen = {} if plants is None else {"plants": plants}
    manifest = synthesize(Path(brain_dir), SynthOptions(weeks=weeks, seed=seed, **chosen))
    ingest_brain(db, brain_dir)
    if transcripts:
        con = open_writer(db)
        try:
            ingest_claude(con, Path(brain_dir) / "claude", workers=workers)
        finally:
            con.close()
    store_trend_changes(db)
    return manifest


def store_trend_changes(db: Path) -> None:
    """Write the change points of every trend series to the store (view trend_changes)."""
    from brainlab.metrics.trends import store_changes
    from brainlab.settings import current

    store_changes(db, current().thresholds)


def ingest_transcripts(db: Path, root: Path, console: Console) -> None:
    """Load the demo's Claude Code transcripts (SPEC §7) and print their usage in one line."""
    from brainlab.store import open_writer
    from brainlab.transcripts.ingest import ingest_claude

    con = open_writer(db)
    try:
        summary = ingest_claude(con, root)
        tokens, cost = con.execute(
            "SELECT max(total_tokens), max(cost_usd) FROM usage_by(grain := 'total')").fetchone()
    finally:
        con.close()
    console.print(f"    transcripts: {summary.read:,} files, {summary.rows:,} rows,"
                  f" {tokens or 0:,} tokens, ${cost or 0:,.2f}")


def price_telemetry(db: Path, brain_dir: Path) -> int:
    """Write each synthetic ``api_request`` event's ``cost_usd`` from the store's prices.

    The synthesis cannot price (it sits below the store), and Claude Code's telemetry always
    carries the cost it computed: with 0 there, ``usage reconcile`` flagged every demo
    session-day on cost. Runs after the transcripts' ingest, before the telemetry's.
    """
    from brainlab.store import query
    from brainlab.synth.telemetry import price_requests

    frame = query(db, "SELECT request_id, sum(cost_usd) AS cost_usd FROM cc_requests"
                      " WHERE request_id IS NOT NULL AND cost_usd IS NOT NULL"
                      " GROUP BY request_id")
    return price_requests(brain_dir, dict(zip(frame.request_id, frame.cost_usd, strict=True)))


def ingest_telemetry(db: Path, root: Path, console: Console) -> None:
    """Load the demo's OpenTelemetry files (issue 26) and say what they added."""
    from brainlab.otel.ingest import discover, ingest_otel
    from brainlab.store import open_writer

    con = open_writer(db)
    try:
        summary = ingest_otel(con, discover([root]))
        only = con.execute("SELECT count(*) FROM cc_requests WHERE source <> 'transcript'"
                           ).fetchone()[0]
    finally:
        con.close()
    console.print(f"    telemetry: {summary.read:,} files,"
                  f" {summary.rows.get('otel_events', 0):,} events, {only:,} calls seen only"
                  " in telemetry")


def print_summary(db: Path, console: Console) -> None:
    """Sessions per category, health trend, signals fired, costliest agents."""
    categories = query(db, "SELECT category, count(*) AS sessions, round(avg(health_score), 2)"
                           " AS mean_health FROM metabolism_sessions GROUP BY category ORDER BY 2 DESC")
    _table(console, "Sessions per category", categories)
    weekly = metrics.weekly_health(db)
    trend = weekly[["iso_week", "sessions", "mean_health", "min_ratio", "coach_triggers"]]
    _table(console, "Health trend by ISO week", trend)
    fired = query(db, """
        SELECT
          (SELECT count(*) FROM session_signals WHERE coach_triggered)        AS coach_triggers,
          (SELECT count(*) FROM session_signals WHERE is_inefficient)         AS inefficient,
          (SELECT count(*) FROM session_signals WHERE recommend_conserve_next) AS conserve_next,
          (SELECT count(*) FROM session_signals WHERE is_narcissistic)        AS narcissistic,
          (SELECT count(*) FROM metabolism_sessions WHERE saturation_flag)               AS saturated,
          (SELECT count(*) FROM stale_claims)                                 AS stale_claims,
          (SELECT count(*) FROM workspace_violations)                         AS workspace_rules,
          (SELECT count(*) FROM ingest_errors WHERE severity = 'error')       AS ingest_errors,
          (SELECT count(*) FROM ingest_errors WHERE severity <> 'error')      AS ingest_warnings
    """)
    _table(console, "Signals fired", fired.T.reset_index().set_axis(
        ["signal", "count"], axis=1))
    agents = metrics.agent_cost(db).head(5)
    agents = agents.assign(
        share=agents.share_of_sessions, tokens=agents.tokens_total.astype("int64"),
        use_share=agents.use_share,
        flag=[", ".join(f for f, on in (("always loaded", a), ("little use", u)) if on)
              for a, u in zip(agents.is_always_loaded, agents.is_little_used, strict=True)])[
        ["agent", "sessions_loaded", "share", "tokens", "use_share", "flag"]].rename(
        columns={"sessions_loaded": "sessions"})
    _table(console, "Costliest agents", agents)
    print_audit_and_compliance(db, console)
    print_what_ifs(db, console)


def print_audit_and_compliance(db: Path, console: Console) -> None:
    """Logs against their transcripts (issue 13) and protocol breaches (issue 14), if any."""
    from brainlab.metrics import audit, compliance

    matches = audit.match_summary(db)
    summary = audit.audit_summary(db)
    if not summary.empty:
        frame = summary[["field", "logs_compared", "share_within_tolerance",
                         "median_relative_report"]].rename(columns={"logs_compared": "logs"})
        _table(console,
            f"Logged versus measured: {matches['matched']} of {matches['logs']} logs matched to"
            f" their transcript, {matches['transcripts_without_log']} transcripts without a log"
            " (docs/measured.md)", frame)
    found = compliance.violations(db)
    if not found.empty:
        frame = (found.groupby(["rule", "rule_name", "severity"], as_index=False).size()
                 .rename(columns={"size": "violations"}))
        _table(console, "Protocol compliance: violations by rule (brainlab check)", frame)


def print_what_ifs(db: Path, console: Console) -> None:
    """The two replays on the demo history: broker policies and a stricter relaunch limit."""
    from brainlab.sim import broker, broker_output, regulator

    sprints = broker.load_sprints(db)
    if sprints.n_rows:
        report, _result = broker_output.broker_report(
            sprints, ["recorded", "protocol", "history", "greedy-domain", "on-demand"],
            draws=200, seed=1, backtest=False, find_change=False)
        frame = broker_output.as_frame(report["policies"])
        frame = frame.assign(
            tokens_total=frame["tokens"].round().astype("int64"),
            miss_rate_90=[f"{lo * 100:.0f}-{hi * 100:.0f}%" for lo, hi in zip(
                frame["miss_rate_low"], frame["miss_rate_high"], strict=True)],
            vs_recorded=["baseline" if p == "recorded" else "differs" if d else
                         "indistinguishable" for p, d in zip(
                             frame["policy"], frame["distinguishable_from_recorded"],
                             strict=True)])
        frame = frame[["policy", "tokens_total", "miss_rate", "miss_rate_90", "vs_recorded"]]
        frame.columns = ["policy", "tokens_total", "miss_rate", "miss_90%", "vs recorded"]
        _table(console, f"What if: broker policies replayed on the {report['replayed']:,} of"
               f" {report['total']:,} sprints the broker runs on, 90% intervals (brainlab"
               " simulate broker)", frame)
    try:
        journals = regulator.load_journals(db)
    except SimulationError:
        return  # no circuit journal: nothing to replay
    if len(journals.tickets):
        result = regulator.replay(journals, ["default", "max_relance_same_stop=2"], draws=200,
                                  seed=1)
        s = result.summary
        frame = s[["rules"]].copy()
        for name in ("wakeups", "sessions"):  # the estimate, then its 90% interval
            frame[name] = s[f"{name}_per_ticket"]
            frame[f"{name}_90%"] = [f"{lo:.2f}-{hi:.2f}" for lo, hi in zip(
                s[f"{name}_per_ticket_lo"], s[f"{name}_per_ticket_hi"], strict=True)]
        _table(console, f"What if: regulator rules replayed on {int(s['tickets'].iloc[0]):,}"
               " tickets, per ticket with 90% intervals (brainlab simulate regulator)", frame)


def _say(console: Console, text: str) -> None:
    """One plain line (paths and data are never rich markup)."""
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def _width(console: Console) -> int:
    """The columns the demo's tables fit into: the console's, at most 120."""
    return min(int(getattr(console, "width", 80) or 80), 120)


def _table(console: Console, title: str, frame) -> None:
    """``title`` (wrapped at the width), then ``frame`` through :func:`brainlab.common.tables.text_table`.

    The one table style of every command (issue 28 item 9): thousands separators, rates as
    percentages, the missing marker, identifiers whole.
    """
    import textwrap

    from brainlab.common import tables

    width = _width(console)
    rows = [tuple(None if v is None or v != v else (v.item() if hasattr(v, "item") else v)
                  for v in row) for row in frame.itertuples(index=False)]
    names = [str(c) for c in frame.columns]
    _say(console, "\n".join(textwrap.wrap(title, width=width, break_long_words=False,
                                          break_on_hyphens=False)))
    from brainlab.sim.broker import SUMMARY_COLUMNS  # `simulate broker`'s own headings

    known = {c.name: c for c in SUMMARY_COLUMNS}
    columns = [known.get(n) or tables.Column(n, n.replace("_90%", " 90%"),
                                             "figure" if n.endswith("_90%") else "")
               for n in names]
    _say(console, tables.text_table(names, rows, width=width, columns=columns,
                                    see="brainlab sql or brainlab lab").rstrip("\n"))
