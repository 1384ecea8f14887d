"""Issue 28 item 6: a store without metabolism logs gets a useful report and index.

The report is rendered as the user renders it (``brainlab report weekly`` in a subprocess) and
read as the browser shows it (headless Chromium's DOM, tests/report_helpers.py), on the store
shapes a newcomer has: the real transcripts corpus alone, the template brain, nothing.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from report_helpers import chromium_available

pytestmark = pytest.mark.xdist_group("kernels")  # starts Jupyter kernels (tests/conftest.py)
SCRIPT = Path(sys.executable).parent / "brainlab"
NOT_SHOWN = "Not shown, no data for them in this store"


def render(db: Path, out: Path, *args) -> subprocess.CompletedProcess:
    done = subprocess.run([str(SCRIPT), "report", "weekly", "--db", str(db), "--out", str(out),
                           *args], cwd=out.parent, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return done


def browsed(page: Path, browser, png: Path | None = None) -> str:
    if not chromium_available():
        pytest.fail("chromium is missing: apt-get install chromium; pip install -e '.[dev]'")
    dom, console, _ = browser.load(page, width=1280, height=1400, png=png)
    assert console == [], console
    return dom


def test_corpus_report_and_index_show_what_transcripts_measure(corpus_reports, report_browser,
                                                                 tmp_path):
    """Before: 11 sections, 9 saying "No ..."; an index of 0 sessions, dashes, no cost.

    ``corpus_reports``: ``brainlab report weekly --since 2026-W31`` on the corpus, rendered
    once per run (conftest.py) and read here and by test_report_layout.py."""
    out = corpus_reports
    page = out / "2026-W31" / "weekly_health.html"
    png = tmp_path / "corpus.png"
    dom = browsed(page, report_browser, png)
    sections = re.findall(r'<section class="report-section" id="([^"]+)"', dom)
    assert sections == ["headline", "agents", "usage", "data-quality", "sessions"], sections
    assert dom.count(NOT_SHOWN) == 1  # every section it cannot fill, in one line
    assert "brainlab ingest brain PATH adds them" in dom
    assert "Measured from Claude Code transcripts" in dom
    headline = dom.split('id="headline"', 1)[1].split("</section>", 1)[0]
    for figure in ("Claude Code sessions", "tokens", "cost (USD)", "peak context %",
                   "git commits", "tool calls", "hours in sessions"):
        assert f"<th>{figure}</th>" in headline, figure
    assert "$88.45" in headline  # the week's cost, as `usage weekly` gives it
    assert "main thread" in dom.split('id="agents"', 1)[1]  # cost per agent
    assert len(re.findall(r'<p class="empty">', dom)) <= 1
    assert png.stat().st_size > 20_000

    index = browsed(out / "index.html", report_browser)
    assert "<th>Claude Code sessions</th>" in index and "<th>cost</th>" in index
    assert "mean health" not in index and "No metabolism log in these weeks" in index
    row = re.search(r'2026-W31</a></th>(.*?)</tr>', index).group(1)
    assert re.findall(r"<td[^>]*>([^<]*)</td>", row) == ["2", "$88.45"]
    summary = json.loads((out / "2026-W31" / "summary.json").read_text(encoding="utf-8"))
    assert summary["cc_sessions"] == 2 and summary["cost_usd"] == 88.45


@pytest.mark.parametrize("shape", ["template_store", "empty_store"])
def test_a_store_without_sessions_names_what_is_missing_once(shape, request, report_browser,
                                                             tmp_path):
    out = tmp_path / "reports"
    render(request.getfixturevalue(shape), out, "--week", "2026-W10")
    dom = browsed(out / "2026-W10" / "weekly_health.html", report_browser)
    assert dom.count(NOT_SHOWN) == 1
    assert "brainlab ingest claude [PATH] adds them" in dom
    sections = re.findall(r'<section class="report-section" id="([^"]+)"', dom)
    assert not {"health", "ratio", "conserve", "breath", "regulator", "usage",
                "sessions"} & set(sections), sections
