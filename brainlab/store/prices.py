"""The price table (SPEC §7 Cost, issue 24 rules 6-7): dated rows from prices.toml into cc_prices.

brainlab/data/prices.toml holds ``[[prices]]`` rows: a model, the day its rates took effect
(``valid_from``, none = always) and the day they stopped (``valid_until``, exclusive; none =
still in force), the rates in USD per million tokens, an optional long-context tier and
fast-mode multiplier, and where each fact comes from (``source``, ``source_date``). A call is
priced by the row in force on its UTC day (store/models/staging/cc_model_prices.sql). The user's file
(``--prices FILE`` or ``BRAINLAB_PRICES``) has the same shape, or the older one
(``[models."name"]`` tables: one row valid at every date); its models replace the package's.
"""

from __future__ import annotations

import os
import tomllib
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from brainlab.common.errors import ConfigError
from brainlab.sources.messages import quoted
from brainlab.store import trend_scan

if TYPE_CHECKING:
    import duckdb

PRICES_ENV = "BRAINLAB_PRICES"
PACKAGE_FILE = Path(__file__).parents[1] / "data" / "prices.toml"  # no importlib.resources
BASE_FILE = PACKAGE_FILE.with_name("prices_base.toml")  # generated: store/price_base.py
_REQUIRED = {"input", "output", "cache_write_5m", "cache_read"}


def _day(value, name: str, where: str) -> date | None:
    if value is None or isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise ConfigError(f"{where}: {name} must be a day like 2026-03-13, got {value!r}"
                          ) from None


def _row(name: str, model: str, rates: dict, as_of: date | None) -> dict:
    where = f"{name}: model {model!r}"
    missing = _REQUIRED - set(rates)
    if missing:
        raise ConfigError(f"{where} lacks {sorted(missing)}")
    try:
        row = {
            "model": model, "input_usd_mtok": float(rates["input"]),
            "output_usd_mtok": float(rates["output"]),
            "cache_write_5m_usd_mtok": float(rates["cache_write_5m"]),
            "cache_write_1h_usd_mtok": float(rates.get("cache_write_1h",
                                                       rates["cache_write_5m"])),
            "cache_read_usd_mtok": float(rates["cache_read"]),
            "long_context_threshold": rates.get("long_context_threshold"),
            "long_input_multiplier": rates.get("long_input_multiplier"),
            "long_output_multiplier": rates.get("long_output_multiplier"),
            "fast_multiplier": (float(rates["fast_multiplier"])
                                if rates.get("fast_multiplier") is not None else None),
            "valid_from": _day(rates.get("valid_from"), "valid_from", where),
            "valid_until": _day(rates.get("valid_until"), "valid_until", where),
            "source": rates.get("source"),
            "source_date": _day(rates.get("source_date"), "source_date", where),
            "prices_as_of": as_of, "prices_file": name,
        }
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: a rate is not a number ({exc})") from None
    if row["valid_from"] and row["valid_until"] and row["valid_until"] <= row["valid_from"]:
        raise ConfigError(f"{where}: valid_until {row['valid_until']} is not after valid_from"
                          f" {row['valid_from']}")
    return row


def _check_periods(name: str, rows: list[dict]) -> None:
    """One model's rows must not overlap: a call's day names one row."""
    low, high = date.min, date.max
    by_model: dict[str, list[dict]] = {}
    for row in rows:
        by_model.setdefault(row["model"], []).append(row)
    for model, periods in by_model.items():
        spans = sorted((r["valid_from"] or low, r["valid_until"] or high) for r in periods)
        for (_a, end), (start, _b) in zip(spans, spans[1:], strict=False):
            if start < end:
                raise ConfigError(f"{name}: model {model!r} has two price rows in force on"
                                  f" {start} (give each row valid_from / valid_until days"
                                  " that do not overlap)")


def parse_prices(name: str, text: str) -> list[dict]:
    """The price rows of one TOML file (``[[prices]]`` rows and/or ``[models."x"]`` tables)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{name}: {exc}") from exc
    as_of = _day(data.get("as_of"), "as_of", name)
    rows = []
    for model, rates in (data.get("models") or {}).items():
        if not isinstance(rates, dict):
            raise ConfigError(f"{name}: models.{model} must be a table of rates (a model name"
                              f' with a dot needs quotes: [models."{model}"])')
        inner = next((k for k, v in rates.items() if isinstance(v, dict)), None)
        if inner is not None:  # [models.glm-4.7]: TOML reads model "glm-4" holding table "7"
            raise ConfigError(f"{name}: [models.{model}.{inner}] is read as model {model!r}"
                              f" holding a table {inner!r}: quote a model name holding a dot,"
                              f' [models."{model}.{inner}"]')
        rows.append(_row(name, model, rates, as_of))
    for entry in data.get("prices") or []:
        if not isinstance(entry, dict) or not entry.get("model"):
            raise ConfigError(f"{name}: each [[prices]] row needs a model name")
        rows.append(_row(name, str(entry["model"]), entry, as_of))
    _check_periods(name, rows)
    return rows


def load_prices(user_file: str | os.PathLike | None = None) -> tuple[list[dict], list[str]]:
    """Load price rows: the maintained base, brainlab's table, then the user's file.

    The base is genai-prices' data as shipped (``data/prices_base.toml``,
    :mod:`brainlab.store.price_base`); a model ``data/prices.toml`` prices replaces every row
    of that model in the base, and a model the user's file (argument or env) prices replaces
    both. Each row's ``prices_file`` names the table it came from.
    """
    tables = []
    if BASE_FILE.is_file():
        text = BASE_FILE.read_text(encoding="utf-8")
        base = tomllib.loads(text).get("base") or "brainlab/data/prices_base.toml"
        tables.append((f"{base} (brainlab/data/prices_base.toml)", text))
    tables.append(("brainlab/data/prices.toml", PACKAGE_FILE.read_text(encoding="utf-8")))
    user_file = user_file or os.environ.get(PRICES_ENV)
    if user_file:
        path = Path(user_file)
        try:
            if not path.is_file():
                raise ConfigError(f"price file not found: {quoted(str(path))}")
            tables.append((str(path.resolve()), path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as exc:  # a name too long, a folder, bad bytes
            raise ConfigError(f"price file {quoted(str(path))} cannot be read"
                              f" ({getattr(exc, 'strerror', None) or exc.__class__.__name__})")\
                from None
    merged: dict[str, list[dict]] = {}
    for name, text in tables:
        rows = parse_prices(name, text)
        for model in {r["model"] for r in rows}:
            merged[model] = [r for r in rows if r["model"] == model]
    return [r for rows in merged.values() for r in rows], [name for name, _ in tables]


def _key(row: tuple) -> tuple:
    return tuple((v is None, str(v)) for v in row)


def write_prices(con: duckdb.DuckDBPyConnection, rows: list[dict]) -> bool:
    """Store the price table as its next version when it differs from the last stored one.

    Earlier versions stay (issue 45): a request line names the version in force at its
    ingest (``cc_request_lines.price_version``, the column's default, set here), so a price
    change never rewrites the cost of calls already stored; :func:`reprice` moves them to
    the latest version when the user asks. Lines stored before the first change (NULL) are
    pinned to the version they were priced with; the lines of a model that had no price take
    the new version (a missing price is filled). One transaction; False when unchanged.
    """
    latest = con.execute("SELECT max(price_version) FROM cc_prices").fetchone()[0]
    cursor = con.execute("SELECT * EXCLUDE (price_version) FROM cc_prices"
                         " WHERE price_version IS NOT DISTINCT FROM ?", [latest])
    names = [d[0] for d in cursor.description]
    stored = sorted(cursor.fetchall(), key=_key)
    wanted = sorted((tuple(row.get(n) for n in names) for row in rows), key=_key)
    if stored == wanted and latest is not None:  # the usual run: nothing to write
        return False
    from brainlab.store.columns import insert_columns

    version = (latest or 0) + 1
    con.execute("BEGIN TRANSACTION")
    try:
        trend_scan.inputs_changed(con)  # cost per session moves: the change points are stale
        if latest is None:  # a store without versions (new, or upgraded): the first one
            con.execute("DELETE FROM cc_prices")
        else:  # the calls stored so far keep the version they were priced with ...
            con.execute("UPDATE cc_request_lines SET price_version = ?"
                        " WHERE price_version IS NULL", [latest])
            # ... but a model that had no price gets the new table's: a missing figure is
            # filled, never a given one rewritten
            con.execute("UPDATE cc_request_lines SET price_version = ? WHERE model IS NULL"
                        " OR model IN (SELECT model FROM cc_model_prices WHERE priced_as"
                        " IS NULL)", [version])
        insert_columns(con, "cc_prices", [*names, "price_version"],
                       [*(list(c) for c in zip(*wanted, strict=True)), [version] * len(wanted)])
        con.execute(f"ALTER TABLE cc_request_lines ALTER COLUMN price_version"
                    f" SET DEFAULT {int(version)}")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return True


def reprice(con: duckdb.DuckDBPyConnection) -> tuple[int, int | None]:
    """Price every stored call at the latest price table (the user asked; issue 45).

    Returns (calls moved, the latest version). The caller rebuilds the usage roll-up.
    """
    latest = con.execute("SELECT max(price_version) FROM cc_prices").fetchone()[0]
    if latest is None:
        return 0, None
    moved = con.execute("SELECT count(*) FROM cc_request_lines WHERE price_version"
                        " IS DISTINCT FROM ?", [latest]).fetchone()[0]
    if moved:  # before the costs move (a kill after it leaves the change points stale)
        trend_scan.inputs_changed(con)
    con.execute("UPDATE cc_request_lines SET price_version = ? WHERE price_version"
                " IS DISTINCT FROM ?", [latest, latest])
    con.execute("DELETE FROM cc_prices WHERE price_version IS DISTINCT FROM ?", [latest])
    return moved, latest


def reprice_store(db: str | os.PathLike) -> str:
    """``brainlab prices --reprice``: every stored call at the latest price table.

    The roll-up and measures that sum their cost are rebuilt; returns the line saying what
    was done.
    """
    from brainlab.store import open_writer
    from brainlab.store.measured import refresh_measures
    from brainlab.store.usage_rollup import refresh

    if not Path(db).is_file():
        raise ConfigError(f"no store at {db}: nothing to re-price (run `brainlab ingest"
                          " claude` first, or pass --db PATH)")
    con = open_writer(db)
    try:
        moved, version = reprice(con)
        if moved:
            from brainlab.store.connection import seal_writer

            seal_writer(con)  # the roll-up and measures run the store's views (issue 46)
            refresh(con)
            refresh_measures(con)
    finally:
        con.close()
    if version is None:
        return f"No price table stored in {db} yet: the next `brainlab ingest claude` stores one."
    return (f"{moved:,} stored call line(s) re-priced at price table {version} (the current"
            f" one); earlier tables removed from {db}." if moved else
            f"Every call in {db} is already priced at the current table ({version}).")
