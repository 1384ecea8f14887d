"""The weekly report as a reader sees it at 1280 px (issue 11 items 11-16), in a real headless
Chromium, on the demo's last week and on a transcripts-only week (the real corpus).

The layout is measured by a script run in the loaded page through DevTools (the report itself
forbids scripts by its Content-Security-Policy, which DevTools is not subject to): the document
must not scroll sideways, no table may be wider than the 980 px column, and no word may be
split across two lines.
"""

from __future__ import annotations

import html.parser
import re

import pytest
from conftest import query
from report_helpers import active_content, chromium_available

from brainlab.report import render_weekly

MISSING = "—"  # brainlab.common.tables.MISSING, spelled out so this file runs on older code too

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not chromium_available(), reason="chromium not installed")]

# run in the loaded page through DevTools (the page's own CSP forbids scripts, not this)
MEASURE = """() => {
  const doc = document.documentElement, body = document.body;
  const style = getComputedStyle(body);
  const column = body.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const wide = [];
  for (const t of document.querySelectorAll("table")) {
    const w = t.getBoundingClientRect().width;
    if (w > column + 0.5) wide.push([t.closest("section") ? t.closest("section").id : "", w]);
  }
  const broken = [];
  const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  while (walker.nextNode()) {
    const node = walker.currentNode, text = node.textContent;
    if (node.parentElement.closest("svg, style")) continue;
    for (const m of text.matchAll(/[A-Za-z0-9_.,:$%]+/g)) {
      range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
      if (tops.size > 1) broken.push(m[0]);
    }
  }
  return {scrollWidth: doc.scrollWidth, clientWidth: doc.clientWidth, column: column,
          wideTables: wide, brokenWords: broken};
}"""


class Cells(html.parser.HTMLParser):
    """Every <td> of the data tables with the header of its column."""

    def __init__(self):
        super().__init__()
        self.cells: list[tuple[str, str]] = []  # (header, text)
        self.headers: list[str] = []
        self._tag, self._col = None, 0

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self._col = 0
        if tag == "thead":
            self.headers = []
        if tag in ("th", "td"):
            self._tag = tag
            if tag == "th":
                self.headers.append("")
            else:
                header = self.headers[self._col] if self._col < len(self.headers) else ""
                self.cells.append((header, ""))
                self._col += 1

    def handle_endtag(self, tag):
        if tag in ("th", "td"):
            self._tag = None

    def handle_data(self, data):
        if self._tag == "th":
            self.headers[-1] += data
        elif self._tag == "td":
            self.cells[-1] = (self.cells[-1][0], self.cells[-1][1] + data)


def cells(markup: str, counts_only: bool = False, heads: tuple[str, ...] = ()) -> list[str]:
    """The text of every data cell (only those of count columns when ``counts_only``, only
    those of the columns headed ``heads`` when given)."""
    parser = Cells()
    parser.feed(markup)
    words = ("tokens", "requests", "sessions", "loads", "calls", "tickets", "stops", "wakeups")
    return [text.strip() for head, text in parser.cells
            if (not counts_only or any(w in head.strip().split() for w in words))
            and (not heads or head.strip() in heads)]


def last_week(db) -> str:
    from brainlab.report import select_weeks

    return select_weeks(db)[0]


@pytest.fixture(scope="module")
def demo_page(demo, tmp_path_factory):
    return render_weekly(demo["db"], last_week(demo["db"]), tmp_path_factory.mktemp("demo-out"))


@pytest.fixture(scope="module")
def corpus_page(corpus_store, corpus_reports):
    """The corpus's page of the week a render without a week chooses (its latest), read from
    the CLI's render shared with test_report_shapes.py (conftest.py: one render a run)."""
    from brainlab.metrics.usage_time import resolve_time
    from brainlab.report.weekly import latest_week

    tz, first_day = resolve_time(None, None)  # as render_weekly(db, None) resolves them
    return corpus_reports / latest_week(corpus_store, first_day, tz) / "weekly_health.html"


@pytest.mark.parametrize("which", ["demo_page", "corpus_page"])
def test_layout_fits_1280px_without_broken_words(which, request, report_browser, tmp_path):
    page = request.getfixturevalue(which)
    png = tmp_path / "shot.png"
    dom, console, found = report_browser.load(page, width=1280, height=1400, png=png,
                                              script=MEASURE)
    assert console == [], console  # the page itself: offline, inert
    assert active_content(dom) == [] and "data-pwned" not in dom
    assert found["scrollWidth"] <= found["clientWidth"], found
    assert found["wideTables"] == [], found
    assert found["brokenWords"] == [], found
    assert png.stat().st_size > 20_000


@pytest.mark.parametrize("which", ["demo_page", "corpus_page"])
def test_numbers_read_as_numbers(which, request):
    markup = request.getfixturevalue(which).read_text(encoding="utf-8")
    texts, counts = cells(markup), cells(markup, counts_only=True)
    assert texts and counts
    assert not [t for t in counts if re.fullmatch(r"-?[\d,]+\.\d+", t)], "counts as floats"
    ids = cells(markup, heads=("session",))  # short transcript ids: hex, sometimes all digits
    assert not [t for t in texts if re.fullmatch(r"\d{5,}", t) and t not in ids], \
        "integers without separators"
    for marker in ("<NA>", "None", "NaN", "nan", "NaT", "–"):
        assert marker not in texts, f"missing value shown as {marker!r}"
    assert "T00:00:00" not in markup  # chart axes show days, not ISO timestamps
    assert not re.search(r"/(home|tmp|Users|work)/", " ".join(texts)), "absolute paths shown"


def test_demo_formats(demo_page):
    markup = demo_page.read_text(encoding="utf-8")
    texts = cells(markup)
    assert any(re.fullmatch(r"\d{1,3}(,\d{3})+", t) for t in texts)  # thousands separators
    assert any(re.fullmatch(r"\d+\.\d%", t) for t in texts)  # shares as percentages
    assert any(re.fullmatch(r"\$\d+\.\d\d", t) for t in texts)  # money in dollars and cents
    assert MISSING in texts  # the one missing-value marker
    assert "claims/sess-" in " ".join(texts)  # stale claim path relative to the brain root


def test_coach_text_is_true_for_the_week(demo, charts_here):
    """A week where the coach did not fire, after weeks where it did (issue 11 item 15)."""
    from brainlab.report import sections

    fired = demo["db"]
    from conftest import query

    weeks = query(fired, "SELECT strftime(started_at, '%G-W%V') AS w, bool_or(coach_triggered)"
                         " AS f FROM session_signals GROUP BY w ORDER BY w")
    quiet = next(w for w, f, prior in zip(weeks.w, weeks.f, weeks.f.cumsum().shift(fill_value=0),
                                          strict=True) if not f and prior > 0)
    ctx = sections.open_report(str(fired), quiet)
    try:
        fragment = sections.ratio(ctx)
    finally:
        sections.finish(ctx)  # the store's connection closed
    assert "never fired" not in fragment
    assert f"The coach did not fire in {quiet}." in fragment
    assert "earlier in the 12-week trend window, last on" in fragment


def test_transcripts_only_week_says_what_it_holds(corpus_page, corpus_store):
    """The latest week holding any session is a transcript week (item 9), and shows it as
    measured from the transcripts (issue 28 item 6)."""
    markup = corpus_page.read_text(encoding="utf-8")
    assert "Measured from Claude Code transcripts" in markup
    assert "No sessions this week" not in markup
    last = query(corpus_store, "SELECT max(first_ts) AS t FROM usage_sessions").t[0]
    year, week, _ = last.date().isocalendar()
    assert corpus_page.parent.name == f"{year}-W{week:02d}"
    assert "Claude Code sessions" in markup
