"""Turn an executed report notebook into ONE self-contained HTML file, written atomically.

No code cells, no prompts, no scripts, no network: charts are inline SVG (rendered by
vl-convert in the notebook), the stylesheet is inline, and a Content-Security-Policy forbids
any script or remote load as a second line of defence behind escaping (DESIGN §3 "Reports
stand alone").
"""

from __future__ import annotations

import copy
import html
import os
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


def preload() -> None:
    """Import nbconvert and compile its template in a thread, once per process.

    ``weekly.render_weekly`` calls it before the notebook runs: this process then only waits
    for the kernel, so on a second core the ~0.5 CPU-s of nbconvert's imports and template
    overlap the kernel's work (docs/report.md §4).
    """
    global _PRELOAD
    if _PRELOAD is None and not _EXPORTER:
        _PRELOAD = threading.Thread(target=_exporter, name="brainlab-nbconvert", daemon=True)
        _PRELOAD.start()


def notebook_body(notebook: nbformat.NotebookNode) -> str:
    """The outputs of ``notebook`` as an HTML fragment (nbconvert 'basic' template, no input)."""
    body, _resources = _exporter().from_notebook_node(_report_only(notebook))
    return body


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
