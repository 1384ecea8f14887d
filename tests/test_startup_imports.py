"""What processes import at start: no grammar compiled (issue 28 items 1, 8), and the
frequent ``brainlab`` commands without the heavy packages they do not need (issue 40).

jsonschema 4.25+ imports rfc3987-syntax when it is installed (Jupyter's ``format-nongpl``
extra installs it), and that module builds a lark parser at import: 1.2 CPU-s in the
``papermill`` command a scheduler runs, in JupyterLab's server, and in anything that imports
altair or nbformat. pyproject.toml caps jsonschema below 4.25; these fail if an install
brings the import back.

The suite starts ~690 ``brainlab`` processes and the hooks one per event: pyarrow (~0.1 CPU-s
with numpy), pandas (~0.2 more when Arrow is built from Python objects) and the duckdb package
(~0.05; the engine alone is ``_duckdb``) were most of a small ``ingest claude`` or a
``check`` (docs/testing.md, stop 26). A command that imports one of them again fails here.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from claude_factory import assistant, usage, user, write
from conftest import CACHE_ENV, TEMPLATE_BRAIN, cli_env, seeded_cache

GRAMMAR_MODULES = ("rfc3987_syntax", "lark")

ENTRY_POINTS = {
    "papermill command": ["-m", "papermill", "--help"],
    "JupyterLab's server": ["-c", "import jupyter_server.serverapp"],
    "altair alone": ["-c", "import altair"],
}


def imported_modules(args: list[str]) -> set[str]:
    """The top-level names a fresh ``python -X importtime ARGS`` imported."""
    done = subprocess.run([sys.executable, "-X", "importtime", *args], capture_output=True,
                          text=True, timeout=300, check=True)
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    assert "json" in names or "encodings" in names, done.stderr[-500:]  # the probe read lines
    return names


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_no_grammar_is_compiled_at_start(entry):
    names = imported_modules(ENTRY_POINTS[entry])
    assert not names & set(GRAMMAR_MODULES), (
        f"{entry} imports {sorted(names & set(GRAMMAR_MODULES))}: is jsonschema >= 4.25 "
        "installed? (pyproject.toml caps it)")


HEAVY = ("pyarrow", "pandas", "numpy", "duckdb", "yaml", "rich")
# each command: what it may import of HEAVY (check reads the rule catalogue's yml files)
COMMANDS = {
    "ingest claude": ((), ["ingest", "claude", "{claude}", "--db", "{db}"]),
    "check": (("yaml",), ["check", str(TEMPLATE_BRAIN)]),
    "sql": ((), ["sql", "SELECT count(*) AS calls FROM cc_requests", "--db", "{db}"]),
    "usage daily": ((), ["usage", "daily", "--db", "{db}"]),
    "export": ((), ["export", "--db", "{db}", "--lake", "{lake}", "--user", "u", "--machine",
                    "m"]),
}

# one process for every command: each runs in a child forked before anything is imported,
# as the console script runs it, and reports the top-level modules it then held
FORKED = r"""
import json, os, sys
done = {}
for name, argv in json.loads(sys.argv[1]):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        real_exit = os._exit

        def report(code=0):
            top = sorted({m.split(".")[0] for m in sys.modules})
            sys.stdout.flush()
            os.write(write, json.dumps([code, top]).encode())
            real_exit(0)

        os._exit = report  # the console script leaves with os._exit after a closed store
        sys.argv = ["brainlab", *argv]
        try:
            from brainlab.cli import run
            run()
        except SystemExit as exc:
            report(exc.code if isinstance(exc.code, int) else 0)
        report(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.waitpid(pid, 0)
    done[name] = json.loads(b"".join(chunks))
print("RESULT " + json.dumps(done))
"""


def test_frequent_commands_import_no_heavy_package_they_do_not_need(tmp_path):
    """A 20-line-sized transcript into a new store, then the read commands on it."""
    session = "5e7b3c1a-0000-4000-8000-000000000001"
    claude = tmp_path / "claude" / "projects"
    write(claude / "-home-u-projets-alpha" / f"{session}.jsonl", [
        user(session, "2026-03-02T10:00:00Z", text="déjà vu: un café"),  # not ASCII
        assistant(session, "2026-03-02T10:00:05Z", "msg_1", "req_1", usage(10, 20, 30, 40)),
        assistant(session, "2026-03-02T10:01:05Z", "msg_2", "req_2", usage(1, 2, 3, 4)),
    ])
    db = tmp_path / "store.duckdb"
    fill = {"{claude}": str(claude), "{db}": str(db), "{lake}": str(tmp_path / "lake")}
    plan = [[name, [fill.get(a, a) for a in argv]] for name, (_ok, argv) in COMMANDS.items()]
    env = cli_env(tmp_path / "home")  # the new store copies the run's template (not built)
    env[CACHE_ENV] = str(seeded_cache(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", FORKED, json.dumps(plan)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.rsplit("RESULT ", 1)[1])
    assert "claude 1 read" in done.stdout, done.stdout  # it ingested the transcript
    assert "calls" in done.stdout, done.stdout  # sql printed its column
    assert list((tmp_path / "lake").glob("cc_request_lines/user=u/machine=m/*.parquet"))
    for name, (allowed, _argv) in COMMANDS.items():
        code, modules = found[name]
        assert code in (0, 1), (name, code, done.stderr[-2000:])  # check: 1 = violations
        assert "brainlab" in modules, name
        heavy = sorted(set(modules) & set(HEAVY) - set(allowed))
        assert not heavy, f"`brainlab {name}` imports {heavy}: a package it does not need"
