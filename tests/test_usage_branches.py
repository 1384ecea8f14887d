"""`brainlab usage branches` (issue 24): cost by the git branch each transcript line names.

Each request line keeps its ``gitBranch`` (both decoders; the fuzz test keeps them equal);
the roll-up groups by it; a line without one is the branch NULL. Crafted lines, the CLI in
a subprocess, a real DuckDB file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from claude_factory import assistant, progress, usage, write

S1 = "11111111-1111-4111-8111-111111111111"
S2 = "22222222-2222-4222-8222-222222222222"


def _line(session: str, n: int, branch) -> dict:
    line = assistant(session, f"2026-05-04T10:0{n}:00.000Z", f"msg_{session[0]}{n}",
                     f"req_{session[0]}{n}", usage(100, 10))
    if branch is not None:
        line["gitBranch"] = branch
    return line


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brainlab.cli", *args], cwd=cwd,
                          capture_output=True, text=True, env=dict(os.environ), timeout=300)


def test_usage_branches_sums_each_branch_calls(tmp_path):
    nested = progress(S2, "2026-05-04T10:05:00.000Z", "a1", "t1", "msg_n", "req_n",
                      usage(7, 0))
    nested["gitBranch"] = "feat/x"
    write(tmp_path / "projects" / "alpha" / f"{S1}.jsonl",
          [_line(S1, 1, "main"), _line(S1, 2, "main"), _line(S1, 3, "feat/x")])
    write(tmp_path / "projects" / "beta" / f"{S2}.jsonl",
          [_line(S2, 1, "feat/x"), _line(S2, 2, None), nested])
    done = run(tmp_path, "ingest", "claude", str(tmp_path / "projects"), "--db", "b.duckdb")
    assert done.returncode == 0, done.stderr
    done = run(tmp_path, "usage", "branches", "--db", "b.duckdb", "--json", "--timezone",
               "UTC")
    assert done.returncode == 0, done.stderr
    rows = {r["git_branch"]: (r["requests"], r["input_tokens"], r["sessions"])
            for r in json.loads(done.stdout)}
    assert rows == {"main": (2, 200, 1), "feat/x": (3, 207, 2), None: (1, 100, 1)}
    table = run(tmp_path, "usage", "branches", "--db", "b.duckdb", "--timezone", "UTC")
    assert table.returncode == 0 and "feat/x" in table.stdout, table.stderr
