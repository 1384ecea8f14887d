"""``brainlab tune sessions|tickets|breath``: thresholds judged on held-out weeks, applied on request.

Each command calls :mod:`brainlab.sim.tuning` (the same engine notebook 04 shows) and prints
its result: as text, or as one JSON object with ``--json``. ``--write [FILE]`` puts the
recommended values into the settings file (``[thresholds]`` or ``[regulator]``), after
showing the diff; ``--dry-run`` only shows it. docs/tuning.md explains the method.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import click

from brainlab.cli.root import main, settings
from brainlab.cli.support import db_option, handle_errors
from brainlab.common import terminal


@main.group()
def tune() -> None:
    """Tune thresholds on held-out weeks: keep the defaults unless a change clearly beats them."""


def tune_options(budget: float, unit: str):
    """The options every ``tune`` command shares."""
    def decorate(command):
        for option in reversed([
            db_option(),
            click.option("--budget", type=float, default=budget, show_default=True,
                         help=f"Most {unit} per week you are willing to read."),
            click.option("--json", "as_json", is_flag=True,
                         help="Print one JSON object (docs/tuning.md lists its keys)."),
            click.option("--all", "show_all", is_flag=True,
                         help="List every candidate's held-out figures, not only the selected."),
            click.option("--write", "write", is_flag=False, flag_value="", default=None,
                         metavar="[FILE]",
                         help="Write the recommended values into the settings file (the one "
                              "--config / $BRAINLAB_CONFIG / ./brainlab.toml resolves to, or "
                              "FILE), after showing the diff."),
            click.option("--dry-run", is_flag=True,
                         help="With --write: show the diff, change nothing."),
            click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=0,
                         show_default=True,
                         help="Seed of the week bootstrap (and the replay's draws)."),
        ]):
            command = option(command)
        return command
    return decorate


def _finish(result: dict, as_json: bool, show_all: bool, write: str | None,
            dry_run: bool) -> None:
    """Print the result, then apply it when asked."""
    from brainlab.sim.tuning.text import format_result

    if as_json:
        click.echo(json.dumps(result, ensure_ascii=False))
    else:  # fitted to the terminal (80 columns when unknown), cut between words
        click.echo(terminal.fit(format_result(result, show_all), terminal.width()))
    if write is None:
        if dry_run:
            raise click.UsageError("--dry-run goes with --write")
        return
    from brainlab.sim.tuning import apply

    path = apply.settings_file(write or None)
    say = click.echo if not as_json else functools.partial(click.echo, err=True)
    if result["recommended"] is None:
        say(f"nothing written to {path}: the defaults stand ({result['reason']})")
        return
    shown = apply.write_values(path, result["table"], result["recommended"], dry_run=True)
    say(shown.rstrip("\n") if shown else f"{path} already holds these values")
    if dry_run or not shown:
        if dry_run:
            say(f"dry run: {path} not changed")
        return
    apply.write_values(path, result["table"], result["recommended"])
    say(f"wrote [{result['table']}] {', '.join(f'{k} = {v}' for k, v in result['recommended'].items())}"
        f" to {path}")


@tune.command("sessions")
@tune_options(3.0, "session alerts")
@click.option("--alert-on", "alert_on", default=None, metavar="SIGNAL,...",
              help="Signals that make an alert (SPEC §3.3); default: coach_triggered, "
                   "is_inefficient, recommend_conserve_next, is_narcissistic.")
@handle_errors
def tune_sessions(db: Path, budget: float, as_json: bool, show_all: bool, write: str | None,
                  dry_run: bool, seed: int, alert_on: str | None) -> None:
    """Session thresholds (SPEC §3.3) against what followed each session."""
    from brainlab.sim.tuning import sessions

    signals = tuple(s.strip() for s in alert_on.split(",") if s.strip()) if alert_on \
        else sessions.DEFAULT_ALERTS
    result = sessions.tune(db, settings().thresholds, budget, signals, seed=seed)
    _finish(result, as_json, show_all, write, dry_run)


@tune.command("tickets")
@tune_options(5.0, "supervisor wake-ups")
@click.option("--draws", type=click.IntRange(1, 100_000), default=20, show_default=True,
              help="Donor draws per continued ticket in the regulator replay.")
@handle_errors
def tune_tickets(db: Path, budget: float, as_json: bool, show_all: bool, write: str | None,
                 dry_run: bool, seed: int, draws: int) -> None:
    """Regulator limits (SPEC §6.5) on the replay's frontier: integrated, cost, wake-ups."""
    from brainlab.sim.tuning import tickets

    result = tickets.tune(db, settings().rules, budget, draws=draws, seed=seed)
    _finish(result, as_json, show_all, write, dry_run)


@tune.command("breath")
@tune_options(3.0, "sprint alerts")
@click.option("--policy", default="recorded", show_default=True,
              help="Broker policy the sprints are replayed under (SPEC §4.5).")
@handle_errors
def tune_breath(db: Path, budget: float, as_json: bool, show_all: bool, write: str | None,
                dry_run: bool, seed: int, policy: str) -> None:
    """Breath thresholds (SPEC §4.4) against what the project's next sprint read again."""
    from brainlab.sim.tuning import breath

    result = breath.tune(db, settings().thresholds, budget, policy=policy, seed=seed)
    _finish(result, as_json, show_all, write, dry_run)
