"""What `brainlab prices` shows (issue 24 rule 7): the dated price table and the unpriced models.

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


@dataclass
class PriceReport:
    """The price rows, the files they came from, and the store's unpriced models."""

    rows: list[tuple]
    files: list[str]
    store: str | None = None  # the store read for unpriced models (None: none exists)
    unpriced: list[tuple] = field(default_factory=list)


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
            report.unpriced += con.execute(  # a known model, on a day no row covers
                "SELECT model || ' (no price on ' || strftime(min(ts), '%Y-%m-%d') || ')',"
                " count(*), CAST(sum(input_tokens + output_tokens + cache_creation_tokens"
                " + cache_read_tokens) AS BIGINT) FROM cc_requests"
                " WHERE cost_usd IS NULL AND model IN (SELECT model FROM cc_model_prices"
                " WHERE priced_as IS NOT NULL) GROUP BY model ORDER BY 2 DESC").fetchall()
    return report

