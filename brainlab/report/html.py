"""Turn an executed report notebook into ONE self-contained HTML file, written atomically.

No code cells, no prompts, no scripts, no network: charts are inline SVG (rendered by
vl-convert in the notebook), the stylesheet is inline, and a Content-Security-Policy forbids
any script or remote load as a second line of defence behind escaping (DESIGN §3 "Reports
stand alone").

The page's body is what nbconvert's HTML exporter ('basic' template, no input, no prompts)
writes of the notebook's outputs; for the report's own notebooks (one HTML display per cell)
:func:`notebook_body` writes the same bytes without importing nbconvert (docs/report.md §4).
"""

from __future__ import annotations

import copy
import html
import os
import re
import tempfile
import threading
from pathlib import Path

import nbformat

from brainlab import __version__
from brainlab.report.summary import MIME as SUMMARY
from brainlab.spec.colours import BAD, GOOD

# Nothing may load or run: inline styles and data: images only.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:"

STYLE = """
:root { --ink: #222; --muted: #6b6b6b; --rule: #e3e3e3; --alert: #c44e52; }
* { box-sizing: border-box; }
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; color: var(--ink);
       max-width: 980px; margin: 1.5rem auto; padding: 0 1rem; line-height: 1.4; }
h1 { font-size: 1.6rem; margin: 0 0 .2rem; }
h2 { font-size: 1.2rem; border-bottom: 2px solid var(--rule); padding-bottom: .2rem;
     margin-top: 2rem; }
h3 { font-size: 1rem; margin: 1.2rem 0 .4rem; }
.dates, .note, .empty, .further, footer { color: var(--muted); font-size: .9rem; }
.no-sessions { font-size: 1.2rem; padding: .8rem 1rem; background: #fff6e0;
               border-left: 4px solid #e0b000; }
.table-box { max-width: 100%; overflow-x: auto; margin: .4rem 0 1rem; }
table.data { border-collapse: collapse; font-size: .85rem; }
table.data th, table.data td { border-bottom: 1px solid var(--rule); padding: .25rem .35rem;
                               text-align: left; vertical-align: top;
                               overflow-wrap: normal; word-break: normal; hyphens: manual; }
table.data th { vertical-align: bottom; }
table.data.wide { font-size: .78rem; }
table.data th.num { white-space: normal; }
table.data td { max-width: 30rem; }
table.data .num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
table.data .nw { white-space: nowrap; }
table.headline { margin: .4rem 0 1rem; }
table.headline td { text-align: right; font-variant-numeric: tabular-nums; }
figure.chart { margin: .5rem 0 1rem; }
figure.chart svg { max-width: 100%; height: auto; }
footer { border-top: 1px solid var(--rule); margin-top: 2.5rem; padding-top: .5rem; }
footer code { font-size: .8rem; }
nav a { margin-right: .8rem; }
@media print {
  body { max-width: none; margin: 0; font-size: 10pt; }
  nav { display: none; }
  h2 { break-after: avoid; }
  section.report-section, figure.chart, table.data { break-inside: avoid; }
  table.data td { max-width: none; }
  .table-box { overflow: visible; }
  a { color: inherit; text-decoration: none; }
  @page { margin: 1.5cm; }
}
"""
# the headline's verdicts (issue 43): better and worse in the colours of spec/colours.py
STYLE += (f"td.better {{ color: {GOOD}; }} td.worse {{ color: {BAD}; font-weight: bold; }}"
          " td.noise { color: var(--muted); }\n")


def page(title: str, body: str, footer: str = "") -> str:
    """A complete HTML document around an already-escaped ``body``."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>\n"
        f"<body>\n{body}\n<footer>{footer}</footer>\n</body></html>\n"
    )


WIDGET = "application/vnd.jupyter.widget-view+json"


def _report_only(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy keeping only what a reader should see: rich outputs, no stderr, no errors.

    Widgets go too: DuckDB draws a progress bar (an ipywidget, ``FloatProgress(...)`` as
    text) under a query that runs over 2 s, so a busy machine's report used to carry them.
    So do the figures the last cell displays for ``summary.json`` (:data:`SUMMARY`).
    """
    nb = copy.deepcopy(notebook)
    nb.cells = [cell for cell in nb.cells if cell.cell_type == "code"]
    for cell in nb.cells:
        cell.outputs = [o for o in cell.get("outputs", [])
                        if (o.get("output_type") in ("display_data", "execute_result")
                            and not {WIDGET, SUMMARY} & set(o.get("data", {})))
                        or (o.get("output_type") == "stream" and o.get("name") == "stdout")]
    nb.metadata.pop("widgets", None)
    return nb


_EXPORTER: list = []  # one exporter per process: its template is compiled once
_LOCK = threading.Lock()
_PRELOAD: threading.Thread | None = None


def _exporter():
    """The HTML exporter of nbconvert ('basic' template, no input, no prompts), made once."""
    with _LOCK:
        if not _EXPORTER:
            from nbconvert import HTMLExporter

            exporter = HTMLExporter(template_name="basic", exclude_input=True,
                                    exclude_input_prompt=True, exclude_output_prompt=True)
            exporter.from_notebook_node(nbformat.v4.new_notebook())  # compiles the template
            _EXPORTER.append(exporter)
        return _EXPORTER[0]


def _soup_module():
    """bs4, which gives the page its final form (as nbconvert's exporter does)."""
    import bs4

    return bs4


def preload() -> None:
    """Import what turns the notebook into HTML in a thread, once per process.

    ``weekly.render_weekly`` calls it before the notebook runs: this process then only waits
    for the kernel, so on a second core the imports overlap the kernel's work (docs/report.md
    §4). A report notebook's outputs need bs4 only (:func:`notebook_body`); nbconvert is
    imported when a notebook needs it.
    """
    global _PRELOAD
    if _PRELOAD is None and not _EXPORTER:
        _PRELOAD = threading.Thread(target=_soup_module, name="brainlab-html", daemon=True)
        _PRELOAD.start()


# What nbconvert's 'basic' template (no input, no prompts) writes for a code cell and for a
# cell's one ``display_data`` of HTML: :func:`_plain_body` writes the same text for the
# report's own notebooks without importing nbconvert and compiling its templates (~0.4 CPU-s
# of the command: the import, jinja's compile, soupsieve's selectors). Anything else in a
# notebook (a stream, another MIME type, an image, two outputs in a cell) goes to nbconvert.
# tests/test_report_units.py compares the two on crafted notebooks, tests/test_report.py on a
# rendered one.
_CELL_OPEN = '<div id="cell-id={id}" class="cell border-box-sizing code_cell rendered{tags}">\n'
_CELL_CLOSE = "\n</div>\n"
_HTML_OUTPUT = ('\n<div class="output_wrapper">\n<div class="output">\n\n'
                '<div class="output_area">\n\n\n'
                '<div class="output_html rendered_html output_subarea ">{html}</div>\n\n'
                "</div>\n\n</div>\n</div>\n")
_TEMPLATE_END = "\n\n"
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-]+\Z")  # an id or a tag html.escape leaves as it is
_PLAIN_DATA = {"text/html", "text/plain"}  # text/html is what the template shows of these


def _plain_body(nb: nbformat.NotebookNode) -> str | None:
    """The template's text for ``nb`` (before bs4), or None when nbconvert must write it."""
    if not nb.cells:
        return None
    parts = []
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        if (cell.cell_type != "code" or not isinstance(cell.get("id"), str)
                or not _PLAIN_NAME.match(cell.id) or not isinstance(tags, list)
                or not all(isinstance(t, str) and _PLAIN_NAME.match(t) for t in tags)):
            return None
        outputs = cell.get("outputs", [])
        inner = ""
        if len(outputs) > 1:
            return None
        if outputs:
            output = outputs[0]
            data = output.get("data", {})
            markup = data.get("text/html")
            if (output.get("output_type") != "display_data" or output.get("metadata")
                    or set(data) - _PLAIN_DATA or not isinstance(markup, str)
                    or "<img" in markup.lower() or "jp-" in markup):
                return None  # nbconvert's exporter edits images and jp- cells after the template
            inner = _HTML_OUTPUT.format(html=markup)
        celltags = "".join(f" celltag_{tag}" for tag in tags)
        parts.append(_CELL_OPEN.format(id=cell.id, tags=celltags) + inner + _CELL_CLOSE)
    return "".join(parts) + _TEMPLATE_END


def notebook_body(notebook: nbformat.NotebookNode) -> str:
    """The outputs of ``notebook`` as an HTML fragment (nbconvert 'basic' template, no input)."""
    shown = _report_only(notebook)
    plain = _plain_body(shown)
    if plain is None:
        body, _resources = _exporter().from_notebook_node(shown)
        return body
    # as nbconvert's HTMLExporter ends: the template's text parsed and written back by bs4
    return str(_soup_module().BeautifulSoup(plain, features="html.parser"))


def report_html(notebook: nbformat.NotebookNode, title: str) -> str:
    """The whole report page: outputs, then a footer recording parameters and run id."""
    meta = notebook.metadata.get("brainlab", {})
    params = meta.get("parameters", {})
    listed = ", ".join(f"{html.escape(str(k))}={html.escape(repr(v))}"
                       for k, v in sorted(params.items()))
    footer = (f"brainlab {html.escape(__version__)} · run <code>"
              f"{html.escape(str(meta.get('run_id', '')))}</code> · executed "
              f"{html.escape(str(meta.get('executed_at', '')))} · parameters: <code>{listed}"
              '</code> · <a href="../index.html">all weeks</a>')
    nav = '<nav><a href="../index.html">← all weeks</a></nav>'
    return page(title, nav + notebook_body(notebook), footer)


def atomic_write(path: Path, content: str | bytes) -> Path:
    """Write ``content`` to ``path`` through a temporary file and a rename (all or nothing)."""
    umask = os.umask(0)
    os.umask(umask)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8") if isinstance(content, str) else content
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
