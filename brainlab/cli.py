"""The ``brainlab`` command: parse arguments, call the library, print with progress.

Every command turns a :class:`~brainlab.errors.BrainlabError` into ``Error: ...`` and exit
code 1 (see :func:`main`). Logic lives in the library; a command is a few lines.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from brainlab import __version__
from brainlab.config import DEFAULT_DB, DEFAULT_REPORTS, DEMO_DIR
from brainlab.errors import BrainlabError

console = Console(stderr=True)
out = Console(soft_wrap=True)


def db_option(default: Path = DEFAULT_DB):
    """The ``--db PATH`` option every command shares."""
    return click.option(
        "--db", "db", type=click.Path(path_type=Path), default=default, show_default=True,
        help="DuckDB database file.",
    )


def progress_bar() -> Progress:
    """The one progress display used by long commands (stderr, so stdout stays clean)."""
    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), console=console, transient=True,
    )


def run_ingest(db: Path, sources, root: Path, label: str):
    """Ingest ``root`` with ``sources`` under a progress bar; print and return the summary."""
    from brainlab.store import ingest as ingest_mod
    from brainlab.store import open_writer

    root = Path(root)
    files = {s.name: s.discover(root.resolve()) for s in sources}
    total = sum(len(v) for v in files.values())
    con = open_writer(db)
    try:
        with progress_bar() as bar:
            task = bar.add_task(f"ingest {label}", total=total)
            summary = ingest_mod.run(
                con, sources, root,
                progress=lambda src, path, status: bar.advance(task),
            )
    finally:
        con.close()
    print_summary(summary, db)
    return summary


def print_summary(summary, db: Path) -> None:
    """One line per source: files loaded / unchanged / removed, rows, errors."""
    names = sorted(set(summary.loaded) | set(summary.unchanged) | set(summary.removed))
    for name in names:
        out.print(
            f"{name:<12} {summary.loaded.get(name, 0):>6} loaded {summary.unchanged.get(name, 0):>6}"
            f" unchanged {summary.removed.get(name, 0):>4} removed"
            f" {summary.rows.get(name, 0):>8} rows {summary.errors.get(name, 0):>5} errors"
        )
    if summary.total_errors:
        out.print(
            f"[yellow]{summary.total_errors} problem(s) recorded in ingest_errors[/yellow]"
            f" (see: brainlab errors --db {db})"
        )
    out.print(f"database: {db}")


def handle_errors(func):
    """Decorator: BrainlabError -> one line on stderr and exit 1."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except BrainlabError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(1)

    return wrapper


@click.group()
@click.version_option(__version__, prog_name="brainlab")
def main() -> None:
    """brainlab: load brain-protocol logs into DuckDB, replay them, report on them."""


@main.group()
def ingest() -> None:
    """Load files into the database (the only commands that write)."""


@ingest.command("brain")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@db_option()
@handle_errors
def ingest_brain(path: Path, db: Path) -> None:
    """Ingest a brain checkout: metabolism logs, agents, contexts, claims, handoffs, workspaces."""
    from brainlab.sources import brain_sources

    run_ingest(db, brain_sources(), path, "brain")


@ingest.command("sprints")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@db_option()
@handle_errors
def ingest_sprints(path: Path, db: Path) -> None:
    """Ingest sprints: a JSONL sprint record, a broker output .md, a contract, or a brain folder."""
    from brainlab.sources.sprints import sources_for

    run_ingest(db, sources_for(path), path, "sprints")


@main.group()
def simulate() -> None:
    """Replay recorded history under other policies, rule sets and thresholds."""


@simulate.command("broker")
@click.option("--policy", "policies", multiple=True, metavar="NAME[:k=v,...]",
              help="A policy to replay (repeatable), e.g. protocol, history:k=3. "
                   "Default: protocol, greedy-domain, on-demand, history, recorded.")
@click.option("--out", "out_file", type=click.Path(path_type=Path), default=None,
              help="Write the per-agent rows here (.csv or .parquet).")
@click.option("--project", default=None, help="Replay one project only.")
@click.option("--miss-overhead", type=float, default=None,
              help="Tokens added per miss (on-demand read turn), default 250.")
@click.option("--default-bytes", type=float, default=None,
              help="Size assumed for files without a recorded size, default 8000.")
@click.option("--threshold", "thresholds", multiple=True, metavar="KEY=VALUE",
              help="Override a breath threshold, e.g. stale_ratio_max=0.4.")
@db_option()
@handle_errors
def simulate_broker(policies, out_file, project, miss_overhead, default_bytes, thresholds,
                    db) -> None:
    """Replay sprints under context-broker policies and compare them side by side (SPEC §4.5)."""
    from brainlab.config import Thresholds, parse_overrides
    from brainlab.sim import broker

    kwargs = {} if default_bytes is None else {"default_bytes": default_bytes}
    sprints = broker.load_sprints(db, project=project, **kwargs)
    result = broker.replay(
        sprints, list(policies) or list(broker.DEFAULT_POLICIES),
        miss_overhead_tokens=broker.DEFAULT_MISS_OVERHEAD_TOKENS if miss_overhead is None
        else miss_overhead,
        thresholds=Thresholds().replace(**parse_overrides(list(thresholds))))
    click.echo(broker.format_summary(result))
    if out_file:
        result.write(out_file)
        out.print(f"wrote {len(result.rows)} rows to {out_file}")


@main.command("synth")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), required=True,
              help="Folder to write the synthetic brain into (emptied first).")
@click.option("--weeks", type=int, default=12, show_default=True, help="Weeks of history.")
@click.option("--seed", type=int, default=7, show_default=True, help="Random seed.")
@click.option("--end", "end_date", default=None,
              help="Last day of the history (YYYY-MM-DD); default: the synth's fixed date.")
@handle_errors
def synth_cmd(out_dir: Path, weeks: int, seed: int, end_date: str | None) -> None:
    """Write a synthetic brain in the real file formats, with documented planted effects."""
    from brainlab.synth import SynthOptions, synthesize

    manifest = synthesize(out_dir, SynthOptions.from_cli(weeks=weeks, seed=seed, end=end_date))
    out.print(f"wrote {manifest.files_written} files to {out_dir}")
    for effect in manifest.planted:
        out.print(f"  planted: {effect['effect']}: {effect['where']}")


@main.command("errors")
@db_option()
@click.option("--limit", type=int, default=50, show_default=True)
@handle_errors
def errors_cmd(db: Path, limit: int) -> None:
    """List the problems recorded by ingest (file, line, reason)."""
    import pandas as pd

    from brainlab.store import query

    frame = query(db, "SELECT file, line, severity, reason FROM ingest_errors "
                      "ORDER BY file, line NULLS FIRST LIMIT ?", [limit])
    if frame.empty:
        out.print("no ingest errors")
        return
    for row in frame.itertuples():
        where = row.file if pd.isna(row.line) else f"{row.file}:{int(row.line)}"
        out.print(f"{where}: {row.severity}: {row.reason}", markup=False, highlight=False)


@main.command("sql")
@click.argument("statement")
@db_option()
@handle_errors
def sql_cmd(statement: str, db: Path) -> None:
    """Run one read-only SQL statement and print the result."""
    from brainlab.store import query

    frame = query(db, statement)
    out.print(frame.to_string(index=False), markup=False, highlight=False)


@main.command("demo")
@click.option("--dir", "demo_dir", type=click.Path(path_type=Path), default=DEMO_DIR,
              show_default=True, help="Where the demo brain and its database go.")
@click.option("--weeks", type=int, default=12, show_default=True)
@click.option("--seed", type=int, default=7, show_default=True)
@handle_errors
def demo_cmd(demo_dir: Path, weeks: int, seed: int) -> None:
    """Synthesize a brain, ingest it, and print a short health summary."""
    from brainlab.demo import run_demo

    run_demo(demo_dir, weeks=weeks, seed=seed, console=out, ingest=run_ingest)


# --- regulator replay (issue 5): ingest circuits, simulate regulator -------------------------
@ingest.command("circuits")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@db_option()
@handle_errors
def ingest_circuits(path: Path, db: Path) -> None:
    """Ingest ticket circuit journals (SPEC §6.7): PATH/circuits/**/*.jsonl, or PATH/**/*.jsonl."""
    from brainlab.sources.circuits import CircuitsSource

    run_ingest(db, [CircuitsSource()], path, "circuits")


@simulate.command("regulator")
@db_option()
@click.option("--rules", "rules", multiple=True, default=("default",), show_default=True,
              help="Rule set: a variant (default, strict, lenient) and/or key=value overrides,"
                   " comma-separated. Repeat to compare several.")
@click.option("--draws", type=int, default=1000, show_default=True, help="Bootstrap draws.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
@click.option("--out", "out_file", type=click.Path(path_type=Path), default=None,
              help="Write one row per rule set (.csv or .parquet).")
@click.option("--per-ticket", "per_ticket", type=click.Path(path_type=Path), default=None,
              help="Write one row per ticket and rule set (.csv or .parquet).")
@handle_errors
def simulate_regulator(db: Path, rules: tuple[str, ...], draws: int, seed: int,
                       out_file: Path | None, per_ticket: Path | None) -> None:
    """Replay ticket circuits under other regulator rules (SPEC §6.5): wake-ups, loops, outcomes."""
    from brainlab.sim.regulator import format_summary, load_journals, replay, write_frame

    result = replay(load_journals(db), list(rules), draws=draws, seed=seed)
    click.echo(format_summary(result))
    if out_file:
        write_frame(result.summary, out_file)
        out.print(f"wrote {out_file}")
    if per_ticket:
        write_frame(result.per_ticket[["ticket", "rules", "outcome", "wakeups", "sessions",
                                       "tokens", "loop_sessions", "continued"]], per_ticket)
        out.print(f"wrote {per_ticket}")


@main.command("lab")
@click.option("--dir", "notebook_dir", type=click.Path(path_type=Path), default=Path("notebooks"),
              show_default=True, help="Notebook folder JupyterLab opens.")
@click.option("--db", "db", type=click.Path(path_type=Path), default=None,
              help="Database the notebooks read (BRAINLAB_DB); default: the demo database, "
                   "built first when missing.")
@click.option("--port", type=int, default=None, help="JupyterLab port.")
@click.option("--no-browser", is_flag=True, help="Do not open a browser.")
@click.option("--print-command", is_flag=True, help="Print the command and exit (no launch).")
@handle_errors
def lab_cmd(notebook_dir: Path, db: Path | None, port: int | None, no_browser: bool,
            print_command: bool) -> None:
    """Open JupyterLab on notebooks/ with the demo database (or --db) ready."""
    from brainlab import lab

    if db is None:
        db = lab.ensure_demo_db(console=out, ingest=run_ingest)
    elif not db.exists():
        raise BrainlabError(f"no database at {db}")
    out.print(f"{lab.DB_ENV}={db.resolve()}")
    command = lab.lab_command(notebook_dir, db, port, open_browser=not no_browser)
    if print_command:
        out.print(" ".join(command), markup=False, highlight=False)
        return
    sys.exit(lab.launch(notebook_dir, db, port, open_browser=not no_browser))


@main.group()
def report() -> None:
    """Render reports (papermill notebooks to self-contained HTML)."""


@report.command("weekly")
@click.option("--week", default=None, help="ISO week, e.g. 2026-W48 (default: the latest).")
@click.option("--all", "all_weeks", is_flag=True, help="Every week from the first session.")
@click.option("--since", default=None, help="Every week from this ISO week to the latest.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=DEFAULT_REPORTS,
              show_default=True, help="Reports folder: <out>/<week>/weekly_health.html.")
@db_option()
@click.option("--thresholds", "thresholds_file", type=click.Path(exists=True, path_type=Path),
              default=None, help="TOML file with a [thresholds] table (default: SPEC values).")
@click.option("--ratio-window", type=int, default=0, help="Rolling ratio window (0: thresholds').")
@click.option("--history-weeks", type=int, default=12, show_default=True,
              help="Weeks shown in trend charts.")
@click.option("--timeout", type=int, default=120, show_default=True,
              help="Seconds allowed per notebook cell.")
@handle_errors
def report_weekly(week, all_weeks, since, out_dir, db, thresholds_file, ratio_window,
                  history_weeks, timeout) -> None:
    """Render the weekly health report of one or more ISO weeks, and the index."""
    from brainlab.report import render_weeks, select_weeks

    weeks = select_weeks(db, week=week, all_weeks=all_weeks, since=since)
    with progress_bar() as bar:
        task = bar.add_task("report weekly", total=len(weeks))
        render_weeks(db, weeks, out_dir, on_done=lambda label, path: (
            bar.advance(task), out.print(str(path), markup=False, highlight=False)),
            thresholds_file=thresholds_file, ratio_window=ratio_window,
            history_weeks=history_weeks, timeout=timeout)
    out.print(f"index: {out_dir / 'index.html'}", markup=False, highlight=False)


# --- Claude Code transcripts (SPEC §7) -------------------------------------------------------
@ingest.command("claude")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@db_option()
@click.option("--prices", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A TOML price file overriding/adding models (else $BRAINLAB_PRICES).")
@handle_errors
def ingest_claude_cmd(path: Path | None, db: Path, prices: Path | None) -> None:
    """Ingest Claude Code transcripts (default: $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects).

    Reads only new files and the new tail of grown files; tokens are deduplicated per API call.
    """
    from brainlab.store import open_writer
    from brainlab.store.claude_ingest import default_root, ingest_claude

    root = path or default_root()
    con = open_writer(db)
    try:
        with progress_bar() as bar:
            task = bar.add_task("ingest claude", total=None)
            summary = ingest_claude(con, root, prices=prices,
                                    progress=lambda p, status: bar.advance(task))
    finally:
        con.close()
    click.echo(f"claude {summary.read} read, {summary.unchanged} unchanged, {summary.removed}"
               f" removed, {summary.bytes_read / 1e6:.1f} MB, {summary.rows} rows,"
               f" {summary.errors} errors")
    if summary.pending_files:
        out.print(f"{summary.pending_files} file(s) end in an unfinished line, read next run")
    if summary.unpriced_models:
        out.print("[yellow]no price for model(s): " + ", ".join(summary.unpriced_models)
                  + "[/yellow] (cost_usd NULL; add them with --prices FILE)")
    if summary.errors:
        out.print(f"[yellow]{summary.errors} problem(s) recorded in ingest_errors[/yellow]"
                  f" (see: brainlab errors --db {db})")
    out.print(f"database: {db}")


@main.command("usage")
@click.argument("by", type=click.Choice(["daily", "weekly", "sessions", "models"]),
                default="daily")
@db_option()
@click.option("--json", "as_json", is_flag=True, help="Print JSON records instead of a table.")
@handle_errors
def usage_cmd(by: str, db: Path, as_json: bool) -> None:
    """Token and cost totals of Claude Code transcripts by UTC day, ISO week, session or model."""
    from brainlab.store import query

    order = {"daily": "day", "weekly": "week_start", "sessions": "first_ts",
             "models": "cost_usd DESC NULLS LAST"}[by]
    frame = query(db, f"SELECT * FROM usage_{by} ORDER BY {order}")
    if as_json:
        click.echo(frame.to_json(orient="records", date_format="iso", indent=1))
    else:
        click.echo(frame.to_string(index=False))


# --- Team scale: the Parquet lake (brainlab/lake, docs/lake.md) -------------------------------
@main.command("export")
@db_option()
@click.option("--lake", required=True, help="Lake folder (created if missing).")
@click.option("--user", default=None, help="Partition user (default: the login name).")
@click.option("--machine", default=None, help="Partition machine (default: the host name).")
@handle_errors
def export_cmd(db: Path, lake: str, user: str | None, machine: str | None) -> None:
    """Write the store's raw tables into a Parquet lake, as USER on MACHINE (idempotent)."""
    from brainlab.lake import export_store

    summary = export_store(db, lake, user=user, machine=machine)
    click.echo(f"exported {sum(summary.rows.values())} rows of {len(summary.rows)} tables as"
               f" user={summary.user} machine={summary.machine} to {summary.lake}")


@main.command("attach")
@click.option("--lake", required=True, help="Lake folder or URI (s3://bucket/lake).")
@db_option()
@click.option("--user", "users", multiple=True, help="Keep only this user (repeatable).")
@click.option("--machine", "machines", multiple=True, help="Keep only this machine (repeatable).")
@handle_errors
def attach_cmd(lake: str, db: Path, users: tuple[str, ...], machines: tuple[str, ...]) -> None:
    """Make DB a store whose raw tables are views over the lake (usage, report run unchanged)."""
    from brainlab.lake import attach_lake

    summary = attach_lake(lake, db, users=users, machines=machines)
    click.echo(f"{len(summary.views)} tables attached from {summary.lake}"
               f" ({len(summary.empty)} without files stay empty); database: {db}")


@main.group()
def spark() -> None:
    """Distributed ingest on Apache Spark (pip install 'brainlab[spark]', Java 17)."""


@spark.command("ingest-claude")
@click.argument("root", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--lake", required=True, help="Lake folder or URI (s3a://bucket/lake).")
@click.option("--master", default="local[2]", show_default=True, help="Spark master URL.")
@click.option("--user", default=None, help="User of a plain projects/ tree (default: login).")
@click.option("--machine", default=None, help="Machine of a plain projects/ tree (default: host).")
@click.option("--prices", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A TOML price file overriding/adding models.")
@handle_errors
def spark_ingest_cmd(root: Path, lake: str, master: str, user, machine, prices) -> None:
    """Ingest ROOT/<user>/<machine>/projects/ transcripts into the lake (only what is new)."""
    from brainlab.lake.spark_ingest import ingest_claude_spark, spark_session

    summary = ingest_claude_spark(spark_session(master), root, lake, user=user,
                                  machine=machine, prices=prices)
    click.echo(f"claude {summary.read} read, {summary.unchanged} unchanged, {summary.reset}"
               f" reset, {summary.removed} removed, {summary.errors} errors;"
               f" {summary.rows.get('cc_request_lines', 0)} request rows in touched partitions")


if __name__ == "__main__":  # pragma: no cover
    main()
