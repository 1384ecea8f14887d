"""Execute a parameterized report notebook with papermill, the way DESIGN §5 describes.

The contract, taken from papermill's parameters model and made stricter:
- the notebook has one cell tagged ``parameters`` written ``name: type = default  # help``;
- an unknown parameter is an error before anything runs (papermill itself only warns);
- the parameters and a run id are recorded in the executed notebook's metadata;
- the kernel talks over IPC (:mod:`brainlab.lab.kernels`: no port race with kernels started at
  the same moment) and each cell runs under a timeout; on failure the executed notebook, with
  the failing cell's error in it, is saved beside the report as ``*.failed.ipynb`` and a
  ReportError naming the cell and its error is raised. The previous report is never touched by a failed run.
- the kernel may be started before the week is even known (:func:`early_kernel`): it imports
  the report's modules while the command checks the store and imports papermill, and the
  run then executes in it (issue 28 item 8; ``BRAINLAB_REPORT_EARLY_KERNEL=0``: papermill
  starts its own kernel when the run starts, the benchmark's baseline).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from brainlab.common.errors import ReportError
from brainlab.lab import kernels

if TYPE_CHECKING:
    import nbformat

DEFAULT_TIMEOUT = 120  # seconds per cell
KERNEL = "python3"
START_TIMEOUT = 60  # seconds a kernel may take to start and answer
EARLY_ENV = "BRAINLAB_REPORT_EARLY_KERNEL"
# What a report kernel imports before its notebook runs: the sections' stack (pandas, altair,
# DuckDB, brainlab) and vl-convert's engine start (a thread), as the notebook's first cell
# and ``open_report`` would; no name is left in the notebook's namespace. altair imports
# anywidget (and ipywidgets) for its JupyterChart widget, which a report never draws (its
# charts are SVG): marked missing in this kernel only, altair keeps a stand-in class
# (~0.15 CPU-s of the imports the notebook waits for).
WARM_UP = ("def _brainlab_warm_up():\n"
           "    import sys\n"
           "    if 'altair' not in sys.modules:\n"
           "        sys.modules.setdefault('anywidget', None)\n"
           "    from brainlab.report import sections\n"
           "    sections.warm_charts()\n"
           "_brainlab_warm_up()\n"
           "del _brainlab_warm_up\n")


def weekly_notebook() -> Path:
    """Path of the weekly health notebook (notebooks/reports/weekly_health.ipynb)."""
    here = Path(__file__).resolve()
    candidates = [here.parents[2] / "notebooks" / "reports" / "weekly_health.ipynb"]
    try:  # an installed package may ship it as data
        candidates.append(Path(str(resources.files("brainlab") / "notebooks" /
                                   "weekly_health.ipynb")))
    except (ModuleNotFoundError, TypeError):  # pragma: no cover
        pass
    for path in candidates:
        if path.exists():
            return path
    raise ReportError(f"report notebook not found (looked in {candidates[0]})")


def _papermill_module():
    """papermill, imported without pyarrow's file systems when this process has none yet.

    papermill's I/O module imports ``pyarrow.fs`` for ``hdfs://`` paths, which reports never
    use: with pyarrow installed (the lake's extra) that was ~0.3 CPU-s of the command's
    imports (and numpy's). Marked missing during the import only: papermill then says pyarrow
    is missing if ever given an ``hdfs://`` path, and a later ``import pyarrow.fs`` works.
    """
    if "papermill" in sys.modules or "pyarrow.fs" in sys.modules:
        import papermill

        return papermill
    sys.modules["pyarrow.fs"] = None  # type: ignore[assignment]
    try:
        import papermill
    finally:
        if sys.modules.get("pyarrow.fs", 0) is None:
            del sys.modules["pyarrow.fs"]
    return papermill


def declared_parameters(notebook: Path) -> dict[str, dict]:
    """The notebook's declared parameters: name -> {inferred_type_name, default, help}."""
    papermill = _papermill_module()

    try:
        return dict(papermill.inspect_notebook(str(notebook)))
    except Exception as exc:  # papermill raises plain exceptions for unreadable notebooks
        raise ReportError(f"cannot read the parameters of {notebook}: {exc}") from exc


def check_parameters(notebook: Path, parameters: dict) -> None:
    """Refuse parameters the notebook does not declare (papermill would only warn)."""
    known = declared_parameters(notebook)
    if not known:
        raise ReportError(f"{notebook} has no cell tagged 'parameters'")
    unknown = sorted(set(parameters) - set(known))
    if unknown:
        raise ReportError(f"unknown report parameter(s) {', '.join(unknown)}; "
                          f"{notebook.name} declares: {', '.join(sorted(known))}")


class _NoKernel:
    """The kernel of a run that has none started early: papermill starts one (a falsy marker)."""

    km = None

    def __bool__(self) -> bool:
        return False

    def ready(self, cwd: str | None = None, timeout: float = 0) -> bool:
        return False

    def close(self) -> None:
        pass


NO_KERNEL = _NoKernel()


def early_enabled() -> bool:
    """False when ``BRAINLAB_REPORT_EARLY_KERNEL=0`` (the benchmark's baseline)."""
    return os.environ.get(EARLY_ENV, "1") != "0"


def early_kernel() -> contextlib.AbstractContextManager[kernels.EarlyKernel | None]:
    """A report kernel started now, importing the sections while the caller works; closed on exit.

    Yields None when switched off or when the kernel could not be
    started: the run then starts its own kernel the usual way (and says so in one line if
    that fails too).
    """
    if not early_enabled():
        return contextlib.nullcontext()
    try:
        return kernels.EarlyKernel(WARM_UP, KERNEL)
    except Exception:  # no kernel spec, no Python: papermill's own start reports it
        return contextlib.nullcontext()


def new_run_id(week: str) -> str:
    """A run id unique enough to find a run's files: week, UTC time, random suffix."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{week}-{stamp}-{uuid.uuid4().hex[:6]}"


@dataclass
class Execution:
    """An executed notebook and where papermill wrote it."""

    notebook: nbformat.NotebookNode
    path: Path
    run_id: str
    seconds: float


class KernelSession:
    """One kernel (over IPC) that runs several parameterized notebooks in turn.

    ``report weekly --all`` renders many weeks: starting a kernel and importing the report's
    modules once instead of once per week saves most of a week's fixed cost (docs/report.md).
    Each run starts with ``%reset -f`` (no run sees another's variables) and a ``chdir`` to the
    run's folder, as papermill's ``cwd`` would.
    """

    def __init__(self, early: kernels.EarlyKernel | None = None) -> None:
        self._stack = contextlib.ExitStack()
        self._km = None
        if early is not None:  # the first run uses it (already importing the sections)
            self._km = early.km
            self._stack.callback(early.close)

    def __enter__(self) -> KernelSession:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Shut the kernel down (when one was started)."""
        self._stack.close()
        self._km = None

    def _kernel(self, cwd: Path | None):
        if self._km is not None and not self._km.is_alive():
            self.close()
        if self._km is None:
            self._km = kernels.start_kernel(self._stack, KERNEL,
                                            cwd=str(cwd) if cwd else None)
        return self._km

    def run(self, notebook: Path, output: Path, parameters: dict, timeout: int,
            cwd: Path | None) -> None:
        """Execute ``notebook`` with ``parameters`` into ``output`` (ReportError on failure)."""
        import nbformat
        from nbclient import NotebookClient
        from nbclient.exceptions import CellExecutionError
        from papermill.iorw import load_notebook_node  # gives every cell its tags list
        from papermill.parameterize import parameterize_notebook

        nb = parameterize_notebook(load_notebook_node(str(notebook)), parameters,
                                   kernel_name=KERNEL)
        setup = "%reset -f"
        if cwd:
            setup += f"\nimport os as _os\n_os.chdir({str(Path(cwd).resolve())!r})\ndel _os"
        nb.cells.insert(0, nbformat.v4.new_code_cell(setup))
        client = NotebookClient(nb, km=self._kernel(cwd), timeout=timeout, kernel_name=KERNEL)
        failure = None
        try:
            client.execute()
        except CellExecutionError as exc:
            failure = exc
        except Exception as exc:  # kernel death, timeout: one clear line, a new kernel next
            self.close()
            raise ReportError(f"report notebook failed: {type(exc).__name__}: {exc}") from exc
        finally:
            if client.kc is not None:
                client.kc.stop_channels()
            nb.cells.pop(0)
            nbformat.write(nb, str(output))
        if failure is not None:
            index = next((i for i, c in enumerate(nb.cells) for o in c.get("outputs", [])
                          if o.get("output_type") == "error"), None)
            failure.cell_index = index
            error = ReportError(_failure_message(output, failure))
            error.ename, error.evalue = failure.ename, failure.evalue
            raise error from None


def execute(notebook: Path, output: Path, parameters: dict, run_id: str,
            timeout: int = DEFAULT_TIMEOUT, cwd: Path | None = None,
            session: KernelSession | None = None,
            kernel: kernels.EarlyKernel | None = None) -> Execution:
    """Run ``notebook`` into ``output`` with ``parameters``; raise ReportError on failure.

    With a ``session`` the run reuses its kernel; otherwise papermill executes it, in
    ``kernel`` (an :class:`~brainlab.lab.kernels.EarlyKernel`, closed after the run) when that
    kernel is alive and answers, else in a kernel papermill starts for the run.
    """
    import nbformat  # here: the command starts its kernel before importing it

    check_parameters(notebook, parameters)
    started = datetime.now(UTC)
    if session is not None:
        session.run(notebook, output, parameters, timeout, cwd)
    else:
        try:
            ready = kernel is not None and kernel.ready(
                str(Path(cwd).resolve()) if cwd else None, START_TIMEOUT)
            if kernel is not None and not ready:
                kernel.close()  # died or silent: papermill starts a kernel of its own
            _papermill(notebook, output, parameters, timeout, cwd,
                       km=kernel.km if ready else None)
        finally:
            if kernel is not None:
                kernel.close()
    seconds = (datetime.now(UTC) - started).total_seconds()
    executed = nbformat.read(str(output), as_version=4)
    executed.metadata["brainlab"] = {
        "run_id": run_id, "parameters": _jsonable(parameters),
        "executed_at": started.isoformat(timespec="seconds"), "seconds": round(seconds, 2),
    }
    nbformat.write(executed, str(output))
    return Execution(executed, output, run_id, seconds)


def _papermill(notebook: Path, output: Path, parameters: dict, timeout: int,
               cwd: Path | None, km=None) -> None:
    """Run ``notebook`` with papermill; in ``km``'s kernel when given (already started)."""
    papermill = _papermill_module()
    from papermill.exceptions import PapermillExecutionError

    # papermill's logger also carries nbclient's: a kernel that died is logged there before
    # the exception this function turns into the one line the user sees.
    logging.getLogger("papermill").setLevel(logging.CRITICAL)
    given = {} if km is None else {"km": km}
    try:
        with kernels.ipc_config() as config:  # no TCP port race with other kernels (issue 28)
            papermill.execute_notebook(
                str(notebook), str(output), parameters=parameters, kernel_name=KERNEL,
                progress_bar=False, log_output=False, cwd=str(cwd) if cwd else None,
                execution_timeout=timeout, start_timeout=START_TIMEOUT, config=config,
                **given,
                # papermill otherwise writes (and validates) the whole notebook as each cell
                # starts and ends: ~40 writes of a notebook growing to 200 KB, several CPU-s
                # a week (docs/report.md §4). It is written once, at the end or on failure.
                request_save_on_cell_execute=False,
            )
    except PapermillExecutionError as exc:
        error = ReportError(_failure_message(output, exc))
        error.ename, error.evalue = exc.ename, exc.evalue  # weekly.py words store failures
        raise error from None
    except Exception as exc:  # kernel death, timeout, missing kernel: one clear line
        raise ReportError(f"report notebook failed: {type(exc).__name__}: {exc}") from exc


def _failure_message(output: Path, exc) -> str:
    import nbformat

    where = f"cell {exc.cell_index}" if exc.cell_index is not None else "a cell"
    source = ""
    try:
        cell = nbformat.read(str(output), as_version=4).cells[exc.cell_index]
        first = next((ln for ln in cell.source.splitlines() if ln.strip()), "")
        source = f" [{first.strip()[:80]}]"
    except Exception:  # the failed notebook may be unreadable; the error itself is enough
        pass
    return f"report notebook failed in {where}{source}: {exc.ename}: {exc.evalue}"


def _jsonable(parameters: dict) -> dict:
    return {k: (os.fspath(v) if isinstance(v, os.PathLike) else v) for k, v in parameters.items()}
