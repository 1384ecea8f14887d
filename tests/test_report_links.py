"""Each report section names the notebook and section that explore it further (issue 44 item 6)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from brainlab.report import sections

ROOT = Path(__file__).resolve().parents[1]


def _headings(notebook: str) -> list[str]:
    nb = json.loads((ROOT / "notebooks" / f"{notebook}.ipynb").read_text(encoding="utf-8"))
    return [line.lstrip("#").strip() for c in nb["cells"] if c["cell_type"] == "markdown"
            for line in "".join(c["source"]).splitlines() if line.startswith("#")]


def test_every_section_of_the_report_names_an_existing_notebook_section():
    source = (ROOT / "brainlab" / "report" / "sections.py").read_text(encoding="utf-8")
    keys = set(re.findall(r'section\("([a-z-]+)"', source))
    assert keys and keys <= set(sections.FURTHER), keys - set(sections.FURTHER)
    for key, (notebook, heading) in sections.FURTHER.items():
        found = _headings(notebook)
        assert any(h.startswith(heading) for h in found), (key, notebook, heading, found)


def test_a_section_ends_with_its_explore_further_line():
    html = sections.section("compliance", "Protocol compliance", "<p>x</p>")
    assert html.endswith("docs/glossary.md</code>.</p></section>")
    assert "notebooks/07_compliance.ipynb" in html and "\u201c1. By rule\u201d" in html
    assert sections.further("no-such-section") == ""
