"""``brainlab lab``: JupyterLab on the notebooks, with the store and settings handed to kernels."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from brainlab.cli.options import timezone_options
from brainlab.cli.root import main
from brainlab.cli.support import (
    console,
    handle_errors,
    out,
    run_ingest,
)
from brainlab.common.paths import DEFAULT_DB


@main.command("lab")
@click.option("--db", "db", type=click.Path(path_type=Path), default=None,
              help=f"Database the notebooks read (BRAINLAB_DB)  [default: $BRAINLAB_DB, else the"
                   f" settings' [paths] db, else {DEFAULT_DB}; the demo when none exists]")
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
    from brainlab.settings import child_env, current

    tz, first_day = resolve_time(timezone, start_of_week)
    settings = current()
    store = lab.choose_store(db, demo, configured=settings.db,
                             where=settings.origins.get("db", ""))
    if store.note:
        console.print(store.note, style="bold yellow" if demo else "bold red", markup=False,
                      highlight=False)
    out.print(f"{lab.DB_ENV}={store.db.resolve()}", markup=False, highlight=False)
    out.print(f"{TZ_ENV}={tz}", markup=False, highlight=False)
    out.print(f"{WEEK_ENV}={first_day}", markup=False, highlight=False)
    kernels = settings.with_options(db=store.db.resolve(), timezone=tz, start_of_week=first_day)
    out.print(f"settings: {kernels.summary()}", markup=False, highlight=False)
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
                        env_extra={TZ_ENV: tz, WEEK_ENV: first_day, **child_env(kernels)}))
