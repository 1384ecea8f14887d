"""docs/tuning.md's and docs/notebooks.md's figures for tuning, recomputed on the demo store.

The outputs quoted there are `brainlab tune sessions|tickets|breath` on the demo with the
default settings (and what notebook 04 prints, the same engine); a change of the engine, the
grid or the demo makes this test fail until the docs are updated with real output.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import built_once

from brainlab.common.terminal import fit
from brainlab.sim.tuning import breath, sessions, tickets
from brainlab.sim.tuning.text import format_result

DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.fixture(scope="module")
def outputs(demo, tmp_path_factory):
    """The three tuners' text on the demo, computed once a run for both xdist workers
    (conftest.built_once: ~3 CPU-s, computed again by each worker running one of the two
    tests)."""
    def build(folder: Path) -> None:
        (folder / "outputs.json").write_text(json.dumps({
            "sessions": format_result(sessions.tune(demo["db"])),
            "tickets": format_result(tickets.tune(demo["db"])),
            "breath": format_result(breath.tune(demo["db"]))}), encoding="utf-8")

    folder = built_once(tmp_path_factory, "tune-docs-outputs", build)
    return json.loads((folder / "outputs.json").read_text(encoding="utf-8"))


def test_tuning_md_quotes_the_commands_output(outputs):
    text = (DOCS / "tuning.md").read_text(encoding="utf-8")
    for target in ("sessions", "tickets"):
        quoted = re.search(rf"```\n\$ brainlab tune {target} --db data/demo/brainlab.duckdb\n"
                           r"(.*?)\n```", text, re.S)
        assert quoted, f"docs/tuning.md lost its tune {target} example"
        assert quoted.group(1) == fit(outputs[target], 80)  # as printed at 80 columns


def test_notebooks_md_figures_for_04_are_current(outputs):
    text = (DOCS / "notebooks.md").read_text(encoding="utf-8")
    section = text[text.index("## Outcome labels and the tuning definitions (notebook 04)"):]
    block = re.search(r"```\n(.*?)\n```", section, re.S).group(1)
    printed = "\n".join(outputs.values()).splitlines()
    for line in block.splitlines():
        assert line in printed, f"docs/notebooks.md quotes a line 04 no longer prints: {line}"
