"""Executed, self-contained HTML copies of the numbered notebooks, for handouts (issue 44 item 3).

:func:`export_notebooks` runs each notebook with papermill (kernel in ``notebooks/``, the
store in ``BRAINLAB_DB``, ``--engine brainlab``) and writes ``NN_name.html`` beside nothing
else. :func:`handout_html` is the conversion: nbconvert's HTML exporter with what a handout
cannot use taken out first:

- each chart shows its static SVG (every chart output carries one, brainlab.viz.render);
- a widget view (the controls of a panel) becomes one line saying which controls the lab
  offers, and the notebook's widget state goes, so the page loads no widget manager;
- the outputs tests read (``brainlab.lab.record``) go: they are empty on screen;
- images stay inline: the page is one file that needs no network to show its charts.
"""

from __future__ import annotations

import copy
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from brainlab.common.errors import BrainlabError

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
RECORD_MIME = "application/vnd.brainlab.record+json"


def _controls_line(output) -> str:
    plain = output.get("data", {}).get("text/plain", "")
    plain = "".join(plain) if isinstance(plain, list) else str(plain)
    names = []
    for part in plain.split("description='")[1:]:
        names.append(part.split("'", 1)[0])
    listed = ", ".join(dict.fromkeys(names)) if names else "controls"
    return (f"[Interactive in JupyterLab ({listed}): this copy shows the default view below; "
            "`brainlab lab` opens it with its controls.]")


def handout_notebook(nb):
    """A copy of executed notebook ``nb`` as a handout shows it (see the module's list)."""
    import nbformat

    shown = copy.deepcopy(nb)
    shown.metadata.pop("widgets", None)
    for cell in shown.cells:
        if cell.get("cell_type") != "code":
            continue
        kept = []
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if RECORD_MIME in data:
                continue
            if WIDGET_VIEW in data:
                kept.append(nbformat.v4.new_output("stream", name="stdout",
                                                   text=_controls_line(output) + "\n"))
                continue
            kept.append(output)
        cell.outputs = kept
    return shown


def handout_html(nb) -> str:
    """Self-contained HTML of executed notebook ``nb`` (charts as their inline SVG)."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter()
    exporter.embed_images = True
    body, _resources = exporter.from_notebook_node(handout_notebook(nb))
    return body


def numbered_notebooks(folder: Path, names: Iterable[str] = ()) -> list[Path]:
    """The numbered notebooks of ``folder`` (``NN_*.ipynb``), or those ``names`` pick.

    A name is a number (``05``), a stem (``05_protocol_tour``) or a file name; an unknown
    name raises BrainlabError listing the notebooks there are.
    """
    found = sorted(folder.glob("[0-9][0-9]_*.ipynb"))
    wanted = list(names)
    if not wanted:
        return found
    chosen = []
    for name in wanted:
        match = [p for p in found if name in (p.name, p.stem, p.stem[:2], p.stem.split("_")[0])]
        if not match:
            listed = ", ".join(p.stem for p in found) or "none"
            raise BrainlabError(f"no notebook {name!r} in {folder} (there are: {listed})")
        chosen += [p for p in match if p not in chosen]
    return chosen


def _papermill(path: Path, executed: Path, notebook_dir: Path, timeout: int, env: dict):
    """A papermill process running ``path`` into ``executed`` (brainlab's engine, the belt)."""
    import subprocess
    import sys

    return subprocess.Popen(
        [sys.executable, "-m", "papermill", str(path), str(executed), "--cwd", str(notebook_dir),
         "-k", "python3", "--engine", "brainlab", "--execution-timeout", str(timeout),
         "--log-level", "ERROR", "--no-progress-bar"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def export_notebooks(db: Path, out_dir: Path, notebook_dir: Path,
                     names: Iterable[str] = (), progress: Callable[[str], None] = print,
                     timeout: int = 600, jobs: int = 2) -> list[Path]:
    """Execute each chosen notebook on ``db`` and write its handout ``out_dir/NN_name.html``.

    ``jobs`` notebooks run at once (papermill processes, kernels in ``notebook_dir``); each
    page is written atomically (a temporary file renamed). A notebook that fails raises a
    BrainlabError naming it and papermill's last lines; the pages already written stay.
    """
    import nbformat

    from brainlab.lab import DB_ENV

    paths = numbered_notebooks(notebook_dir, names)
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, DB_ENV: str(Path(db).resolve())}
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="brainlab-export-") as scratch:
        waiting, running = list(paths), []
        while waiting or running:
            while waiting and len(running) < max(1, jobs):
                path = waiting.pop(0)
                executed = Path(scratch) / path.name
                running.append((path, executed, _papermill(path, executed, notebook_dir,
                                                           timeout, env)))
            path, executed, proc = running.pop(0)
            _out, err = proc.communicate()
            if proc.returncode != 0:
                for _p, _e, other in running:
                    other.kill()
                    other.wait()
                last = " ".join(line.strip() for line in err.strip().splitlines()[-3:])
                raise BrainlabError(f"{path.name} failed while exporting: {last}")
            html = handout_html(nbformat.read(str(executed), as_version=4))
            target = out_dir / f"{path.stem}.html"
            partial = target.with_suffix(".html.part")
            partial.write_text(html, encoding="utf-8")
            partial.replace(target)
            written.append(target)
            progress(f"{path.name} -> {target}")
    return written
