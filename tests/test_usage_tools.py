"""`brainlab usage tools` (issue 24: cost by tool): a call's tokens and cost split among its tool uses.

A call (one message.id: Claude Code writes each content block of a response as its own line)
that issued N tool uses gives each 1/N of its tokens and cost; a call that issued none is
the row ``(no tool)``; so tokens and cost add up to `usage daily`'s. Crafted transcripts,
the real ingest and the corpus, the CLI in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from claude_factory import assistant, tool_use, usage, write

from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude

S1 = "33333333-3333-4333-8333-333333333333"
SONNET_IN, SONNET_OUT = 3.0, 15.0  # claude-sonnet-4-5, USD per million tokens


def _ingest(root: Path, path: Path) -> Path:
    con = open_writer(path)
    try:
        ingest_claude(con, root, workers=1)
    finally:
        con.close()
    return path


@pytest.fixture
def db(tmp_path) -> Path:
    """m1: Read and Bash in one response (two lines, one usage); m2: text only; m3: one Read."""
    root = tmp_path / "projects"
    big = usage(inp=11, out=1001)
    write(root / "-home-u-repo" / f"{S1}.jsonl", [
        assistant(S1, "2026-04-01T10:00:00.000Z", "m1", "r1", big, model="claude-sonnet-4-5",
                  content=[tool_use("t1", "Read", file_path="/a.py")]),
        assistant(S1, "2026-04-01T10:00:00.000Z", "m1", "r1", big, model="claude-sonnet-4-5",
                  content=[tool_use("t2", "Bash", command="ls")]),
        assistant(S1, "2026-04-01T10:01:00.000Z", "m2", "r2", usage(inp=5, out=50),
                  model="claude-sonnet-4-5"),
        assistant(S1, "2026-04-01T10:02:00.000Z", "m3", "r3", usage(inp=2, out=20),
                  model="claude-sonnet-4-5",
                  content=[tool_use("t3", "Read", file_path="/b.py")])])
    return _ingest(root, tmp_path / "b.duckdb")


def usage_json(db: Path, view: str, *extra: str) -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "brainlab.cli", "usage", view, "--db", str(db),
                           "--json", "--timezone", "UTC", *extra], cwd=db.parent,
                          capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_call_is_split_among_its_tool_uses(db):
    tools = {t["tool"]: t for t in usage_json(db, "tools")}
    assert set(tools) == {"Read", "Bash", "(no tool)"}
    # m1's 11 input and 1001 output tokens: halves in whole tokens (5 + 6, 500 + 501)
    assert tools["Bash"]["input_tokens"] + tools["Read"]["input_tokens"] == 11 + 2
    assert (tools["Bash"]["output_tokens"], tools["Read"]["output_tokens"]) == (500, 501 + 20)
    assert (tools["Read"]["uses"], tools["Read"]["requests"]) == (2, 2)
    assert (tools["Bash"]["uses"], tools["Bash"]["requests"]) == (1, 1)
    assert tools["Bash"]["cost_usd"] == pytest.approx(
        (11 * SONNET_IN + 1001 * SONNET_OUT) / 2 / 1e6)
    none = tools["(no tool)"]
    assert (none["uses"], none["requests"], none["input_tokens"], none["output_tokens"]) == (
        0, 1, 5, 50)


def test_tools_add_up_to_daily(db):
    daily = usage_json(db, "daily")
    tools = usage_json(db, "tools")
    for column in ("input_tokens", "output_tokens", "cache_creation_tokens",
                   "cache_read_tokens", "total_tokens"):
        assert sum(t[column] for t in tools) == sum(d[column] for d in daily), column
    assert sum(t["cost_usd"] for t in tools) == pytest.approx(sum(d["cost_usd"] for d in daily))
    assert sum(d["requests"] for d in daily) == 3  # m1 counted once, not per tool


def test_corpus_tools_add_up_to_daily(corpus_store, tmp_path):
    store = tmp_path / "c.duckdb"
    store.write_bytes(corpus_store.read_bytes())
    daily = usage_json(store, "daily")
    tools = usage_json(store, "tools", "--cost-mode", "auto")
    assert sum(t["total_tokens"] for t in tools) == sum(d["total_tokens"] for d in daily)
    assert sum(t["uses"] for t in tools) > 1000
    auto = usage_json(store, "daily", "--cost-mode", "auto")
    assert sum(t["cost_usd"] for t in tools) == pytest.approx(sum(d["cost_usd"] for d in auto))
