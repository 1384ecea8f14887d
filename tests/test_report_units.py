"""Fast checks of the report's parts: weeks, escaping, SVG rendering, index, atomic writes,
parameter contract, and the browser harness itself (it must see a payload that runs)."""

from __future__ import annotations

from datetime import date

import altair as alt
import pandas as pd
import pytest
from report_helpers import active_content, chromium_available

from brainlab.common.errors import ConfigError, ReportError
from brainlab.metrics.report import Week
from brainlab.report import html as report_html
from brainlab.report import index, runner, sections
from brainlab.viz import charts

PAYLOAD = "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">"


def test_week_parsing_and_bounds():
    week = Week.parse("2026-W48")
    assert (week.start, week.end) == (date(2026, 11, 23), date(2026, 11, 30))
    assert week.shifted(-1).label == "2026-W47"
    assert Week.parse("2027-W01").shifted(-1).label == "2026-W53"  # 2026 has 53 ISO weeks
    assert Week.of(date(2027, 1, 1)).label == "2026-W53"
    for bad in ("2026-48", "2026-W99", "W48"):
        with pytest.raises(ConfigError):
            Week.parse(bad)


def test_svg_escapes_log_text():
    frame = pd.DataFrame({"agent": ["<script>alert(1)</script>", PAYLOAD], "tokens": [3, 4]})
    svg = charts.to_svg(alt.Chart(frame).mark_bar().encode(x="tokens:Q", y="agent:N"))
    assert active_content(svg) == []
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in svg


def test_svg_with_event_handler_is_refused():
    ns = 'xmlns="http://www.w3.org/2000/svg"'
    assert charts.active_parts(f'<svg {ns}><g onload="x()"/></svg>') == ["<g onload>"]
    assert charts.active_parts(f"<svg {ns}><script>x()</script></svg>") == ["<script>"]
    assert charts.active_parts(f'<svg {ns}><a href=" javascript:x()"/></svg>') == ["<a href>"]
    assert charts.active_parts(
        f'<svg {ns}><text aria-label="a onload=x()">onload=x() javascript:</text></svg>') == []


def test_tables_escape_cells():
    markup = sections.table(pd.DataFrame({"notes": [PAYLOAD], "sess_id": ["<b>s</b>"]}))
    assert active_content(markup) == [] and "<b>" not in markup
    assert "&lt;img src=x onerror=" in markup


def test_index_escapes_and_links(tmp_path):
    week_dir = tmp_path / "2026-W48"
    week_dir.mkdir()
    (week_dir / "weekly_health.html").write_text("x")
    (week_dir / "summary.json").write_text(
        '{"week": "2026-W48", "sessions": 5, "mean_health": 1.5, '
        '"last_ratio_band": "<script>x</script>"}')
    page = index.write_index(tmp_path).read_text()
    assert 'href="2026-W48/weekly_health.html"' in page
    assert active_content(page) == [] and "&lt;script&gt;" in page


def test_atomic_write_replaces_whole_file(tmp_path):
    target = tmp_path / "a" / "r.html"
    report_html.atomic_write(target, "old")
    report_html.atomic_write(target, "new")
    assert target.read_text() == "new"
    assert [p.name for p in target.parent.iterdir()] == ["r.html"]


def test_unknown_parameter_is_rejected():
    nb = runner.weekly_notebook()
    assert set(runner.declared_parameters(nb)) == {
        "db", "week", "ratio_window", "thresholds_file", "history_weeks", "run_id", "basis", "timezone"}
    with pytest.raises(ReportError, match="unknown report parameter.*weeek"):
        runner.check_parameters(nb, {"db": "x", "weeek": "2026-W48"})


def test_stored_notebook_has_no_outputs():
    import nbformat

    nb = nbformat.read(runner.weekly_notebook(), as_version=4)
    assert all(not c.get("outputs") and c.get("execution_count") is None
               for c in nb.cells if c.cell_type == "code")


@pytest.mark.skipif(not chromium_available(), reason="chromium not installed")
def test_browser_harness_sees_a_payload_that_runs_and_csp_blocks_it(report_browser, tmp_path):
    # Without the report's CSP an unescaped payload runs and the harness sees it ...
    bare = tmp_path / "bare.html"
    bare.write_text(f"<!DOCTYPE html><html><body><p>{PAYLOAD}</p></body></html>")
    dom = report_browser.load(bare).dom
    assert 'data-pwned="1"' in dom
    # ... and the report page's CSP stops it even if escaping were ever missed.
    guarded = tmp_path / "guarded.html"
    guarded.write_text(report_html.page("t", f"<p>{PAYLOAD}</p>"))
    dom = report_browser.load(guarded).dom
    assert "data-pwned" not in dom.split("<body", 1)[1].split(">", 1)[0]


def _notebook(*cells):
    """A report-shaped notebook: code cells given as (tags, outputs), ids cell-0, cell-1..."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    for number, (tags, outputs) in enumerate(cells):
        cell = nbformat.v4.new_code_cell("x", id=f"cell-{number}")
        cell.metadata["tags"] = list(tags)
        cell.outputs = list(outputs)
        nb.cells.append(cell)
    return nb


def _html_out(markup: str):
    import nbformat

    return nbformat.v4.new_output("display_data", data={"text/html": markup, "text/plain": "<x>"})


# markup bs4 writes back otherwise than it came: unquoted and upper-case attributes, a void
# tag, entities, an SVG's camelCase attribute, text after the last tag, non-ASCII text
TRICKY = ('<section class=report-section id="h"><h2>Héadline &amp; ≤ 0.4&nbsp;ok</h2><br>'
          '<svg viewBox="0 0 10 10" xmlns="http://www.w3.org/2000/svg"><text x=1>&lt;b&gt;'
          "</text></svg><p CLASS='note'>a<b>b</p></section> tail")


def test_the_report_body_is_nbconverts_without_nbconvert(monkeypatch):
    """html.notebook_body writes a report notebook's page body itself (the template's text,
    then bs4, as nbconvert's HTMLExporter ends), byte for byte what nbconvert writes; any
    notebook of another shape goes to nbconvert (docs/report.md §4, sixth pass)."""
    import nbformat

    exporter = report_html._exporter()
    stdout = nbformat.v4.new_output("stream", name="stdout", text="printed\n")
    result = nbformat.v4.new_output("execute_result", data={"text/html": "<p>r</p>"},
                                    execution_count=1)
    image = _html_out('<p><img src="data:image/png;base64,AA=="></p>')
    plain = {  # the report's own shapes: written here
        "report": _notebook((["parameters"], []), (["injected-parameters"], []),
                            ((), [_html_out("<header><h1>W</h1></header>")]),
                            ((), [_html_out(TRICKY)]), ((), [])),
        "two tags": _notebook((["a-b", "c_d"], [_html_out(TRICKY)])),
    }
    others = {  # anything else: nbconvert's exporter, as before
        "no cell": _notebook(),
        "a stream": _notebook(((), [stdout])),
        "an execute_result": _notebook(((), [result])),
        "two outputs": _notebook(((), [_html_out("<p>1</p>"), _html_out("<p>2</p>")])),
        "an image": _notebook(((), [image])),
        "a tag to escape": _notebook((["a&b"], [_html_out("<p>1</p>")])),
    }
    for name, nb in {**plain, **others}.items():
        shown = report_html._report_only(nb)
        assert (report_html._plain_body(shown) is not None) == (name in plain), name
        expected, _ = exporter.from_notebook_node(shown)
        assert report_html.notebook_body(nb) == expected, name
    # planted: an output written without nbconvert's inner <div class="output"> is seen
    monkeypatch.setattr(report_html, "_HTML_OUTPUT", report_html._HTML_OUTPUT.replace(
        '<div class="output">\n\n', "", 1).replace("</div>\n</div>\n", "</div>\n", 1))
    shown = report_html._report_only(plain["report"])
    assert report_html.notebook_body(plain["report"]) != exporter.from_notebook_node(shown)[0]
