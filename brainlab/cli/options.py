"""The click options every dated usage command shares: ``--timezone``, ``--start-of-week``, ``--cost-mode``.

Kept apart from the command modules so the report and other dated commands take the same two options with
the same help; the values are checked by :mod:`brainlab.metrics.usage_time`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from collections.abc import Callable


def timezone_options(command: Callable) -> Callable:
    """Add ``--timezone ZONE`` and ``--start-of-week monday|sunday`` to a click command."""
    command = click.option(
        "--start-of-week", "start_of_week", type=click.Choice(["monday", "sunday"]),
        default=None, help="First day of a week (default: monday, ISO 8601).")(command)
    return timezone_option(command)


def timezone_option(command: Callable) -> Callable:
    """Add ``--timezone ZONE`` alone (commands without weeks of their own: lab)."""
    return click.option(
        "--timezone", "timezone", metavar="ZONE", default=None,
        help="IANA time zone of the days, e.g. Europe/Paris or UTC (default: brainlab.toml's"
             " `timezone`, else this machine's zone).")(command)


def cost_mode_option(command: Callable) -> Callable:
    """Add ``--cost-mode calculate|reported|auto`` (ccusage's ``--mode``) to a click command."""
    return click.option(
        "--cost-mode", "cost_mode", type=click.Choice(["calculate", "reported", "auto"]),
        default="calculate", show_default=True,
        help="calculate: from tokens at brainlab's prices, each call at the price table of"
             " its ingest (a later price change rewrites no stored cost until `brainlab"
             " prices --reprice`); reported: each line's own costUSD"
             " (older Claude Code versions; 0 without one); auto: costUSD when the line has"
             " it, else calculated.")(command)



def replay_check_options(backtest: str, changed: str, unit: str, to_metavar: str,
                         to_example: str, json_keys: str) -> Callable[[Callable], Callable]:
    """Add ``--backtest``, ``--change-date DAY``, ``--to`` and ``--json`` to a replay command.

    ``simulate broker`` and ``simulate regulator`` take the same four options (issue 41 items
    5, 6, 8): ``backtest`` says what the back-test compares, ``changed`` what changed on the
    day (policy, rules), ``unit`` what is predicted (weeks, tickets), ``to_metavar`` and
    ``to_example`` what ``--to`` takes, ``json_keys`` the JSON object's keys.
    """
    def add(command: Callable) -> Callable:
        command = click.option(
            "--json", "as_json", is_flag=True,
            help=f"Print one JSON object ({json_keys}).")(command)
        command = click.option(
            "--to", "change_to", default=None, metavar=to_metavar,
            help=f"The {to_example} in force from --change-date.")(command)
        command = click.option(
            "--change-date", "change_date", default=None, metavar="DAY",
            help=f"A day (YYYY-MM-DD) the {changed} changed; with --to, predict the {unit} "
                 f"after from the {unit} before.")(command)
        return click.option("--backtest", is_flag=True,
                            help=f"First replay {backtest}, per figure.")(command)

    return add
