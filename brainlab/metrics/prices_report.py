"""What `brainlab prices` shows (issue 24 rule 7): the dated price table and the unpriced models.

The report, and its text, JSON and CSV forms (the command only prints them).

The table is the one the next ``ingest claude`` would store (package file plus the user's
override: :func:`brainlab.store.prices.load_prices`); the unpriced models are those of the
calls already in a store that no price row covers (view ``cc_unpriced_models``), and the
calls priced by no row in force on their day.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from brainlab.store.prices import load_prices

COLUMNS = ["model", "valid_from", "valid_until", "input_usd_mtok", "output_usd_mtok",
           "cache_write_5m_usd_mtok", "cache_write_1h_usd_mtok", "cache_read_usd_mtok",
           "long_context_threshold", "long_input_multiplier", "long_output_multiplier",
           "fast_multiplier", "source", "source_date", "prices_file"]
UNPRICED_COLUMNS = ["model", "requests", "total_tokens"]
SEEN_COLUMNS = ["model", "priced_as", "prices_file", "requests"]
# terminal columns: the source and the file stay in --json / --csv (too wide for 80 columns)
SHOWN = ("model", "valid_from", "valid_until", "input_usd_mtok", "output_usd_mtok",
         "cache_write_5m_usd_mtok", "cache_write_1h_usd_mtok", "cache_read_usd_mtok",
         "long", "fast_multiplier", "table")


@dataclass
class PriceReport:
    """The price rows, the files they came from, and the store's unpriced models."""

    rows: list[tuple]
    files: list[str]
    store: str | None = None  # the store read for unpriced models (None: none exists)
    unpriced: list[tuple] = field(default_factory=list)
    # each model the store's calls name: (model, priced as, the table that priced it, calls)
    seen: list[tuple] = field(default_factory=list)


def price_report(db: str | os.PathLike | None = None,
                 prices: str | os.PathLike | None = None) -> PriceReport:
    """The price table (newest rows of each model first) and, when ``db`` exists, its gaps."""
    rows, files = load_prices(prices)
    ordered = sorted(rows, key=lambda r: (r["model"], -(r["valid_from"].toordinal()
                                                        if r["valid_from"] else 0)))
    report = PriceReport([tuple(r.get(c) for c in COLUMNS) for r in ordered], files)
    if db is not None and Path(db).is_file():
        from brainlab.store import reader

        with reader(db, engine_only=True) as con:
            report.store = str(db)
            report.unpriced = con.execute(
                "SELECT coalesce(model, '(no model)'), requests, total_tokens"
                " FROM cc_unpriced_models ORDER BY requests DESC, 1").fetchall()
            report.seen = con.execute(
                "SELECT coalesce(m.model, '(no model)'), m.priced_as, m.prices_file,"
                " count(c.model) FROM cc_model_prices m LEFT JOIN cc_requests c"
                " ON c.model IS NOT DISTINCT FROM m.model GROUP BY ALL ORDER BY 4 DESC, 1"
                ).fetchall()
            report.unpriced += con.execute(  # a known model, on a day no row covers
                "SELECT model || ' (no price on ' || strftime(min(ts), '%Y-%m-%d') || ')',"
                " count(*), CAST(sum(input_tokens + output_tokens + cache_creation_tokens"
                " + cache_read_tokens) AS BIGINT) FROM cc_requests"
                " WHERE cost_usd IS NULL AND model IN (SELECT model FROM cc_model_prices"
                " WHERE priced_as IS NOT NULL) GROUP BY model ORDER BY 2 DESC").fetchall()
    return report


def as_csv(report: PriceReport) -> str:
    """The price rows as CSV (``brainlab prices --csv``)."""
    from brainlab.common import tables

    return tables.to_csv(COLUMNS, report.rows)


def as_json(report: PriceReport) -> str:
    """The price files, rows, store and unpriced models as JSON (``brainlab prices --json``)."""
    import json

    from brainlab.common import tables

    return json.dumps({
        "files": report.files, "prices": json.loads(tables.to_json(COLUMNS, report.rows)),
        "store": report.store,
        "seen": json.loads(tables.to_json(SEEN_COLUMNS, report.seen)),
        "unpriced": json.loads(tables.to_json(UNPRICED_COLUMNS, report.unpriced))},
        indent=1)


def table_label(prices_file: str | None) -> str:
    """Which table a price row came from, in a word: genai-prices, brainlab or user."""
    text = prices_file or ""
    if text.startswith("genai-prices"):
        return "genai-prices"
    return "brainlab" if text == "brainlab/data/prices.toml" else "user"


def terminal_table(report: PriceReport) -> tuple[list[str], list[tuple], list]:
    """The terminal table: its column names, rows and column formats.

    The columns of :data:`SHOWN`, the long-context terms in one cell (``>200k 2/1.5``).
    """
    from brainlab.common import tables

    at = {c: i for i, c in enumerate(COLUMNS)}
    rows = []
    for row in report.rows:
        long = (f">{row[at['long_context_threshold']] // 1000}k"
                f" {row[at['long_input_multiplier']]:g}/{row[at['long_output_multiplier']]:g}"
                if row[at["long_context_threshold"]] else None)
        rows.append(tuple(long if c == "long" else table_label(row[at["prices_file"]])
                          if c == "table" else row[at[c]] for c in SHOWN))
    columns = [tables.Column("model", "model"),
               tables.Column("valid_from", "from", drop_rank=1),
               tables.Column("valid_until", "until", drop_rank=1),
               tables.Column("input_usd_mtok", "input", kind="float"),
               tables.Column("output_usd_mtok", "output", kind="float"),
               tables.Column("cache_write_5m_usd_mtok", "write 5m", kind="float", drop_rank=4),
               tables.Column("cache_write_1h_usd_mtok", "write 1h", kind="float", drop_rank=4),
               tables.Column("cache_read_usd_mtok", "read", kind="float", drop_rank=4),
               tables.Column("long", "long context", drop_rank=3),
               tables.Column("fast_multiplier", "fast x", kind="float", drop_rank=2),
               tables.Column("table", "table")]
    return list(SHOWN), rows, columns


def footer_lines(report: PriceReport, db: str | os.PathLike, width: int,
                 hidden: list[str]) -> list[str]:
    """What follows the table: units, files, hidden columns, then the store's unpriced models."""
    import textwrap

    lines = [textwrap.fill(
        f"USD per million tokens; {len(report.rows)} rows from " + " + ".join(report.files)
        + (f" (not shown at {width} columns: {', '.join(hidden)})" if hidden else "")
        + "; sources and dates: --json", width=width, break_on_hyphens=False)]
    lines += [f"  {model}: priced as {priced_as} by {prices_file} ({requests:,} calls)"
              for model, priced_as, prices_file, requests in report.seen if priced_as]
    if report.store is None:
        lines.append(f"No store at {db}: no unpriced models to list.")
    elif report.unpriced:
        lines.append(f"Unpriced models in {report.store} (cost NULL; add them with"
                     " --prices FILE):")
        lines += [f"  {model}: {requests:,} calls, {tokens or 0:,} tokens"
                  for model, requests, tokens in report.unpriced]
    else:
        lines.append(f"Every model in {report.store} has a price.")
    return lines
