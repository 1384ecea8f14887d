"""``brainlab notebooks export``: executed, self-contained HTML copies of the notebooks."""

from __future__ import annotations

from pathlib import Path

import click

from brainlab.cli.root import main
from brainlab.cli.support import console, handle_errors, out, run_ingest
from brainlab.common.paths import DEFAULT_DB


@main.group("notebooks")
def notebooks_group() -> None:
    """The numbered notebooks outside JupyterLab (handouts)."""


@notebooks_group.command("export")
@click.argument("names", nargs=-1)
@click.option("--db", "db", type=click.Path(path_type=Path), default=None,
              help=f"Database the notebooks read  [default: $BRAINLAB_DB, else {DEFAULT_DB};"
                   " the demo when neither exists]")
@click.option("--demo", is_flag=True, help="Run them on the demo store (built first when missing).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path),
              default=Path("reports/notebooks"), show_default=True,
              help="Folder the HTML pages are written to (NN_name.html).")
@click.option("--jobs", type=click.IntRange(1, 8), default=2, show_default=True,
              help="Notebooks executed at once.")
@click.option("--timeout", type=click.IntRange(10), default=600, show_default=True,
              help="Seconds a cell may run.")
@handle_errors
def export_cmd(names: tuple[str, ...], db: Path | None, demo: bool, out_dir: Path, jobs: int,
               timeout: int) -> None:
    """Execute the notebooks (all, or NAMES: 05, 07_compliance ...) and write HTML handouts.

    Each page shows every chart as a picture drawn offline and needs no network; controls
    become a line saying what `brainlab lab` offers there.
    """
    from brainlab import lab
    from brainlab.lab.export import export_notebooks, numbered_notebooks

    folder = lab.tracked_notebooks()
    numbered_notebooks(folder, names)  # an unknown name fails before anything runs
    store = lab.choose_store(db, demo)
    if store.note:
        console.print(store.note, style="bold yellow" if demo else "bold red", markup=False,
                      highlight=False)
    if store.demo:
        lab.ensure_demo_db(console=out, ingest=run_ingest)
    written = export_notebooks(store.db, out_dir, folder, names, jobs=jobs, timeout=timeout,
                               progress=lambda line: out.print(line, markup=False,
                                                               highlight=False))
    out.print(f"{len(written)} page(s) in {out_dir}", markup=False, highlight=False)
