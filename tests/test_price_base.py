"""The maintained price base (issue 45 item 2): genai-prices, pinned, offline, overridden.

The base table brainlab ships (brainlab/data/prices_base.toml) is what `brainlab prices
--update-base` makes from the pinned genai-prices package's bundled data; brainlab's own
table and the user's file override it model by model; `brainlab prices` says which table
priced each model a store's calls name; an alias without a minor version resolves.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from claude_factory import assistant, usage, write

from brainlab.store import price_base
from brainlab.store.prices import BASE_FILE, load_prices

ROOT = Path(__file__).resolve().parents[1]
S1 = "5d1c2b3a-0000-4000-8000-000000000001"


def brainlab(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "brainlab.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=300, cwd=cwd,
                          env={**os.environ, "COLUMNS": "200", **(env or {})})


def test_the_shipped_base_is_the_pinned_packages_data_and_the_pin_is_one_fact():
    """The base names the pinned version; pyproject's [prices] extra pins the same one;
    regenerating it from the installed package (offline: its bundled data) changes nothing."""
    base = tomllib.loads(BASE_FILE.read_text(encoding="utf-8"))
    assert base["base"] == f"genai-prices {price_base.PINNED}"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert extras["prices"] == [f"genai-prices=={price_base.PINNED}"]
    assert f"genai-prices=={price_base.PINNED}" in (ROOT / "environment.yml").read_text()
    try:
        installed = importlib.metadata.version("genai-prices")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("genai-prices not installed (pip install -e '.[prices]')")
    assert installed == price_base.PINNED
    assert price_base.generate() == BASE_FILE.read_text(encoding="utf-8")


def test_update_base_writes_the_table_and_refuses_another_version(tmp_path, monkeypatch):
    pytest.importorskip("genai_prices")
    path, rows = price_base.write_base(tmp_path / "base.toml")
    assert rows == BASE_FILE.read_text().count("[[prices]]") and rows > 50
    monkeypatch.setattr(price_base, "PINNED", "0.0.1")
    with pytest.raises(Exception, match="brainlab pins 0.0.1"):
        price_base.generate()


def test_brainlabs_table_overrides_the_base_model_by_model():
    """A model data/prices.toml prices takes none of the base's rows (the long-context rule
    and the corpus-checked rates stay brainlab's); the others come from the base."""
    rows, files = load_prices()
    assert files[0].startswith(f"genai-prices {price_base.PINNED}")
    by_model: dict[str, set] = {}
    for row in rows:
        by_model.setdefault(row["model"], set()).add(row["prices_file"])
    assert all(len(tables) == 1 for tables in by_model.values())
    assert by_model["claude-sonnet-4-5"] == {"brainlab/data/prices.toml"}
    assert by_model["claude-fable-5"] == {files[0]}  # only the base prices the alias
    assert "<synthetic>" not in by_model  # no call (issue 45 rule 4)


def test_an_alias_without_a_minor_version_is_priced_and_prices_says_by_which_table(tmp_path):
    """`claude-fable-5` (before: unpriced) is priced by the base; `brainlab prices` names the
    table that priced each model the store's calls name, and lists the unpriced ones."""
    write(tmp_path / "projects" / "-home-u-alpha" / f"{S1}.jsonl", [
        assistant(S1, "2026-11-20T10:00:00.000Z", "m1", "r1", usage(1000, 1000, 0, 10_000),
                  model="claude-fable-5"),
        assistant(S1, "2026-11-20T10:01:00.000Z", "m2", "r2", usage(1, 1),
                  model="claude-opus-4-5-20251101"),
        assistant(S1, "2026-11-20T10:02:00.000Z", "m3", "r3", usage(1, 1),
                  model="claude-mystery-9")])
    db = tmp_path / "b.duckdb"
    assert brainlab("ingest", "claude", tmp_path / "projects", "--db", db,
                    cwd=tmp_path).returncode == 0
    models = {r["model"]: r for r in json.loads(brainlab(
        "usage", "models", "--db", db, "--json", cwd=tmp_path).stdout)}
    assert models["claude-fable-5"]["cost_usd"] == pytest.approx(
        (1000 * 10 + 1000 * 50 + 10_000 * 1.0) / 1e6)  # genai-prices' Fable 5 rates
    report = json.loads(brainlab("prices", "--db", db, "--json", cwd=tmp_path).stdout)
    seen = {r["model"]: (r["priced_as"], r["prices_file"]) for r in report["seen"]}
    assert seen["claude-fable-5"] == ("claude-fable-5", report["files"][0])
    assert seen["claude-opus-4-5-20251101"] == ("claude-opus-4-5", "brainlab/data/prices.toml")
    assert [r["model"] for r in report["unpriced"]] == ["claude-mystery-9"]
    text = brainlab("prices", "--db", db, cwd=tmp_path).stdout
    assert f"claude-fable-5: priced as claude-fable-5 by genai-prices {price_base.PINNED}" \
        in text and "claude-mystery-9: 1 calls" in text


def test_a_price_change_keeps_stored_calls_at_their_price_until_repriced(tmp_path):
    """Issue 45: an ingest with other prices prices its new calls at them; the stored calls
    keep the prices of their ingest (before: every stored cost rewritten silently) until
    `brainlab prices --reprice`."""
    project = tmp_path / "projects" / "-home-u-alpha"
    write(project / f"{S1}.jsonl", [assistant(S1, "2026-11-20T10:00:00.000Z", "m1", "r1",
                                              usage(1_000_000, 0), model="claude-opus-4-5")])
    db = tmp_path / "b.duckdb"

    def daily_cost():
        rows = json.loads(brainlab("usage", "daily", "--db", db, "--json", "--timezone",
                                   "UTC", cwd=tmp_path).stdout)
        return [round(r["cost_usd"], 6) for r in rows]

    assert brainlab("ingest", "claude", tmp_path / "projects", "--db", db,
                    cwd=tmp_path).returncode == 0
    assert daily_cost() == [5.0]  # 1M input tokens at $5/M
    mine = tmp_path / "mine.toml"
    mine.write_text('[models."claude-opus-4-5"]\ninput = 7.0\noutput = 30.0\n'
                    "cache_write_5m = 8.0\ncache_read = 0.7\n")
    write(project / "b0b0b0b0-0000-4000-8000-000000000002.jsonl", [assistant(
        "b0b0b0b0-0000-4000-8000-000000000002", "2026-11-21T10:00:00.000Z", "m2", "r2",
        usage(1_000_000, 0), model="claude-opus-4-5")])
    assert brainlab("ingest", "claude", tmp_path / "projects", "--db", db, "--prices", mine,
                    cwd=tmp_path).returncode == 0
    assert daily_cost() == [5.0, 7.0]  # before: [7.0, 7.0]
    done = brainlab("prices", "--db", db, "--reprice", cwd=tmp_path)
    assert done.returncode == 0 and "1 stored call line(s) re-priced" in done.stdout
    assert daily_cost() == [7.0, 7.0]
    again = brainlab("prices", "--db", db, "--reprice", cwd=tmp_path)
    assert "already priced at the current table" in again.stdout
