"""`brainlab prices`: print the dated price table and the models a store holds without a price.

The library half is :mod:`brainlab.metrics.prices_report`; this module parses options and
prints (a table fitted to the terminal through :mod:`brainlab.common.tables`, or JSON / CSV).
"""

from __future__ import annotations

from pathlib import Path

import click

from brainlab.common.errors import BrainlabError
from brainlab.common.paths import DEFAULT_DB

# terminal columns: the source and the file stay in --json / --csv (too wide for 80 columns)
_SHOWN = ("model", "valid_from", "valid_until", "input_usd_mtok", "output_usd_mtok",
          "cache_write_5m_usd_mtok", "cache_write_1h_usd_mtok", "cache_read_usd_mtok",
          "long", "fast_multiplier")


@click.command("prices")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_DB,
              show_default=True, help="Store whose unpriced models to list (if it exists).")
@click.option("--prices", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A TOML price file overriding/adding models (as `ingest claude --prices`).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--csv", "as_csv", is_flag=True, help="Print the price rows as CSV.")
def prices_cmd(db: Path, prices: Path | None, as_json: bool, as_csv: bool) -> None:
    """The price table (USD per million tokens, dated rows) and the unpriced models seen."""
    from brainlab.common import tables, terminal
    from brainlab.metrics.prices_report import COLUMNS, UNPRICED_COLUMNS, price_report

    try:
        report = price_report(db, prices)
    except BrainlabError as exc:
        raise click.ClickException(str(exc)) from None
    if as_csv:
        click.echo(tables.to_csv(COLUMNS, report.rows), nl=False)
        return
    if as_json:
        import json

        click.echo(json.dumps({
            "files": report.files, "prices": json.loads(tables.to_json(COLUMNS, report.rows)),
            "store": report.store,
            "unpriced": json.loads(tables.to_json(UNPRICED_COLUMNS, report.unpriced))},
            indent=1))
        return
    at = {c: i for i, c in enumerate(COLUMNS)}
    rows = []
    for row in report.rows:
        long = (f">{row[at['long_context_threshold']] // 1000}k"
                f" {row[at['long_input_multiplier']]:g}/{row[at['long_output_multiplier']]:g}"
                if row[at["long_context_threshold"]] else None)
        rows.append(tuple(long if c == "long" else row[at[c]] for c in _SHOWN))
    columns = [tables.Column("model", "model"),
               tables.Column("valid_from", "from"), tables.Column("valid_until", "until"),
               tables.Column("input_usd_mtok", "input", kind="float"),
               tables.Column("output_usd_mtok", "output", kind="float"),
               tables.Column("cache_write_5m_usd_mtok", "write 5m", kind="float", drop_rank=4),
               tables.Column("cache_write_1h_usd_mtok", "write 1h", kind="float", drop_rank=4),
               tables.Column("cache_read_usd_mtok", "read", kind="float", drop_rank=4),
               tables.Column("long", "long context", drop_rank=3),
               tables.Column("fast_multiplier", "fast x", kind="float", drop_rank=2)]
    width = terminal.width()
    text, hidden = tables.render_text(list(_SHOWN), rows, width=width, columns=columns)
    if text is None:
        from rich.console import Console

        table, hidden = tables.render(list(_SHOWN), rows, width=width, columns=columns)
        Console(width=width, soft_wrap=True).print(table)
    else:
        click.echo(text, nl=False)
    import textwrap

    click.echo(textwrap.fill(
        f"USD per million tokens; {len(report.rows)} rows from " + " + ".join(report.files)
        + (f" (not shown at {width} columns: {', '.join(hidden)})" if hidden else "")
        + "; sources and dates: --json", width=width, break_on_hyphens=False))
    if report.store is None:
        click.echo(f"No store at {db}: no unpriced models to list.")
    elif report.unpriced:
        click.echo(f"Unpriced models in {report.store} (cost NULL; add them with"
                   " --prices FILE):")
        for model, requests, tokens in report.unpriced:
            click.echo(f"  {model}: {requests:,} calls, {tokens or 0:,} tokens")
    else:
        click.echo(f"Every model in {report.store} has a price.")
