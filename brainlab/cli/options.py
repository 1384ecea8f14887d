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
