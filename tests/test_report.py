"""The weekly health report end to end: real papermill runs on a synthetic brain, the HTML
opened in a real headless Chromium with the network off (DESIGN §3 "Reports stand alone")."""

from __future__ import annotations

import html.parser
import json
import shutil

import nbformat
import pytest
from report_helpers import (
    PWN_FILE,
    active_content,
    chromium_available,
)

from brainlab.common.errors import ReportError
from brainlab.report import render_weekly
from brainlab.report.runner import weekly_notebook
from brainlab.synth.brain import XSS_NOTE

pytestmark = pytest.mark.slow
needs_browser = pytest.mark.skipif(not chromium_available(), reason="chromium not installed")

# The charts a week with sessions and transcripts draws (sections.py names them).
CHARTS = {"sessions-per-week", "health-by-category", "rolling-ratio", "conserve-signals",
          "agent-cost", "usage-per-day", "violations-per-week"}


@pytest.fixture(scope="module")
def rendered(small_report_store, small_week_command):
    """The last week of the run's 3-week store with the planted payloads, rendered once a run
    by ``brainlab report weekly --week`` (conftest.py small_week_command; read only): issue 28
    item 1, this file built an 8-week store of its own and rendered its last week again."""
    week = small_report_store["weeks"][-1]
    out = small_week_command["out"]
    page = out / week / "weekly_health.html"
    done = small_week_command["done"]
    assert done.returncode == 0, done.stderr
    assert str(page) in done.stdout  # the command prints the page it wrote
    return {"root": small_report_store["root"], "db": small_report_store["db"],
            "manifest": small_report_store["manifest"], "week": week, "out": out,
            "page": page}


class TextOf(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data):
        self.parts.append(data)


def text_of(markup: str) -> str:
    parser = TextOf()
    parser.feed(markup)
    return " ".join(parser.parts)


def figures(dom: str) -> dict[str, str]:
    """data-chart name -> the markup inside that <figure>."""
    out = {}
    for chunk in dom.split('<figure class="chart" data-chart="')[1:]:
        name, rest = chunk.split('"', 1)
        out[name] = rest.split("</figure>", 1)[0]
    return out


def sessions_by_week(rendered) -> dict[str, int]:
    """ISO week -> its sessions: the manifest's, and the mode plants' night-time brain
    sessions (transcripts only, synth/mode_plants.py; the 3-week store has them in its last
    week), whose weeks are their transcripts' as ingested."""
    from collections import Counter

    from brainlab.store import query

    counts = Counter(f"{s.started_at:%G-W%V}" for s in rendered["manifest"].sessions)
    # the focus sprints' sessions (synth/focus.py) have no type, so no scored category: the
    # headline's Sessions (weekly_health_for) leaves them out, as test_measured_report.py does
    extra = [i for p in rendered["manifest"].planted if not p["effect"].startswith("focus:")
             for i in p.get("transcript_sessions", [])]
    weeks = query(rendered["db"], "SELECT strftime(started_at, '%G-W%V') AS w FROM cc_sessions"
                  " WHERE list_contains($ids, session_id)", {"ids": extra}).w
    assert len(weeks) == len(extra) > 0
    counts.update(weeks)
    return dict(counts)


def test_the_page_holds_what_nbconvert_writes_of_the_executed_notebook(rendered):
    """The command writes the page's body without nbconvert (html._plain_body): it is what
    nbconvert's exporter writes of the executed notebook, byte for byte, the planted
    payloads' week included (docs/report.md §4, sixth pass)."""
    from brainlab.report import html as report_html

    executed = nbformat.read(rendered["out"] / rendered["week"] / "weekly_health.ipynb",
                             as_version=4)
    shown = report_html._report_only(executed)
    assert report_html._plain_body(shown) is not None  # the report's own shape
    body, _ = report_html._exporter().from_notebook_node(shown)
    assert body in rendered["page"].read_text(encoding="utf-8")


def test_files_written_with_run_record(rendered):
    week_dir = rendered["out"] / rendered["week"]
    assert rendered["page"] == week_dir / "weekly_health.html"
    executed = nbformat.read(week_dir / "weekly_health.ipynb", as_version=4)
    record = executed.metadata["brainlab"]
    assert record["parameters"]["week"] == rendered["week"]
    assert record["run_id"].startswith(rendered["week"])
    summary = json.loads((week_dir / "summary.json").read_text())
    expected = sessions_by_week(rendered)[rendered["week"]]
    assert summary["sessions"] == expected
    assert not list(week_dir.glob(".*.tmp*")), "temporary files left behind"
    # the kernel's figures (the notebook's last cell) are those the store gives, key for key
    from brainlab.report import summary as week_summary
    from brainlab.report.weekly import _summary_of

    assert week_summary.from_notebook(executed) is not None, "the kernel displayed no figures"
    queried = _summary_of(rendered["db"], rendered["week"], record["parameters"])
    assert list(summary)[3:] == list(queried) and {**summary, **queried} == summary
    assert week_summary.MIME not in rendered["page"].read_text(encoding="utf-8")
    index = (rendered["out"] / "index.html").read_text()
    assert f'href="{rendered["week"]}/weekly_health.html"' in index


def test_html_is_self_contained_small_and_printable(rendered):
    page = rendered["page"].read_text(encoding="utf-8")
    assert len(page.encode()) < 3_000_000
    assert "Content-Security-Policy" in page and "@media print" in page
    assert "http://" not in page.replace('xmlns="http://', "").replace(
        "xmlns:xlink=\"http://", "") and "https://" not in page
    # no code cell, no prompt
    assert "sections.open_report" not in page and "In&nbsp;[" not in page
    assert set(figures(page)) == CHARTS


def test_planted_wasted_agent_is_listed(rendered):
    page = rendered["page"].read_text(encoding="utf-8")
    wasted = page.split("Always loaded, little used", 1)[1].split("</section>", 1)[0]
    assert "brain-hypervisor" in wasted  # planted: loaded in ~95% of sessions, never used


def test_log_strings_are_escaped(rendered):
    page = rendered["page"].read_text(encoding="utf-8")
    assert active_content(page) == []
    text = text_of(page)
    assert XSS_NOTE.split(" ")[0] in text  # <script>alert("xss-note")</script> shown as text
    assert "onerror=alert(\"xss-img\")>" in text
    assert "document.body.setAttribute('data-pwned','note')" in text
    assert PWN_FILE in text


@needs_browser
def test_browser_draws_every_chart_and_runs_no_payload(rendered, report_browser, tmp_path):
    png = tmp_path / "shot.png"
    dom, console, _ = report_browser.load(rendered["page"], width=1000, height=1400, png=png)
    assert console == [], console
    assert "data-pwned" not in dom.split("<body", 1)[1].split(">", 1)[0]
    assert "<title>brainlab weekly health" in dom and "pwned</title>" not in dom
    drawn = figures(dom)
    assert set(drawn) == CHARTS
    for name, markup in drawn.items():
        assert "<svg" in markup and ("<path" in markup or "<rect" in markup), name
    assert active_content(dom) == []
    assert png.stat().st_size > 20_000  # a blank page is a few KB


@needs_browser
def test_empty_week_renders_no_sessions_report(small_empty_week_command, report_browser):
    # the run's one render of a week before the small store's first, by the command
    # (conftest.py; shared with test_report_early_kernel.py, issue 28 item 1)
    done, week = small_empty_week_command["done"], small_empty_week_command["week"]
    assert done.returncode == 0, done.stderr
    page = small_empty_week_command["out"] / week / "weekly_health.html"
    assert str(page) in done.stdout
    markup = page.read_text(encoding="utf-8")
    assert "No sessions this week" in markup
    summary = json.loads((page.parent / "summary.json").read_text())
    assert summary["sessions"] == 0
    dom, console, _ = report_browser.load(page)
    assert console == []
    assert "No sessions this week" in dom


def test_failing_notebook_leaves_previous_report(rendered, tmp_path):
    out = tmp_path / "reports"
    shutil.copytree(rendered["out"], out)
    week_dir = out / rendered["week"]
    before = {p.name: p.read_bytes() for p in week_dir.iterdir()}
    broken = nbformat.read(weekly_notebook(), as_version=4)
    at = next(i for i, c in enumerate(broken.cells) if "parameters" in c.metadata.get("tags", []))
    broken.cells.insert(at + 1, nbformat.v4.new_code_cell(
        'raise RuntimeError("planted failure for the test")', id="planted-failure"))
    path = tmp_path / "broken.ipynb"
    nbformat.write(broken, path)
    with pytest.raises(ReportError) as caught:
        render_weekly(rendered["db"], rendered["week"], out, notebook=path)
    message = str(caught.value)
    assert "RuntimeError" in message and "planted failure for the test" in message
    assert "cell" in message
    after = {p.name: p.read_bytes() for p in week_dir.iterdir()
             if p.name != "weekly_health.failed.ipynb"}
    assert after == before
    failed = nbformat.read(week_dir / "weekly_health.failed.ipynb", as_version=4)
    assert any(o.get("output_type") == "error" for c in failed.cells for o in c.get("outputs", []))


def test_headline_week_over_week_from_the_manifest(rendered):
    from brainlab.metrics import report as data
    from brainlab.metrics.report import Week
    from brainlab.store import query

    week = Week.parse(rendered["week"])
    counts = sessions_by_week(rendered)
    frame = data.headline(rendered["db"], week).set_index("figure")
    this, prev = counts[week.label], counts[week.shifted(-1).label]
    assert frame.loc["Sessions"].tolist() == [this, prev, this - prev]
    # under SPEC defaults the parameterised macro agrees with the weekly_health view
    macro = query(rendered["db"], "SELECT * EXCLUDE (last_ratio, last_ratio_band) "
                                  "FROM weekly_health_for() ORDER BY week_start")
    view = query(rendered["db"], "SELECT * FROM weekly_health ORDER BY week_start")
    assert macro.equals(view)
