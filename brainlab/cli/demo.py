"""``brainlab synth`` and ``brainlab demo``: the synthetic brain, and the demo built from it."""

from __future__ import annotations

from pathlib import Path

import click

from brainlab.cli.root import main
from brainlab.cli.support import (
    handle_errors,
    out,
)
from brainlab.common.paths import DEMO_DIR


@main.command("synth")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), required=True,
              help="Folder to write the synthetic brain into (emptied first).")
@click.option("--weeks", type=int, default=12, show_default=True, help="Weeks of history.")
@click.option("--seed", type=int, default=7, show_default=True, help="Random seed.")
@click.option("--end", "end_date", default=None,
              help="Last day of the history (YYYY-MM-DD); default: the synth's fixed date.")
@click.option("--plants", default=None, metavar="NAME,...|none|all",
              help="Planted effects to run (docs/synth.md lists them); default: the demo's set.")
@handle_errors
def synth_cmd(out_dir: Path, weeks: int, seed: int, end_date: str | None,
              plants: str | None) -> None:
    """Write a synthetic brain in the real file formats, with documented planted effects."""
    from brainlab.synth import SynthOptions, synthesize

    manifest = synthesize(out_dir, SynthOptions.from_cli(weeks=weeks, seed=seed, end=end_date,
                                                         plants=plants))
    for line in manifest.lines():
        out.print(line)



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
