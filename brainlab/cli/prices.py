"""`brainlab prices`: print the dated price table and the models a store holds without a price.

The library half is :mod:`brainlab.metrics.prices_report`; this module parses options and
prints (a table fitted to the terminal through :mod:`brainlab.common.tables`, or JSON / CSV).
"""

from __future__ import annotations

from pathlib import Path

import click

from brainlab.common.errors import BrainlabError
from brainlab.common.paths import DEFAULT_DB


@click.command("prices")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_DB,
              show_default=True, help="Store whose unpriced models to list (if it exists).")
@click.option("--prices", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A TOML price file overriding/adding models (as `ingest claude --prices`).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--csv", "as_csv", is_flag=True, help="Print the price rows as CSV.")
@click.option("--update-base", is_flag=True,
              help="Regenerate brainlab/data/prices_base.toml from the installed, pinned"
                   " genai-prices package (pip install -e '.[prices]'), offline.")
@click.option("--reprice", is_flag=True,
              help="Price every call stored in --db at the current price table (a price"
                   " change otherwise leaves stored calls at the prices of their ingest).")
def prices_cmd(db: Path, prices: Path | None, as_json: bool, as_csv: bool,
               update_base: bool, reprice: bool) -> None:
    """The price table (USD per million tokens), which table priced each model, and the unpriced.

    Which table priced each model the store's calls name, and the models seen without a
    price. The base is genai-prices' data (pinned, shipped as brainlab/data/prices_base.toml);
    brainlab/data/prices.toml and --prices FILE override it model by model.
    """
    from brainlab.common import tables, terminal
    from brainlab.metrics import prices_report as library

    if update_base:
        from brainlab.store.price_base import write_base

        try:
            path, count = write_base()
        except BrainlabError as exc:
            raise click.ClickException(str(exc)) from None
        click.echo(f"wrote {count} price rows to {path}: review the diff, then commit it")
        return
    if reprice:
        from brainlab.store.prices import reprice_store

        try:
            click.echo(reprice_store(db))
        except BrainlabError as exc:
            raise click.ClickException(str(exc)) from None
        return

    try:
        report = library.price_report(db, prices)
    except BrainlabError as exc:
        raise click.ClickException(str(exc)) from None
    if as_csv:
        click.echo(library.as_csv(report), nl=False)
        return
    if as_json:
        click.echo(library.as_json(report))
        return
    names, rows, columns = library.terminal_table(report)
    width = terminal.width()
    text, hidden = tables.render_text(names, rows, width=width, columns=columns)
    if text is None:
        from rich.console import Console

        table, hidden = tables.render(names, rows, width=width, columns=columns)
        Console(width=width, soft_wrap=True).print(table)
    else:
        click.echo(text, nl=False)
    for line in library.footer_lines(report, db, width, hidden):
        click.echo(terminal.fit(line, width))
