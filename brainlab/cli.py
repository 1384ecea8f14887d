"""The ``brainlab`` command: parse arguments, call the library, print with progress.

Every command turns a :class:`~brainlab.errors.BrainlabError` into ``Error: ...`` and exit
code 1 (see :func:`main`). Logic lives in the library; a command is a few lines.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if sys.argv[1:2] in (["statusline"], ["hook"]):  # issue 25: live commands start without click
    from brainlab.live.fast import dispatch

    dispatch(sys.argv)  # exits when it handled the command

import click  # noqa: E402

from brainlab import __version__
from brainlab.errors import BrainlabError, ConfigError
from brainlab.paths import CONFIG_ENV, DEFAULT_DB, DEFAULT_REPORTS, DEMO_DIR, config_requested
from brainlab.plaintext import visible

if TYPE_CHECKING:
    from brainlab.config import Settings

from brainlab.cli_support import (  # noqa: E402,F401  (the helpers every command uses)
    console,
    db_option,
    drain_live_spool,
    handle_errors,
    late_progress,
    out,
    print_problems,
    print_summary,
    progress_bar,
    run_ingest,
)


@click.group()
@click.version_option(__version__, prog_name="brainlab")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Settings file ([thresholds], [regulator], [paths], timezone);"
                                 " default: $BRAINLAB_CONFIG, else ./brainlab.toml when present.")
@click.pass_context
def main(ctx: click.Context, config_path: Path | None) -> None:
    """brainlab: load brain-protocol logs into DuckDB, replay them, report on them."""
    if not config_requested(config_path):  # no settings file: SPEC defaults, nothing imported
        return
    from brainlab.config import load_settings

    try:
        ctx.obj = load_settings(config_path)
    except BrainlabError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(1)
    _apply_settings(ctx, ctx.obj)


def _apply_settings(ctx: click.Context, settings) -> None:
    """Make a settings file the default of every command's --db/--out/--prices/--thresholds.

    Through click's ``default_map`` (an option given on the command line still wins), and
    ``$BRAINLAB_CONFIG`` for the notebooks and reports a command runs in a kernel.
    """
    if settings.source is None:
        return
    os.environ[CONFIG_ENV] = str(Path(settings.source).resolve())
    swaps = {("db", DEFAULT_DB): settings.db, ("out_dir", DEFAULT_REPORTS): settings.reports,
             ("prices", None): settings.prices, ("thresholds_file", None): settings.source}

    def defaults(group: click.Group) -> dict:
        found = {}
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                found[name] = defaults(command)
                continue
            found[name] = {p.name: swaps[(p.name, p.default)] for p in command.params
                           if swaps.get((p.name, p.default)) is not None}
        return found

    ctx.default_map = defaults(ctx.command)


def settings() -> Settings:
    """The settings the group loaded (SPEC defaults outside a command)."""
    from brainlab.config import Settings

    ctx = click.get_current_context(silent=True)
    found = ctx.find_object(Settings) if ctx else None
    return found or Settings()


_QUICK_EXIT: list[bool] = []  # set by a command that closed its store and every file


def run() -> None:
    """The console script: :func:`main`; after a command that asked for it, ``os._exit``.

    Tearing the interpreter down (freeing every module and object) cost 15-30 ms of an
    incremental ``ingest claude`` (0.15-0.4 s, issue 12); that command closes its store
    first, so once its output is flushed nothing is left to clean up.
    """
    try:
        main()
    except SystemExit as exc:
        if not _QUICK_EXIT or exc.code not in (None, 0):
            raise
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:  # a closed pipe: let Python report it as usual
            raise exc from None
        os._exit(0)
    except Exception as exc:  # a bug no command foresaw: still one line, never a traceback
        if os.environ.get("BRAINLAB_DEBUG"):
            raise
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        click.echo(f"Error: unexpected {type(exc).__name__}: {visible(first)}. This is a brainlab"
                   " bug: run the command again with BRAINLAB_DEBUG=1 and report the traceback",
                   err=True)
        sys.exit(70)


@main.group()
def ingest() -> None:
    """Load files into the database (the only commands that write)."""


@ingest.result_callback()
def _ingest_done(*_args, **_kwargs) -> None:
    from brainlab.store import upgrade  # the store was upgraded to this schema (issue 24)

    while upgrade.DONE:
        click.echo(upgrade.DONE.pop(0).line())


@ingest.command("brain")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@db_option()
@handle_errors
def ingest_brain(path: Path, db: Path) -> None:
    """Ingest a brain checkout: metabolism logs, agents, contexts, claims, handoffs, workspaces."""
    from brainlab.sources import brain_sources
    from brainlab.store.ingest import ingest_brain as ingest_brain_files
    from brainlab.store.ingest import require_brain

    require_brain(path)  # fails before the progress bar and the db
    run_ingest(db, brain_sources(), path, "brain", ingest=ingest_brain_files)


@ingest.command("sprints")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@db_option()
@handle_errors
def ingest_sprints(path: Path, db: Path) -> None:
    """Ingest sprints: a JSONL sprint record, a broker output .md, a contract, or a brain folder."""
    from brainlab.errors import SourceError
    from brainlab.sources.sprints import nothing_found, sources_for

    sources = sources_for(path)
    if not any(s.discover(path.resolve()) for s in sources):  # fail before touching the db
        raise SourceError(nothing_found(path))
    run_ingest(db, sources, path, "sprints")


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
    from brainlab.config import parse_overrides
    from brainlab.sim import broker

    kwargs = {} if default_bytes is None else {"default_bytes": default_bytes}
    sprints = broker.load_sprints(db, project=project, **kwargs)
    result = broker.replay(
        sprints, list(policies) or list(broker.DEFAULT_POLICIES),
        miss_overhead_tokens=broker.DEFAULT_MISS_OVERHEAD_TOKENS if miss_overhead is None
        else miss_overhead,
        thresholds=settings().thresholds.replace(**parse_overrides(list(thresholds))))
    click.echo(broker.format_summary(result, width=out.width))
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
@click.option("--limit", type=int, default=50, show_default=True,
              help="Show at most this many problems.")
@handle_errors
def errors_cmd(db: Path, limit: int) -> None:
    """List the problems recorded by ingest (file, line, reason)."""
    from brainlab.store import rows

    _names, found = rows(db, "SELECT file, line, severity, reason FROM ingest_errors "
                             "ORDER BY file, line NULLS FIRST LIMIT ?", [limit])
    if not found:
        click.echo("No ingest errors or warnings recorded.")
        return
    for file, line, severity, reason in found:
        where = file if line is None else f"{file}:{int(line)}"
        click.echo(f"{visible(where)}: {severity}: {visible(reason)}")
    _names, ((errors, warnings),) = rows(db, "SELECT count(*) FILTER (WHERE severity = 'error'),"
                                             " count(*) FILTER (WHERE severity <> 'error')"
                                             " FROM ingest_errors")
    click.echo(f"{errors} error(s) (rows not loaded), {warnings} warning(s) (loaded, flagged)"
               + (f"; first {limit} shown" if errors + warnings > limit else ""))


@main.command("sql")
@click.argument("statement")
@db_option()
@handle_errors
def sql_cmd(statement: str, db: Path) -> None:
    """Run one read-only SQL statement and print the result."""
    from brainlab import tables
    from brainlab.store.sql import run_sql

    names, rows, empty = run_sql(db, statement)
    if not rows:
        click.echo(empty)
        return
    text, _hidden = tables.render_text(names, rows, width=out.width, bold=out.styled)
    if text is None:  # cells to wrap, or too wide: rich lays it out
        text, _hidden = tables.render(names, rows, width=out.width, records_if_too_wide=True)
        out.print(text)
    else:
        click.echo(text, nl=False)
    click.echo(f"{len(rows):,} row(s)")


@main.command("demo")
@click.option("--dir", "demo_dir", type=click.Path(path_type=Path), default=DEMO_DIR,
              show_default=True, help="Where the demo brain and its database go.")
@click.option("--weeks", type=int, default=12, show_default=True,
              help="Weeks of synthetic history.")
@click.option("--seed", type=int, default=7, show_default=True, help="Random seed.")
@handle_errors
def demo_cmd(demo_dir: Path, weeks: int, seed: int) -> None:
    """Synthesize a brain, ingest it, and print a short health summary."""
    from brainlab.demo import run_demo

    run_demo(demo_dir, weeks=weeks, seed=seed, console=out)


# --- regulator replay (issue 5): ingest circuits, simulate regulator -------------------------
@ingest.command("circuits")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@db_option()
@handle_errors
def ingest_circuits(path: Path, db: Path) -> None:
    """Ingest ticket circuit journals (SPEC §6.7): PATH/circuits/**/*.jsonl, or PATH/**/*.jsonl."""
    from brainlab.errors import SourceError
    from brainlab.sources.circuits import CircuitsSource

    if not CircuitsSource().discover(path.resolve()):  # fail before touching the db
        raise SourceError(CircuitsSource.nothing_found(path))
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
    from brainlab.spec.regulator import named_rule_sets

    rule_sets = named_rule_sets(list(rules), base=settings().rules)
    result = replay(load_journals(db), rule_sets, draws=draws, seed=seed)
    click.echo(format_summary(result))
    if out_file:
        write_frame(result.summary, out_file)
        out.print(f"wrote {out_file}")
    if per_ticket:
        write_frame(result.per_ticket[["ticket", "rules", "outcome", "wakeups", "sessions",
                                       "tokens", "loop_sessions", "continued"]], per_ticket,
                    "--per-ticket")
        out.print(f"wrote {per_ticket}")


from brainlab.cli_options import timezone_options  # noqa: E402  (lab's, report's, usage's)


@main.command("lab")
@click.option("--db", "db", type=click.Path(path_type=Path), default=None,
              help=f"Database the notebooks read (BRAINLAB_DB)  [default: $BRAINLAB_DB, else "
                   f"{DEFAULT_DB}; the demo when neither exists]")
@click.option("--demo", is_flag=True, help="Open the demo store (built first when missing).")
@click.option("--dir", "notebook_dir", type=click.Path(path_type=Path), default=None,
              help="The tracked notebooks the copies are made from  [default: the package's"
                   " notebooks/]")
@click.option("--work", "work_dir", type=click.Path(path_type=Path),
              default=Path("data/notebooks"), show_default=True,
              help="Your copies of the notebooks, which JupyterLab opens and saves.")
@click.option("--port", type=int, default=None, help="JupyterLab port.")
@click.option("--no-browser", is_flag=True, help="Do not open a browser.")
@click.option("--print-command", is_flag=True,
              help="Print the command and exit (builds and copies nothing).")
@timezone_options
@handle_errors
def lab_cmd(db: Path | None, demo: bool, notebook_dir: Path | None, work_dir: Path,
            port: int | None, no_browser: bool, print_command: bool,
            timezone: str | None, start_of_week: str | None) -> None:
    """Open JupyterLab on your copies of the notebooks with your store (or --db, --demo)."""
    from brainlab import lab
    from brainlab.metrics.usage_time import TZ_ENV, WEEK_ENV, resolve_time

    tz, first_day = resolve_time(timezone, start_of_week)

    store = lab.choose_store(db, demo)
    if store.note:
        console.print(store.note, style="bold yellow" if demo else "bold red", markup=False,
                      highlight=False)
    out.print(f"{lab.DB_ENV}={store.db.resolve()}", markup=False, highlight=False)
    out.print(f"{TZ_ENV}={tz}", markup=False, highlight=False)
    out.print(f"{WEEK_ENV}={first_day}", markup=False, highlight=False)
    command = lab.lab_command(work_dir, store.db, port, open_browser=not no_browser)
    if print_command:
        if store.demo and not store.db.exists():
            console.print(f"{store.db} does not exist yet: `brainlab lab` builds it first",
                          markup=False, highlight=False)
        out.print(" ".join(command), markup=False, highlight=False)
        return
    if store.demo:
        lab.ensure_demo_db(console=out, ingest=run_ingest)
    for line in lab.prepare_notebooks(notebook_dir, work_dir):
        console.print(line, markup=False, highlight=False)
    sys.exit(lab.launch(work_dir, store.db, port, open_browser=not no_browser,
                        env_extra={TZ_ENV: tz, WEEK_ENV: first_day}))


@main.group()
def report() -> None:
    """Render reports (papermill notebooks to self-contained HTML)."""


@report.command("weekly")
@click.option("--week", default=None,
              help="ISO week, e.g. 2026-W48, or any day of the week, e.g. 2026-11-25 (default:"
                   " the latest week holding a session, transcript sessions included).")
@click.option("--all", "all_weeks", is_flag=True, help="Every week from the first session.")
@click.option("--since", default=None, help="Every week from this week (as --week) to the"
              " latest.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=DEFAULT_REPORTS,
              show_default=True, help="Reports folder: <out>/<week>/weekly_health.html.")
@db_option()
@click.option("--thresholds", "thresholds_file", type=click.Path(exists=True, path_type=Path),
              default=None, help="TOML file with a [thresholds] table (default: SPEC values).")
@click.option("--ratio-window", type=int, default=0, help="Rolling ratio window (0: thresholds').")
@click.option("--basis", type=click.Choice(["best", "logged", "measured"]), default="best",
              show_default=True, help="Metabolism from logs, transcripts, or transcripts where "
              "they exist (docs/measured.md).")
@click.option("--history-weeks", type=int, default=12, show_default=True,
              help="Weeks shown in trend charts.")
@click.option("--timeout", type=int, default=120, show_default=True,
              help="Seconds allowed per notebook cell.")
@click.option("--lake", default=None, help="A team lake instead of --db: attached to"
              " <out>/lake.duckdb, with a per-person table (docs/lake.md).")
@click.option("--user", "users", multiple=True, help="With --lake: only this user (repeatable).")
@click.option("--machine", "machines", multiple=True,
              help="With --lake: only this machine (repeatable).")
@timezone_options
@handle_errors
def report_weekly(week, all_weeks, since, out_dir, db, thresholds_file, ratio_window, basis,
                  history_weeks, timeout, lake, users, machines, timezone,
                  start_of_week) -> None:
    """Render the weekly health report of one or more weeks, and the index.

    Weeks are ISO weeks (Monday to Sunday, 2026-W48) unless --start-of-week sunday (named by
    their Sunday, 2026-11-22); a transcript session counts in the week of its first request's
    day in --timezone.
    """
    from brainlab.report.runner import early_kernel

    # The kernel starts first and imports the report's modules on the other core while this
    # process imports its own, checks the store and plans the weeks (docs/report.md §4).
    team = bool(lake or users or machines)  # a team report: the lake attached beside the reports
    with early_kernel() as kernel:
        from brainlab.metrics.usage_time import resolve_time
        from brainlab.report import plan_weeks, render_weeks

        timezone, start_of_week = resolve_time(timezone, start_of_week)

        if team:  # a team report: the lake attached beside the reports
            from brainlab.lake.attach import attach_for_report

            db = attach_for_report(lake, out_dir, users, machines)
        plan = plan_weeks(db, week=week, all_weeks=all_weeks, since=since,
                          first_day=start_of_week, tz=timezone)
        weeks = plan.weeks
        if plan.skipped:
            console.print(f"skipped {len(plan.skipped)} empty week(s) (no session): "
                          f"{plan.skipped[0]}..{plan.skipped[-1]}", markup=False,
                          highlight=False)
        with progress_bar() as bar:
            task = bar.add_task("report weekly", total=len(weeks))
            render_weeks(db, weeks, out_dir, on_done=lambda label, path: (
                bar.advance(task), out.print(str(path), markup=False, highlight=False)),
                kernel=kernel, thresholds_file=thresholds_file, ratio_window=ratio_window,
                basis=basis, history_weeks=history_weeks, timeout=timeout, timezone=timezone,
                start_of_week=start_of_week)
    out.print(f"index: {out_dir / 'index.html'}", markup=False, highlight=False)


# --- Claude Code transcripts (SPEC §7) -------------------------------------------------------
from brainlab.cli_options import cost_mode_option  # noqa: E402  (ingest claude's and usage's)


@ingest.command("claude")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@db_option()
@click.option("--prices", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A TOML price file overriding/adding models (else $BRAINLAB_PRICES).")
@click.option("--daily", "table", flag_value="daily", default=None,
              help="Then print the daily usage table (as `brainlab usage daily`).")
@click.option("--weekly", "table", flag_value="weekly",
              help="Then print the weekly usage table (as `brainlab usage weekly`).")
@click.option("--prune", is_flag=True,
              help="Remove the rows of transcripts gone from disk (kept by default).")
@cost_mode_option
@handle_errors
def ingest_claude_cmd(path: Path | None, db: Path, prices: Path | None, table: str | None,
                      prune: bool, cost_mode: str) -> None:
    """Ingest Claude Code transcripts (default: every Claude root, as ccusage reads them).

    The roots: each folder of $CLAUDE_CONFIG_DIR (comma-separated), else
    ~/.config/claude/projects and ~/.claude/projects. Reads only new files and the new tail of
    grown files; tokens are deduplicated per API call. Transcripts Claude Code deleted keep
    their rows unless --prune. A progress bar appears once a run passes 0.5 s
    ($BRAINLAB_PROGRESS_AFTER: seconds, or never).
    """
    from brainlab.transcripts.ingest import default_roots, ingest_claude_db

    root = path or default_roots()
    with late_progress("ingest claude") as advance:  # no bar for a quick run
        summary = ingest_claude_db(db, root, prices=prices, progress=advance, prune=prune)
    drain_live_spool(db, prices, root if isinstance(root, Path) else None)
    click.echo(f"claude {summary.read} read, {summary.unchanged} unchanged, {summary.removed}"
               f" removed, {summary.bytes_read / 1e6:.1f} MB, {summary.rows:,} rows,"
               f" {summary.errors} errors, {summary.warnings} warnings")
    if summary.gone_kept:
        click.echo(f"{summary.gone_kept} file(s) gone from disk, their rows kept"
                   f" ({summary.gone} new this run; --prune removes them)")
    if summary.removed:
        click.echo(f"pruned: the rows of {summary.removed} gone file(s) removed"
                   f" ({summary.removed_rows:,} rows)")
    if summary.returned:
        click.echo(f"{summary.returned} gone file(s) found again (not counted twice)")
    if summary.pending_files:
        click.echo(f"{summary.pending_files} file(s) end in an unfinished line, read next run")
    if summary.unpriced_models:  # names come from data: never read as markup
        out.print("no price for model(s): " + ", ".join(map(visible, summary.unpriced_models))
                  + " (cost_usd NULL; add them with --prices FILE)", style="yellow",
                  markup=False, highlight=False)
    if not (summary.read or summary.unchanged or summary.removed or summary.gone_kept):
        shown = root if isinstance(root, Path) else ", ".join(map(str, root))
        click.echo(f"No transcript (*.jsonl) under {shown}: Claude Code writes them as"
                   " <projects>/<project>/<session>.jsonl; give that projects folder"
                   " (default: each $CLAUDE_CONFIG_DIR folder's projects/, else"
                   " ~/.config/claude/projects and ~/.claude/projects).")
    print_problems(summary.errors, summary.warnings, db)
    click.echo(f"database: {db}")  # plain text: rich only for the coloured lines above
    if table:  # one process, as ccusage's one command: the same code as `brainlab usage`
        from brainlab.metrics.usage import usage_table

        print_usage(usage_table(db, table, cost_mode=cost_mode), db)
    _QUICK_EXIT.append(True)  # the store is closed: the console script may skip teardown




@main.command("usage")
@click.argument("by", metavar="[VIEW]", default="daily",
                type=click.Choice(["daily", "weekly", "monthly", "sessions", "models",
                                   "blocks", "projects", "agents", "tickets", "branches",
                                   "tools", "limits"]))
@db_option()
@click.option("--since", metavar="DAY", default=None, help="First day, e.g. 2026-11-01.")
@click.option("--until", metavar="DAY", default=None, help="Last day (inclusive).")
@click.option("--project", default=None, help="One project (the folder name of its cwd).")
@click.option("--limit", type=int, default=None,
              help="Newest N periods or sessions; top N models by cost.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON records instead of a table.")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV instead of a table.")
@timezone_options
@cost_mode_option
@handle_errors
def usage_cmd(by: str, db: Path, since, until, project, limit, as_json: bool,
              as_csv: bool, timezone: str | None, start_of_week: str | None,
              cost_mode: str) -> None:
    """Claude Code tokens and cost by VIEW (default: daily).

    VIEW is daily, weekly, monthly, sessions, models, blocks (5-hour windows), projects,
    agents (subagent types), tickets (sessions in .claude/worktrees/<ticket>), branches (the
    lines' git branch), tools (a call split equally among the tool uses it issued) or limits
    (the 5-hour and 7-day rate-limit windows the status line saw; also `brainlab limits`).
    Days are days of --timezone (default: brainlab.toml's `timezone`, else this machine's zone); cost
    is USD at the prices `ingest claude` used.
    """
    from brainlab import tables
    from brainlab.metrics.usage import usage_table

    if as_json and as_csv:
        raise ConfigError("--json and --csv print different formats: give one of them")
    if by == "limits":  # issue 25: brainlab.metrics.limits, windows named by their reset time
        from brainlab.metrics.limits import limits_output

        if since or until or project or timezone or start_of_week or cost_mode != "calculate":
            raise ConfigError("usage limits takes --limit, --json, --csv and --db only:"
                              " drop the other options")
        click.echo(limits_output(db, limit, "json" if as_json else "csv" if as_csv else "text"),
                   nl=False)
        return
    if by == "blocks" and cost_mode != "calculate":
        raise ConfigError("--cost-mode reported|auto is not available for blocks yet: use"
                          " --cost-mode calculate (the default) with `usage blocks`")
    if by == "blocks":
        from brainlab.metrics.usage_blocks import blocks_table

        found = blocks_table(db, since=since, until=until, project=project, timezone=timezone)
    else:
        found = usage_table(db, by, since=since, until=until, project=project, limit=limit,
                            timezone=timezone, start_of_week=start_of_week,
                            cost_mode=cost_mode)
    if as_json or as_csv:
        click.echo((tables.to_json if as_json else tables.to_csv)(found.columns, found.rows),
                   nl=as_json)
    else:
        print_usage(found, db)
    if found.undated:  # counting rule 4: never a "day: null" row (stderr: JSON stays JSON)
        click.echo(f"{found.undated} call(s) without a timestamp left out of this dated view"
                   " (counted in `usage sessions` and `usage models`; see `brainlab errors`)",
                   err=as_json or as_csv)


def print_usage(found, db: Path) -> None:
    """Print a :class:`~brainlab.metrics.usage.UsageTable` fitted to the terminal, or why empty."""
    from brainlab import tables

    if not found.rows:
        click.echo(found.empty_message(db))
        return
    rows, columns = tables.usage_rows(found.view, found.columns, found.rows), found.columns
    if found.display:  # a view with its own terminal rows (usage blocks)
        columns, rows = found.display
    spec = found.table_columns or tables.USAGE_COLUMNS[found.view]
    text, hidden = tables.render_text(  # the same characters as rich's table, without rich
        columns, rows, width=out.width, columns=spec, totals=True, bold=out.styled)
    if text is not None:
        click.echo(text, nl=False)
    else:
        table, hidden = tables.render(columns, rows, width=out.width, columns=spec, totals=True)
        out.print(table)
    if hidden:  # wrapped at the width, as rich wrapped it
        import textwrap

        click.echo(textwrap.fill(f"(not shown at {out.width} columns: {', '.join(hidden)};"
                                 " see --json or --csv)", width=out.width,
                                 break_long_words=False, break_on_hyphens=False))


@main.command("check")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text",
              show_default=True, help="Output: file:line lines, a JSON list, or SARIF 2.1.0.")
@click.option("--select", default="", metavar="IDS",
              help="Comma-separated rule ids or prefixes to check (default: all).")
@click.option("--ignore", default="", metavar="IDS",
              help="Comma-separated rule ids or prefixes to skip.")
@click.option("--db", "db", type=click.Path(path_type=Path), default=None,
              help="Also read the Claude Code transcripts of this database (read-only).")
@handle_errors(code=2)
def check_cmd(path: Path, fmt: str, select: str, ignore: str, db: Path | None) -> None:
    """Lint a brain checkout against the protocol (SPEC §2-§6).

    Exit 1 on an error or a file that could not be read, 2 on misuse.
    """
    from brainlab.rules.check import check
    from brainlab.rules.formats import render

    result = check(path, select.split(","), ignore.split(","), db=db)
    click.echo(render(result, fmt))
    sys.exit(result.exit_code)


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
    if summary.bad_files:
        click.echo(f"{len(summary.bad_files)} bad lake file(s) skipped: see brainlab errors"
                   f" --db {visible(db)}")


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
@click.option("--prune", is_flag=True,
              help="Remove the rows of transcripts gone from ROOT (kept by default).")
@handle_errors
def spark_ingest_cmd(root: Path, lake: str, master: str, user, machine, prices, prune) -> None:
    """Ingest ROOT/<user>/<machine>/projects/ transcripts into the lake (only what is new)."""
    from brainlab.lake.spark_ingest import ingest_claude_spark, spark_session
    from brainlab.lake.staging import check_scheme

    check_scheme(lake)  # before the JVM starts: a lake pyarrow cannot write is refused
    summary = ingest_claude_spark(lambda: spark_session(master), root, lake, user=user,
                                  machine=machine, prices=prices, prune=prune)
    click.echo(f"claude {summary.read} read, {summary.unchanged} unchanged, {summary.reset}"
               f" reset, {summary.removed} removed, {summary.errors} errors,"
               f" {summary.warnings} warnings;"
               f" {summary.rows.get('cc_request_lines', 0)} request rows in touched partitions")
    for refused in summary.refused:  # a bad user folder costs only its own files
        click.echo(visible(f"{refused.path}: {refused.reason}"))
    if summary.gone > summary.removed:
        click.echo(f"{summary.gone} file(s) gone from ROOT, their rows kept (--prune removes"
                   " them)")


from brainlab.cli_prices import prices_cmd  # noqa: E402

main.add_command(prices_cmd)

# --- OpenTelemetry files (issue 26, brainlab/otel, docs/otel.md) ------------------------------
from brainlab import cli_otel as otel_commands  # noqa: E402

ingest.add_command(otel_commands.ingest_otel_cmd)
main.add_command(otel_commands.usage_check_cmd)
main.add_command(otel_commands.usage_who_cmd)


# --- Claude Code hooks and status line (issue 25, brainlab/live, docs/live.md) ----------------
from brainlab import cli_live as live_commands  # noqa: E402

for _command in (live_commands.hooks_group, live_commands.hook_group,
                 live_commands.statusline_cmd, live_commands.limits_cmd):
    main.add_command(_command)


if __name__ == "__main__":  # pragma: no cover
    run()
