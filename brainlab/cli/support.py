"""What every command module shares: the consoles, ``--db``, progress, summaries, errors.

Every command module of the package imports them from here (the package's ``root`` holds
only the ``brainlab`` group and the console script).
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import sys
import time
from pathlib import Path

import click

from brainlab.common.errors import BrainlabError, fatal_message
from brainlab.common.paths import DEFAULT_DB
from brainlab.common.plaintext import visible
from brainlab.common.terminal import LazyConsole

# rich Consoles made on first use: read commands print plain text without importing rich
console = LazyConsole(stderr=True)
out = LazyConsole(soft_wrap=True)


def db_option(default: Path = DEFAULT_DB):
    """The ``--db PATH`` option every command shares."""
    return click.option(
        "--db", "db", type=click.Path(path_type=Path), default=default, show_default=True,
        help="DuckDB database file.",
    )


def progress_bar():
    """The one progress display used by long commands (stderr, so stdout stays clean)."""
    from brainlab.common.terminal import NoProgress, is_terminal

    if not is_terminal(sys.stderr):  # a log or a pipe: no bar, and no blank line it leaves
        return NoProgress()
    from rich import progress as rp

    BarColumn, MofNCompleteColumn, Progress = rp.BarColumn, rp.MofNCompleteColumn, rp.Progress
    TextColumn, TimeElapsedColumn = rp.TextColumn, rp.TimeElapsedColumn

    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), console=console.real(), transient=True,
    )


@contextlib.contextmanager
def late_progress(label: str, after: float = 0.5):
    """Yield a ``progress(*args)`` callback whose bar (and rich) starts only after ``after`` s.

    A quick run (an incremental ingest: a few tenths of a second) prints no bar and never
    imports rich (~20 ms, issue 12); a long one shows the bar from then on.
    ``$BRAINLAB_PROGRESS_AFTER`` (seconds, or ``never``) overrides ``after`` (docs/cli.md).
    """
    after = _progress_after(after)
    started, bar = time.monotonic(), []

    def advance(*_args) -> None:
        if not bar and time.monotonic() - started >= after:
            bar.append(progress_bar())
            bar[0].start()
            bar.append(bar[0].add_task(label, total=None))
        if bar:
            bar[0].advance(bar[1])

    try:
        yield advance
    finally:
        if bar:
            bar[0].stop()


def _progress_after(default: float) -> float:
    """``$BRAINLAB_PROGRESS_AFTER`` as seconds (``never``/``off``: no late bar), else ``default``."""
    value = os.environ.get("BRAINLAB_PROGRESS_AFTER", "").strip().lower()
    if value in ("never", "off", "no"):
        return math.inf
    try:
        return float(value) if value else default
    except ValueError:
        return default


def run_ingest(db: Path, sources, root: Path, label: str, ingest=None):
    """Ingest ``root`` with ``sources`` under a progress bar; print and return the summary.

    ``ingest(db, root, progress)``: the library function to run (default: the generic
    :func:`brainlab.store.ingest.ingest_sources` over ``sources``).
    """
    from brainlab.store.ingest import ingest_sources

    root = Path(root)
    total = sum(len(s.discover(root.resolve())) for s in sources)
    with progress_bar() as bar:
        task = bar.add_task(f"ingest {label}", total=total)
        advance = lambda src, path, status: bar.advance(task)  # noqa: E731
        summary = (ingest(db, root, advance) if ingest
                   else ingest_sources(db, sources, root, advance))
    print_summary(summary, db)
    drain_live_spool(db)
    refresh_trend_changes(db, bool(sum(summary.loaded.values()) + sum(summary.removed.values())))
    return summary


def refresh_trend_changes(db: Path, changed: bool = True) -> None:
    """After an ingest that changed rows, or on a store whose scan is stale: a new scan stored.

    The store's view ``trend_changes`` reads them (issue 43; docs/trends.md); a run that
    changed nothing on a current scan made with the settings' thresholds leaves them as they
    are. ``ingest brain|sprints|circuits`` call it; ``ingest claude`` and ``ingest otel`` do
    not: their incremental runs import neither pandas nor the duckdb package (issue 12), and
    a scan needs both. They leave the scan stale instead (:mod:`brainlab.store.trend_scan`),
    which the next brain ingest rescans here, and ``brainlab trends --refresh`` on demand.
    """
    from brainlab.settings import current
    from brainlab.store import trend_scan

    thresholds = current().thresholds  # a scan made with other thresholds is stale too
    if not changed and not trend_scan.is_stale(db, thresholds):
        return
    from brainlab.metrics.trends import store_changes

    store_changes(db, thresholds)


def drain_live_spool(db: Path, prices=None, root: Path | None = None) -> None:
    """Every ingest takes what the live hooks spooled while the store was busy (issue 25)."""
    from brainlab.live.hook_ingest import configured_prices
    from brainlab.live.spool import drain_db, drained_line

    line = drained_line(drain_db(db, prices or configured_prices(), root))  # settings' prices
    if line:
        click.echo(line)


def print_summary(summary, db: Path) -> None:
    """The sources' table fitted to the terminal, the problems line, the store."""
    from brainlab.store.ingest_text import summary_lines

    for line in summary_lines(summary, db, width=out.width):
        out.print(line, markup=False, highlight=False)


def print_problems(errors: int, warnings: int, db: Path) -> None:
    """Say how many errors (not loaded) and warnings (loaded, flagged) this run recorded."""
    from brainlab.store.ingest_text import problems_line

    if errors or warnings:
        out.print(problems_line(errors, warnings, db), style="yellow", markup=False,
                  highlight=False)


def handle_errors(func=None, *, code: int = 1):
    """Decorator: BrainlabError -> one line on stderr and exit ``code`` (1; ``check``: 2)."""
    if func is None:
        return functools.partial(handle_errors, code=code)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except BrainlabError as exc:
            click.echo(f"Error: {visible(exc)}", err=True)
            sys.exit(code)
        except (Exception, KeyboardInterrupt) as exc:  # Ctrl-C, a full disk: one line too
            fatal = fatal_message(exc)
            if fatal is None:
                raise
            click.echo(f"Error: {visible(fatal[0])}", err=True)
            sys.exit(fatal[1])

    return wrapper
