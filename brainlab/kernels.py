"""Jupyter kernels that brainlab starts itself: IPC transport (no port race), a cell timeout.

A kernel started over TCP gets five ports its client picked by binding and releasing them:
two kernels started at the same moment (papermill runs, tests, a lab) can be handed the same
free port, and a client whose messages reach the other kernel waits forever (issue 28 item 7).
Over IPC each kernel's sockets are files in a folder of its own, so nothing can collide.

- :func:`ipc_config` gives the traitlets config for one kernel (a fresh socket folder, removed
  afterwards); :func:`start_kernel` starts a ``KernelManager`` with it.
- :class:`BrainlabEngine` is the papermill engine registered as ``brainlab``
  (``papermill ... --engine brainlab``): every run over IPC, and a cell timeout of
  :data:`CELL_TIMEOUT` seconds when ``--execution-timeout`` is not given.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

CELL_TIMEOUT = 600  # seconds a cell may run when the caller gives no timeout
TRANSPORT = "ipc"


@contextlib.contextmanager
def ipc_config() -> Iterator:
    """A traitlets Config making one kernel talk over IPC sockets in a new private folder.

    The folder is short (sockets paths are limited to ~100 bytes) and unique per kernel; it is
    removed when the block ends.
    """
    from traitlets.config import Config

    folder = Path(tempfile.mkdtemp(prefix="bk-"))
    try:
        yield Config({"KernelManager": {"transport": TRANSPORT, "ip": str(folder / "k")}})
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def start_kernel(stack: contextlib.ExitStack, kernel_name: str = "python3", **start):
    """Start a ``KernelManager`` over IPC (``start``: ``cwd``, ``env``...); shut down by ``stack``."""
    from jupyter_client.manager import KernelManager

    config = stack.enter_context(ipc_config())
    km = KernelManager(kernel_name=kernel_name, config=config)
    km.start_kernel(**start)
    stack.callback(km.shutdown_kernel, now=True)
    return km


class BrainlabEngine:
    """papermill's nbclient engine with an IPC kernel and a default cell timeout.

    It delegates to papermill's own engine, imported on use: papermill loads this class while
    it is being imported itself (entry points), so nothing here may import papermill first.
    """

    @classmethod
    def execute_notebook(cls, nb, kernel_name, **kwargs):
        """Execute as papermill's default engine does, the kernel over IPC."""
        from papermill.engines import NBClientEngine

        if not kwargs.get("execution_timeout"):
            kwargs["execution_timeout"] = CELL_TIMEOUT
        if "config" in kwargs:  # the caller's own kernel config wins
            return NBClientEngine.execute_notebook(nb, kernel_name, **kwargs)
        with ipc_config() as config:
            return NBClientEngine.execute_notebook(nb, kernel_name, config=config, **kwargs)

    @classmethod
    def nb_kernel_name(cls, nb, name=None):
        """The kernel name, as papermill's default engine finds it."""
        from papermill.engines import NBClientEngine

        return NBClientEngine.nb_kernel_name(nb, name)

    @classmethod
    def nb_language(cls, nb, language=None):
        """The notebook's language, as papermill's default engine finds it."""
        from papermill.engines import NBClientEngine

        return NBClientEngine.nb_language(nb, language)
