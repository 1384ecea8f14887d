"""Issue 28 item 9: identifiers never wrap; commands print through brainlab/common/tables.py.

Run as a user runs them: the CLI in a subprocess, at a given terminal width (COLUMNS).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import write

from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude

SCRIPT = Path(sys.executable).parent / "brainlab"


def cli(*args, cwd: Path, width: int = 80) -> str:
    done = subprocess.run([str(SCRIPT), *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "COLUMNS": str(width)})
    assert done.returncode == 0, done.stderr
    return done.stdout


def _store(tmp_path: Path) -> Path:
    """Two sessions: a long project name and a long model id, costs with float noise."""
    root = tmp_path / "claude"
    for n, (project, model) in enumerate([("lib_moxa_snmp_agentx", "claude-sonnet-4-5-20250929"),
                                          ("ci", "claude-opus-4-1-20250805")]):
        lines = [{"type": "assistant", "sessionId": f"s{n}", "uuid": f"u{n}-{i}",
                  "cwd": f"/home/dev/{project}", "timestamp": f"2026-03-0{n + 1}T10:0{i}:00Z",
                  "message": {"id": f"m{n}-{i}", "role": "assistant", "model": model,
                              "content": [{"type": "text", "text": "ok"}],
                              "usage": {"input_tokens": 1234567 + i, "output_tokens": 76543,
                                        "cache_read_input_tokens": 3333333}}}
                 for i in range(3)]
        write(root, f"projects/-home-dev-{project}/s{n}.jsonl",
              "".join(json.dumps(x) + "\n" for x in lines))
    db = tmp_path / "u.duckdb"
    con = open_writer(db)
    try:
        ingest_claude(con, root, workers=1)
    finally:
        con.close()
    return db


def _whole(text: str, word: str) -> bool:
    """``word`` is printed on one line, or the table says its column was left out."""
    return word in text or "not shown at" in text


def test_identifiers_never_wrap_the_table_hides_columns_and_says_so(tmp_path):
    db = _store(tmp_path)
    for width in (120, 100, 80, 60):
        models = cli("usage", "models", "--db", db, cwd=tmp_path, width=width)
        assert "claude-sonnet-4-5-20250929" in models, (width, models)  # the key column
        sessions = cli("usage", "sessions", "--db", db, cwd=tmp_path, width=width)
        assert _whole(sessions, "lib_moxa_snmp_agentx"), (width, sessions)
        assert not re.search(r"lib_moxa_snmp_\w*\n", sessions.replace(
            "lib_moxa_snmp_agentx ", "")), sessions
        for text in (models, sessions):
            assert max(len(line) for line in text.splitlines()) <= width, (width, text)
    narrow = cli("usage", "sessions", "--db", db, cwd=tmp_path, width=80)
    assert "(not shown at 80 columns:" in narrow


def test_json_costs_carry_no_float_noise(tmp_path):
    db = _store(tmp_path)
    out = cli("usage", "sessions", "--db", db, "--json", cwd=tmp_path)
    assert not re.search(r"\d\.\d{13,}", out), out
    assert all(isinstance(r["cost_usd"], float) for r in json.loads(out))


def test_simulate_broker_prints_a_fitted_table_with_separators(demo, tmp_path):
    for width in (80, 120):
        out = cli("simulate", "broker", "--db", demo["db"], cwd=tmp_path, width=width)
        assert max(len(line) for line in out.splitlines()) <= width, out
        assert re.search(r"\d{1,3}(,\d{3}){2}", out), out  # 7,116,699, not 7116699
        assert not re.search(r"\d{7}", out), out
    assert "(not shown at 80 columns:" in cli("simulate", "broker", "--db", demo["db"],
                                               cwd=tmp_path, width=80)


def test_prose_lines_are_cut_between_words_under_their_own_indent():
    """`trends`, `tune`, `limits` and `prices` notes print through terminal.fit: at 80 columns no
    line is longer, no word is split or lost, and a line's rest goes two past its indent."""
    from brainlab.common.terminal import fit

    text = ("title: " + "word " * 40 + "\n  item: " + "longer-word " * 12
            + "\n" + "/a/" + "very-long-path/" * 8 + " short\nfits")
    fitted = fit(text, 80)
    assert " ".join(fitted.split()) == " ".join(text.split())  # the same words, in order
    lines = fitted.splitlines()
    long_path = [line for line in lines if "very-long-path" in line]
    assert all(len(line) <= 80 for line in lines if line not in long_path)  # a path stays whole
    item = lines.index(next(line for line in lines if line.startswith("  item:")))
    assert lines[item + 1].startswith("    longer-word")  # the rest under the item's text
    assert lines[1].startswith("  word") and lines[-1] == "fits"
    assert fit(text, 0) == text


def test_limits_without_snapshots_fits_80_columns(tmp_path):
    db = tmp_path / "s.duckdb"
    open_writer(db).close()
    for argv in (["limits"], ["usage", "limits"]):
        done = subprocess.run([sys.executable, "-m", "brainlab.cli", *argv, "--db", str(db)],
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, "COLUMNS": "80"})
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert lines[0].startswith("No rate-limit snapshots yet") and len(lines) > 1
        assert max(map(len, lines)) <= 80, lines


def test_ingest_brain_prints_its_sources_as_a_table_that_fits(tmp_path):
    """The template brain ingested as a user types it: one row a source, at 80 columns every
    line but the two naming the store's path fits (before: 89 columns a source line), and a
    narrower terminal hides a column and says which; the second run finds every file
    unchanged."""
    from conftest import TEMPLATE_BRAIN

    db = tmp_path / "store" / "t.duckdb"
    first = cli("ingest", "brain", TEMPLATE_BRAIN, "--db", db, cwd=tmp_path).splitlines()
    head = next(n for n, line in enumerate(first) if line.split()[:2] == ["source", "loaded"])
    assert first[head].split() == ["source", "loaded", "unchanged", "removed", "rows", "errors",
                                   "warnings"]
    rows = {line.split()[0]: line.split()[1:] for line in first[head + 2:]
            if line.startswith(" ") and line.split()[0].isidentifier()}
    assert rows["agents"][:3] == ["3", "0", "0"] and rows["contexts"][4] == "1"
    assert all(len(line) <= 80 for line in first if str(db) not in line), first
    again = cli("ingest", "brain", TEMPLATE_BRAIN, "--db", db, cwd=tmp_path, width=60)
    lines = again.splitlines()
    assert all(len(line) <= 60 for line in lines if str(db) not in line), lines
    assert "(not shown at 60 columns: warnings; see brainlab errors)" in lines
    again_rows = {line.split()[0]: line.split()[1:] for line in lines
                  if line.startswith(" ") and line.split()[0] in rows}
    assert again_rows["agents"][:2] == ["0", "3"]  # unchanged the second time
