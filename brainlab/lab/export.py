"""Executed, self-contained HTML copies of the numbered notebooks, for handouts (issue 44 item 3).

:func:`export_notebooks` runs each notebook in one of ``jobs`` worker processes, each with one
kernel in ``notebooks/`` reused from notebook to notebook (:func:`serve`; the store in
``BRAINLAB_DB``, brainlab's wakeful kernel client) and writes ``NN_name.html`` beside nothing
else. :func:`handout_html` is the conversion: nbconvert's HTML exporter with what a handout
cannot use taken out first:

- each chart shows its static SVG (every chart output carries one, brainlab.viz.render);
- a widget view (the controls of a panel) becomes one line saying which controls the lab
  offers, and the notebook's widget state goes, so the page loads no widget manager;
- the outputs tests read (``brainlab.lab.record``) go: they are empty on screen;
- images stay inline: the page is one file that needs no network to show its charts.
"""

from __future__ import annotations

import contextlib
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


# What an export kernel imports before its first notebook (silent, no name left behind): the
# notebooks' stack (pandas, altair, DuckDB, ipywidgets, brainlab.viz) and vl-convert's engine,
# whose first chart costs ~0.5 CPU-s more than the next ones.
WARM_UP = ("def _brainlab_warm_up():\n"
           "    from brainlab.viz import explore, holdings, render, widgets  # noqa: F401\n"
           "    render.svg_of({'mark': 'point', 'data': {'values': [{'a': 1}]},\n"
           "                   'encoding': {'x': {'field': 'a', 'type': 'quantitative'}}})\n"
           "_brainlab_warm_up()\n"
           "del _brainlab_warm_up\n")


def _last_lines(text: str, count: int = 3) -> str:
    import re

    plain = re.sub(r"\x1b\[[0-9;]*m", "", str(text))  # the traceback's colours
    return " ".join(line.strip() for line in plain.strip().splitlines()[-count:])


def _write_page(nb, page: Path) -> None:
    partial = page.with_suffix(".html.part")
    partial.write_text(handout_html(nb), encoding="utf-8")
    partial.replace(page)


def serve(notebook_dir: Path, timeout: int, jobs, reply) -> None:
    """Execute each job (``{"source", "page"}``) in one kernel, in turn; ``reply`` each result.

    One export worker (``python -m brainlab.lab.export``): its kernel starts once, imports the
    notebooks' stack once (:data:`WARM_UP`), and runs each notebook after ``%reset -f`` and a
    ``chdir`` to ``notebook_dir`` (no notebook sees another's variables), as the test suite
    and ``report weekly --all`` run theirs. A kernel start, ~1.5 CPU-s of imports and the chart
    engine's start are paid once per worker instead of once per notebook, and no notebook is
    written after each cell (papermill's default). A kernel that died is replaced.
    """
    import json

    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    from brainlab.lab import kernels

    kernel = None
    try:
        for line in jobs:
            job = json.loads(line)
            try:
                if kernel is None or not kernel.km.is_alive():
                    if kernel is not None:
                        kernel.close()
                    kernel = kernels.EarlyKernel(WARM_UP, cwd=str(notebook_dir))
                    if not kernel.ready(str(notebook_dir)):
                        raise BrainlabError("the notebook kernel did not start")
                nb = nbformat.read(job["source"], as_version=4)
                nb.cells.insert(0, nbformat.v4.new_code_cell(
                    f"%reset -f\nimport os as _os\n_os.chdir({str(notebook_dir)!r})\ndel _os"))
                client = NotebookClient(nb, km=kernel.km, timeout=timeout, kernel_name="python3")
                try:
                    client.execute()
                finally:
                    if client.kc is not None:
                        client.kc.stop_channels()
                nb.cells.pop(0)
                _write_page(nb, Path(job["page"]))
                reply({"source": job["source"]})
            except CellExecutionError as exc:
                reply({"source": job["source"], "error": _last_lines(exc)})
            except Exception as exc:  # a dead kernel, a timeout: this notebook fails, not the next
                reply({"source": job["source"], "error": f"{type(exc).__name__}: {exc}"})
                if kernel is not None:
                    kernel.close()
                kernel = None
    finally:
        if kernel is not None:
            kernel.close()


def _worker(notebook_dir: Path, timeout: int, env: dict, log):
    """An export worker process (:func:`serve`), jobs on its stdin, replies on its stdout."""
    import subprocess
    import sys

    return subprocess.Popen(
        [sys.executable, "-m", "brainlab.lab.export", str(notebook_dir), str(timeout)],
        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
        bufsize=1)


def export_notebooks(db: Path, out_dir: Path, notebook_dir: Path,
                     names: Iterable[str] = (), progress: Callable[[str], None] = print,
                     timeout: int = 600, jobs: int = 2) -> list[Path]:
    """Execute each chosen notebook on ``db`` and write its handout ``out_dir/NN_name.html``.

    ``jobs`` worker processes (:func:`serve`: one kernel each, in ``notebook_dir``) take the
    notebooks in turn, each the next one as soon as it is free; each page is written
    atomically (a temporary file renamed). A notebook that fails raises a BrainlabError naming
    it and the error's last lines; the pages already written stay.
    """
    import json
    import selectors

    from brainlab.lab import DB_ENV

    paths = numbered_notebooks(notebook_dir, names)
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, DB_ENV: str(Path(db).resolve())}
    written: list[Path] = []
    waiting = list(paths)
    with tempfile.TemporaryDirectory(prefix="brainlab-export-") as scratch, \
            selectors.DefaultSelector() as selector:
        workers = []
        try:
            for number in range(min(max(1, jobs), len(paths))):
                log = open(Path(scratch) / f"worker-{number}.log", "w+")  # noqa: SIM115
                worker = _worker(notebook_dir, timeout, env, log)
                workers.append((worker, log))
                selector.register(worker.stdout, selectors.EVENT_READ, worker)

            def give(worker) -> None:
                if waiting:
                    path = waiting.pop(0)
                    page = out_dir / f"{path.stem}.html"
                    worker.stdin.write(json.dumps({"source": str(path), "page": str(page)})
                                       + "\n")
                    worker.stdin.flush()
                else:
                    worker.stdin.close()
                    selector.unregister(worker.stdout)

            for worker, _log in workers:
                give(worker)
            while len(written) < len(paths):
                for key, _events in selector.select():
                    worker = key.data
                    line = worker.stdout.readline()
                    if not line:
                        log = next(log for w, log in workers if w is worker)
                        log.seek(0)
                        raise BrainlabError("a notebook worker stopped while exporting: "
                                            + (_last_lines(log.read()) or "no message"))
                    done = json.loads(line)
                    source = Path(done["source"])
                    if "error" in done:
                        raise BrainlabError(f"{source.name} failed while exporting: "
                                            f"{done['error']}")
                    target = out_dir / f"{source.stem}.html"
                    written.append(target)
                    progress(f"{source.name} -> {target}")
                    give(worker)
        finally:
            for worker, log in workers:
                if worker.poll() is None and worker.stdin and not worker.stdin.closed:
                    with contextlib.suppress(OSError):
                        worker.stdin.close()
                try:
                    worker.wait(timeout=30)
                except Exception:  # noqa: BLE001  (stuck: killed; its kernel dies with it)
                    worker.kill()
                    worker.wait()
                log.close()
    return written


def main(argv: list[str]) -> int:
    """A worker of :func:`export_notebooks`: ``python -m brainlab.lab.export DIR TIMEOUT``."""
    import json
    import sys

    replies = os.fdopen(os.dup(1), "w", buffering=1)  # the protocol's own channel
    os.dup2(2, 1)  # anything else printed goes to the log
    serve(Path(argv[1]), int(argv[2]), sys.stdin,
          lambda message: replies.write(json.dumps(message) + "\n"))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv))
