"""The maintained base of the price table: genai-prices' data as ``data/prices_base.toml`` (issue 45).

The ``genai-prices`` package (pydantic's, MIT; dated historical prices, tiers and fast mode)
is the base; ``data/prices.toml`` (brainlab's own rows, each with its source) and the user's
file override it model by model (:func:`brainlab.store.prices.load_prices`). brainlab pins the
package's version (:data:`PINNED`, the ``prices`` extra in pyproject.toml) and never imports
it at run time: ``brainlab prices --update-base`` (this module's :func:`write_base`) turns the
installed package's bundled data, offline, into the TOML file brainlab ships, which ingests
read like any price file. Updating the prices is: raise the pin, ``pip install -e
'.[prices]'``, run the command, review the diff, commit.

What is taken, per model of the providers Claude Code's transcripts name (Anthropic, and
Z.ai's GLM models behind Claude Code): the rates per million tokens (input, output, cache
writes 5 min and 1 h, cache reads), the first long-context tier as brainlab's rule (the
whole request at the tier's rates past its threshold, docs/transcripts.md section 6), a
``speed: fast`` variant as a fast-mode multiplier, and dated prices as ``valid_from`` /
``valid_until`` rows. A model is named by its id and by each name its match clause gives
exactly (``equals``, ``starts_with``), so ``claude-3-5-haiku-20241022`` finds
``claude-3-5-haiku`` by brainlab's rule (exact name, else without ``-YYYYMMDD``). Batch
prices and time-of-day offers are left out: Claude Code makes neither kind of request.
"""

from __future__ import annotations

import importlib.metadata
from decimal import Decimal
from pathlib import Path

from brainlab.common.errors import ConfigError

PACKAGE = "genai-prices"
PINNED = "0.2.3"  # the version data/prices_base.toml was made from (pyproject.toml's extra)
BASE_FILE = Path(__file__).parents[1] / "data" / "prices_base.toml"
PROVIDERS = ("anthropic", "zai")  # Claude Code's models, and GLM models run behind it
_RATES = (("input", "input_mtok"), ("output", "output_mtok"),
          ("cache_write_5m", "cache_write_mtok"), ("cache_write_1h", "cache_write_1h_mtok"),
          ("cache_read", "cache_read_mtok"))


def _base(value) -> Decimal | None:
    """A rate: a number, or a TieredPrices' base (its tiers are read by :func:`_tier`)."""
    if value is None:
        return None
    return getattr(value, "base", value)


def _tier(value):
    """The first tier (start, price) of a TieredPrices, or None."""
    tiers = getattr(value, "tiers", None)
    return (tiers[0].start, tiers[0].price) if tiers else None


def _number(value: Decimal) -> str:
    return format(value.normalize(), "f") if value != value.to_integral() \
        else f"{int(value)}.0"


def _rates(price, fast=None) -> dict[str, str] | None:
    """The TOML fields of one ModelPrice (None when it has no token rates)."""
    rates = {name: _base(getattr(price, attr, None)) for name, attr in _RATES}
    if rates["input"] is None or rates["output"] is None:
        return None
    if rates["cache_write_5m"] is None:  # none published: writes at the input rate
        rates["cache_write_5m"] = rates["input"]
    if rates["cache_write_1h"] is None:
        rates["cache_write_1h"] = rates["cache_write_5m"]
    if rates["cache_read"] is None:
        rates["cache_read"] = rates["input"]
    fields = {name: _number(value) for name, value in rates.items()}
    tier_in, tier_out = _tier(price.input_mtok), _tier(price.output_mtok)
    if tier_in:
        fields["long_context_threshold"] = str(tier_in[0])
        fields["long_input_multiplier"] = _number(tier_in[1] / rates["input"])
        fields["long_output_multiplier"] = _number(
            (tier_out[1] if tier_out else rates["output"]) / rates["output"])
    if fast is not None and _base(fast.input_mtok):
        fields["fast_multiplier"] = _number(_base(fast.input_mtok) / rates["input"])
    return fields


def _names(model) -> list[str]:
    """The model's id and the names its match clause gives exactly (equals, starts_with)."""
    names, stack = [model.id], [model.match]
    while stack:
        clause = stack.pop()
        for attr in ("equals", "starts_with"):
            value = getattr(clause, attr, None)
            if isinstance(value, str):
                names.append(value)
        stack.extend(getattr(clause, "or_", None) or [])
    return list(dict.fromkeys(names))


def _periods(model) -> list[tuple]:
    """(valid_from, valid_until, ModelPrice) of a model's dated prices, oldest first."""
    prices = model.prices
    if not isinstance(prices, list):
        return [(None, None, prices)]
    dated = sorted(((getattr(c.constraint, "start_date", None), c.prices) for c in prices
                    if c.constraint is None or hasattr(c.constraint, "start_date")),
                   key=lambda pair: (pair[0] is not None, pair[0]))
    return [(start, dated[i + 1][0] if i + 1 < len(dated) else None, price)
            for i, (start, price) in enumerate(dated)]


def generate() -> str:
    """The TOML text of the base table, from the installed (pinned) genai-prices package."""
    try:
        version = importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise ConfigError(f"{PACKAGE} is not installed: pip install -e '.[prices]' (it pins"
                          f" {PACKAGE}=={PINNED}), then run the command again") from None
    if version != PINNED:
        raise ConfigError(f"{PACKAGE} {version} is installed but brainlab pins {PINNED}: set"
                          " PINNED in brainlab/store/price_base.py and the [prices] extra in"
                          f" pyproject.toml to {version} first (or pip install"
                          f" {PACKAGE}=={PINNED})")
    from genai_prices import data

    out = [f"# GENERATED by `brainlab prices --update-base` from {PACKAGE} {version} (its",
           "# bundled data, offline): do not edit. brainlab/data/prices.toml and the user's",
           "# file override it model by model (brainlab/store/price_base.py says what is taken).",
           f'\nbase = "{PACKAGE} {version}"\n']
    seen: set[str] = set()
    for provider in data.providers:
        if provider.id not in PROVIDERS:
            continue
        for model in provider.models:
            fast = next((v.prices for v in model.price_variants or ()
                         if v.when == {"speed": "fast"}), None)
            names = [n for n in _names(model) if n not in seen]
            periods = [(start, end, _rates(price, fast)) for start, end, price in
                       _periods(model)]
            if not names or any(rates is None for *_, rates in periods):
                continue
            seen.update(names)
            for name in names:
                for start, end, rates in periods:
                    out.append("[[prices]]")
                    out.append(f'model = "{name}"')
                    if start:
                        out.append(f"valid_from = {start.isoformat()}")
                    if end:
                        out.append(f"valid_until = {end.isoformat()}")
                    out += [f"{key} = {value}" for key, value in rates.items()]
                    out.append(f'source = "{PACKAGE} {version}: {provider.name}, {model.id}"')
                    out.append("")
    return "\n".join(out)


def write_base(path: Path = BASE_FILE) -> tuple[Path, int]:
    """Write :func:`generate`'s table to ``path``; return it and its number of rows."""
    text = generate()
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path, text.count("[[prices]]")
