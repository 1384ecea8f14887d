"""Weekly reports scoped to their week, and saying how sure they are (issue 43 items 1, 5).

A past week's page is computed only from data up to the week's end: W43 rendered before and
after the later weeks are ingested is the same page but for its run id and time. The
headline carries n, intervals and verdicts; summary.json and the page agree.
"""

from __future__ import annotations

import difflib
import json
import re
import shutil
from datetime import date
from pathlib import Path

import pytest
from conftest import built_once

from brainlab.report import render_weekly
from brainlab.spec.weeks import Week
from brainlab.store.ingest import ingest_brain
from brainlab.synth import SynthOptions, synthesize

# one worker runs the three tests of the one shared build: split, the second worker waited
# for the first one's build (9-12 s idle in a run, docs/testing.md stop 26)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("report_trends")]


def _day_of(name: str) -> date | None:
    """The day a dated brain file belongs to: YYYY-MM-DD-... or sess-YYYYMMDD-..."""
    found = re.search(r"(\d{4})-?(\d{2})-?(\d{2})", name)
    return date(*map(int, found.groups())) if found else None


def without_later_sessions(full: Path, partial: Path, end: date) -> None:
    """A copy of the brain ``full`` whose metabolism logs, claims and handoffs end before
    ``end`` (what the brain held then); every other file as it is."""
    shutil.copytree(full, partial, ignore=shutil.ignore_patterns("claude", "telemetry"))
    for folder in ("progression/metabolism", "claims", "handoffs"):
        for path in (partial / folder).glob("*"):
            day = _day_of(path.name)
            if day is not None and day >= end:
                path.unlink()


def normalised(page: str) -> str:
    """The page without what differs between two renders: the run id, the times, and the
    injected-parameters cell's id (papermill draws it at random)."""
    page = re.sub(r"\d{4}-W\d{2}-\d{8}T\d{6}Z-[0-9a-f]+", "RUN", page)
    page = re.sub(r'cell-id="?[0-9a-f]{8}', "cell-id=ID", page)
    return re.sub(r"executed [0-9T:+\-.]+", "executed TIME", page)


@pytest.fixture(scope="module")
def before_after(tmp_path_factory) -> dict:
    """W-5 of an 8-week brain rendered on the store as it was then, and after the rest; built
    once a run for both xdist workers (conftest.built_once: three renders, ~15 CPU-s, built
    again by each worker that ran a test of this file); tests only read it."""
    def build(base: Path) -> None:
        manifest = synthesize(base / "full", SynthOptions(weeks=8, seed=11))
        week = Week.of(manifest.sessions[-1].started_at.date()).shifted(-3)
        without_later_sessions(base / "full", base / "brain", week.end)
        db = base / "brainlab.duckdb"
        ingest_brain(db, base / "brain")
        first = render_weekly(db, week.label, base / "before")
        # the later weeks arrive in the same checkout, and are ingested
        shutil.copytree(base / "full", base / "brain", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("claude", "telemetry"))
        ingest_brain(db, base / "brain")
        second = render_weekly(db, week.label, base / "after")
        later = render_weekly(db, week.shifted(2).label, base / "later")
        (base / "pages.json").write_text(json.dumps({
            "week": week.label, "before": str(first), "after": str(second),
            "later": str(later)}))

    base = built_once(tmp_path_factory, "report-trends-before-after", build)
    pages = json.loads((base / "pages.json").read_text())
    second = Path(pages["after"])
    return {"week": Week.parse(pages["week"]), "before": Path(pages["before"]).read_text(),
            "after": second.read_text(),
            "summary": json.loads((second.parent / "summary.json").read_text()),
            "later": Path(pages["later"]).read_text()}


def test_a_past_week_renders_the_same_page_after_later_data(before_after):
    before, after = before_after["before"], before_after["after"]
    assert before_after["week"].label in before
    a, b = normalised(before), normalised(after)
    diff = [line for line in difflib.unified_diff(
        re.sub(r"<svg.*?</svg>", "[svg]", a, flags=re.S).split("<"),
        re.sub(r"<svg.*?</svg>", "[svg]", b, flags=re.S).split("<"), lineterm="", n=1)]
    assert a == b, "\n".join(diff[:60])
    assert normalised(before) != normalised(before_after["later"])  # the check can fail


def test_headline_figures_carry_n_intervals_and_a_verdict(before_after):
    page = before_after["after"]
    headline = page[page.index('id="headline"'):page.index("</table>", page.index(
        'id="headline"'))]
    assert re.search(r"Mean health score</th><td>[\d.,]+ \([\d.,]+-[\d.,]+\), n \d+</td>",
                     headline)
    assert re.search(r"Coach triggers</th><td>\d+ of \d+ \(\d+%, \d+%-\d+%\)</td>", headline)
    verdicts = re.findall(r'<td class="change (\w*)">', headline)
    assert verdicts and set(verdicts) <= {"better", "worse", "noise", "moved", ""}
    assert "Change points in the history up to this week" in page


def test_summary_json_and_the_page_agree(before_after):
    """Every headline figure of summary.json is the figure the page shows."""
    summary, page = before_after["summary"], before_after["after"]
    cells = dict(re.findall(r'<tr data-figure="(\w+)"><th>[^<]*</th><td>([^<]*)</td>', page))
    assert int(cells["sessions"].replace(",", "")) == summary["sessions"]
    mean = re.match(r"([\d.,]+)", cells["mean_health"]).group(1)
    assert float(mean) == pytest.approx(summary["mean_health"], abs=0.005)
    for key in ("coach_triggers", "inefficient", "conserve_next", "narcissistic", "saturated"):
        assert int(cells[key].split(" of ")[0]) == summary[key], key
    if summary.get("cost_usd") is not None:
        assert f"${summary['cost_usd']:,.2f}" in page
