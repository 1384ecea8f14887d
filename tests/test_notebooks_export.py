"""Notebooks that travel (issue 44 item 3): every chart output carries a picture drawn offline.

Each numbered notebook executed on the demo (tests/notebook_runs.py), then exported two ways
and opened in headless Chromium with the network off (report_helpers.FLAGS):

- ``jupyter nbconvert --to html`` as it ships: every chart shows as a drawn picture and no
  output area is empty: a panel run with no widget manager (papermill, nbclient) shows its
  controls as a line of text (their labels and values), not a widget view nbconvert cannot
  draw, and the invisible results tests read (``brainlab.lab.record``) have no output area;
- ``brainlab notebooks export``'s handout: every chart drawn, no empty output area at all.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from notebook_runs import NOTEBOOK_DIR, ROOT
from report_helpers import chromium_available

from brainlab.lab import RECORD_MIME
from brainlab.lab.export import WIDGET_VIEW, handout_html
from brainlab.viz.render import SVG_MIME, VEGALITE_MIME

NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb"))
NO_RECORDS = ("02_context_broker_policies", "03_regulator_rules")  # their tests read outputs
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not chromium_available(), reason="no Chromium/Playwright")]

# per output area: its text, the pictures drawn in it (an <img> that decoded to a real size, an
# inline <svg> with marks) and its tables
AREAS = """() => [...document.querySelectorAll('.jp-OutputArea-output')].map(a => ({
  mime: a.getAttribute('data-mime-type') || (a.classList.contains('jupyter-widgets')
                                             ? 'widget' : ''),
  text: a.innerText.trim().length,
  drawn: [...a.querySelectorAll('img')].filter(i => i.complete && i.naturalWidth > 20
                                               && i.naturalHeight > 20).length
       + [...a.querySelectorAll('svg')].filter(s => s.getBoundingClientRect().width > 20
                                               && s.querySelectorAll('path,rect,text').length > 3)
                                       .length,
  tables: a.querySelectorAll('table').length}))"""


def _outputs(nb, mime: str) -> list:
    return [o for c in nb.cells for o in c.get("outputs", []) if mime in o.get("data", {})]


def _empty(areas: list[dict]) -> list[dict]:
    return [a for a in areas if not (a["text"] or a["drawn"] or a["tables"])]


@pytest.fixture(scope="module")
def converted(executed, tmp_path_factory) -> Path:
    """The folder of each demo run (notebook_runs.executed) as ``jupyter nbconvert --to
    html`` exports it as it ships: one nbconvert for every notebook that ran (a Jupyter start
    each cost ~1 CPU-s, issue 40); a notebook that failed is left out, its test fails on the
    run's error."""
    folder = tmp_path_factory.mktemp("nbconvert")
    copies = []
    for path in NOTEBOOKS:
        try:
            nb, _records, _seconds = executed(path)
        except AssertionError:  # the run's error: that notebook's test reports it
            continue
        nbformat.write(nb, str(folder / path.name))
        copies.append(str(folder / path.name))
    if copies:
        subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", *copies,
                        "--output-dir", str(folder)], check=True, cwd=ROOT, capture_output=True)
    return folder


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_chart_is_drawn_in_an_exported_notebook_offline(path, executed, report_browser,
                                                              converted, tmp_path):
    nb, _records, _seconds = executed(path)
    charts = _outputs(nb, VEGALITE_MIME)
    assert charts, f"{path.name} draws no chart on the demo"
    assert all(SVG_MIME in o["data"] and "<svg" in o["data"][SVG_MIME] for o in charts)

    # jupyter nbconvert as it ships (the module's one run over every notebook: `converted`)
    areas = report_browser.load((converted / path.name).with_suffix(".html"),
                                script=AREAS).measured
    drawn = [a for a in areas if a["drawn"]]
    assert len(drawn) == len(charts), f"{len(drawn)} of {len(charts)} charts drawn"
    assert not _empty(areas), _empty(areas)  # issue 44 item 3's check: none at all
    assert not _outputs(nb, WIDGET_VIEW), "a widget view: empty in any export"
    assert _outputs(nb, RECORD_MIME) or path.stem in NO_RECORDS  # the records are still there

    # the handout `brainlab notebooks export` writes
    page = tmp_path / f"{path.stem}.handout.html"
    page.write_text(handout_html(nb), encoding="utf-8")
    text = page.read_text(encoding="utf-8")
    assert "unpkg.com" not in text and WIDGET_VIEW not in text
    areas = report_browser.load(page, script=AREAS).measured
    assert len([a for a in areas if a["drawn"]]) == len(charts)
    assert not _empty(areas), _empty(areas)


def test_export_command_writes_a_handout_and_refuses_an_unknown_notebook(demo, tmp_path):
    out = tmp_path / "pages"
    done = subprocess.run([sys.executable, "-m", "brainlab.cli", "notebooks", "export", "07",
                           "--db", str(demo["db"]), "--out", str(out), "--jobs", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "07_compliance.ipynb ->" in done.stdout and "1 page(s)" in done.stdout
    page = (out / "07_compliance.html").read_text(encoding="utf-8")
    assert page.count("data:image/svg+xml;base64,") >= 1 and RECORD_MIME not in page
    assert not list(out.glob("*.part"))
    done = subprocess.run([sys.executable, "-m", "brainlab.cli", "notebooks", "export", "99",
                           "--db", str(demo["db"]), "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("Error: no notebook '99'") and "05_protocol_tour" in done.stderr
