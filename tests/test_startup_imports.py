"""Processes brainlab does not start first compile no grammar at import (issue 28 items 1, 8).

jsonschema 4.25+ imports rfc3987-syntax when it is installed (Jupyter's ``format-nongpl``
extra installs it), and that module builds a lark parser at import: 1.2 CPU-s in the
``papermill`` command a scheduler runs, in JupyterLab's server, and in anything that imports
altair or nbformat. pyproject.toml caps jsonschema below 4.25; these fail if an install
brings the import back.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

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
