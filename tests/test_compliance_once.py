"""Issue 28 item 4: one broker breach, one violation, whichever file shows it.

The broker's blocks are written to ``progression/broker/*.md`` and printed in the session's
transcript; the store holds both copies. ``brainlab check`` (brain files only), the store's
``violations`` view (read by the demo, the report and notebook 07) must count the same
breaches. Run as the user runs them: the CLI in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from conftest import query, write

from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude

BRAINLAB = [sys.executable, "-m", "brainlab.cli"]


def cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*BRAINLAB, *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, env={**os.environ, "COLUMNS": "100"}, timeout=300)


def checked(root: Path, cwd: Path, *extra) -> Counter:
    done = cli("check", root, "--select", "BRK", "--format", "json", *extra, cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    return Counter(v["rule"] for v in json.loads(done.stdout) if v.get("rule"))


def stored(db: Path) -> Counter:
    rows = query(db, "SELECT rule, count(*) AS n FROM violations WHERE rule LIKE 'BRK%' "
                     "GROUP BY rule")
    return Counter(dict(zip(rows["rule"], rows["n"], strict=True)))


def test_demo_store_and_check_count_each_broker_breach_once(demo, tmp_path):
    store = stored(demo["db"])
    assert store["BRK001"] > 0 and store["BRK004"] > 0
    assert checked(demo["root"], tmp_path) == store
    assert checked(demo["root"], tmp_path, "--db", demo["db"]) == store


BLOCK = ("Context-broker — inhale sprint p-core-01\n\nProjet détecté : p\n\nSource map :\n"
         '  developer → ["a.ts", "b.ts", "c.ts"]\n')


def _transcript_with(root: Path, text: str) -> None:
    line = {"type": "assistant", "sessionId": "s-1", "uuid": "u-1", "cwd": "/home/dev/p",
            "timestamp": "2026-03-01T10:00:00Z",
            "message": {"id": "m-1", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                        "content": [{"type": "text", "text": text}],
                        "usage": {"input_tokens": 10, "output_tokens": 5}}}
    write(root, "claude/projects/-home-dev-p/s-1.jsonl", json.dumps(line) + "\n")


def _store(brain: Path, db: Path) -> Path:
    done = cli("ingest", "brain", brain, "--db", db, cwd=brain.parent)
    assert done.returncode == 0, done.stderr
    con = open_writer(db)
    try:
        ingest_claude(con, brain / "claude", workers=1)
    finally:
        con.close()
    return db


def test_a_block_in_a_brain_file_and_its_transcript_is_one_breach(brain, tmp_path):
    write(brain, "progression/broker/2026-03-01-p-core-01.md", BLOCK)
    _transcript_with(brain, BLOCK)
    db = _store(brain, tmp_path / "b.duckdb")
    assert query(db, "SELECT count(*) AS n FROM broker_blocks")["n"][0] == 2  # both read
    rows = query(db, "SELECT file FROM violations WHERE rule = 'BRK001'")
    assert list(rows["file"]) == [str(brain / "progression/broker/2026-03-01-p-core-01.md")]


def test_a_replanned_map_naming_other_files_is_still_judged(brain, tmp_path):
    write(brain, "progression/broker/2026-03-01-p-core-01.md", BLOCK)
    _transcript_with(brain, BLOCK.replace('"c.ts"]', '"d.ts"]'))
    db = _store(brain, tmp_path / "b.duckdb")
    assert query(db, "SELECT count(*) AS n FROM violations WHERE rule = 'BRK001'")["n"][0] == 2


def test_the_paths_a_violation_lists_come_in_one_order(demo):
    """BRK001's sources (message and evidence) are sorted: the same store gives the same text
    on every connection (``string_agg``/``list`` of DISTINCT paths had no ORDER BY, and two
    evaluations of one store could list them differently)."""
    rows = query(demo["db"], "SELECT message, evidence FROM violations WHERE rule = 'BRK001'")
    assert len(rows) > 0
    for message, evidence in zip(rows["message"], rows["evidence"], strict=True):
        sources = json.loads(evidence)["sources"]
        assert len(sources) > 2 and sources == sorted(sources), evidence
        assert message.endswith(": " + ", ".join(sources)), message
