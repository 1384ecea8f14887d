"""One execution of each numbered notebook per store shape, shared by every test that reads it.

The notebooks are executed the way ``brainlab lab`` runs them: a kernel whose working dir is
``notebooks/`` and whose environment holds ``BRAINLAB_DB``, no papermill parameter. One kernel
per database runs every notebook in turn (``%reset -f`` between notebooks, so none sees
another's variables). Tests that only read an executed notebook's outputs or records ask
``store_kernels(store, path)`` or ``executed(path)`` (the demo) instead of running it again;
they belong to the xdist group ``notebooks`` (tests/conftest.py), so one worker holds the runs.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from brainlab.lab import DB_ENV, kernels, read_records

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
STORES = {"demo": None, "corpus": "corpus_store", "template": "template_store",
          "empty": "empty_store"}
GROUP = "notebooks"  # the xdist group of every test asking for these fixtures


class StoreKernel:
    """One python3 kernel in notebooks/ with only BRAINLAB_DB pointing at one database."""

    def __init__(self, db: Path):
        env = {**os.environ, DB_ENV: str(db)}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
        self.stack = contextlib.ExitStack()  # over IPC: no port race (brainlab.lab.kernels)
        self.km = kernels.start_kernel(self.stack, cwd=str(NOTEBOOK_DIR), env=env)
        self.results: dict[str, tuple] = {}

    def run(self, path: Path):
        """(executed notebook, records, error text or None, seconds), once per notebook."""
        if path.name not in self.results:
            nb = nbformat.read(str(path), as_version=4)
            nb.cells.insert(0, nbformat.v4.new_code_cell("%reset -f"))
            client = NotebookClient(nb, km=self.km, timeout=300, kernel_name="python3")
            start, error = time.perf_counter(), None
            try:
                client.execute()
            except CellExecutionError as exc:
                error = str(exc)
            finally:
                if client.kc is not None:
                    client.kc.stop_channels()
            nb.cells.pop(0)
            self.results[path.name] = (nb, read_records(nb), error, time.perf_counter() - start)
        return self.results[path.name]

    def close(self):
        self.stack.close()


@pytest.fixture(scope="session")
def store_kernels(request, demo):
    """Run a notebook on a named store (demo, corpus, template, empty); kernels shared per store."""
    started: dict[str, StoreKernel] = {}

    def run(store: str, path: Path):
        if store not in started:
            fixture = STORES[store]
            db = demo["db"] if fixture is None else request.getfixturevalue(fixture)
            started[store] = StoreKernel(Path(db))
        return started[store].run(path)

    yield run
    for kernel in started.values():
        kernel.close()


@pytest.fixture(scope="session")
def executed(store_kernels):
    """Run a notebook on the demo database; return (executed notebook, records, seconds)."""

    def run(path: Path):
        nb, records, error, seconds = store_kernels("demo", path)
        assert error is None, error
        return nb, records, seconds

    return run
