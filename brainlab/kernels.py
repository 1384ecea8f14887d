"""Jupyter kernels that brainlab starts itself: a client that cannot miss a reply, IPC, a timeout.

papermill waits for each cell's reply on ``zmq.asyncio`` sockets, woken by an edge-triggered
file descriptor: when the edge is consumed before the event loop sees it, a reply already in
the socket is not read until the wait times out, and papermill's wait has no timeout. Runs of
widget-heavy notebooks started together on a loaded machine waited forever on idle kernels
(issue 28 item 7; docs/notebooks.md has the measurements). Over TCP, kernels started at the
same moment could also be handed the same free port; over IPC each kernel's sockets are files
in a folder of its own.

- :class:`WakefulClient` (channels :class:`WakefulChannel`) waits in slices of
  :data:`WAKE_EVERY` seconds, each ending with a level-triggered poll.
- :func:`ipc_config` gives the traitlets config for one kernel (IPC sockets in a fresh folder,
  removed afterwards; nbclient's ``AsyncKernelManager`` makes a :class:`WakefulClient`);
  :func:`start_kernel` starts a ``KernelManager`` with it.
- :class:`BrainlabEngine` is the papermill engine registered as ``brainlab``
  (``papermill ... --engine brainlab``): every run with that config, and a cell timeout of
  :data:`CELL_TIMEOUT` seconds when ``--execution-timeout`` is not given.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from queue import Empty

from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from traitlets import Type

CELL_TIMEOUT = 600  # seconds a cell may run when the caller gives no timeout
TRANSPORT = "ipc"
WAKE_EVERY = 0.5  # seconds: a waiting client looks at its socket at least this often
CLIENT = "brainlab.kernels.WakefulClient"  # nbclient's kernel client (AsyncKernelManager)


class WakefulChannel(AsyncZMQSocketChannel):
    """A kernel channel whose wait for a message never outlasts a missed wake-up.

    ``zmq.asyncio`` learns that a message arrived from the socket's file descriptor, which
    ZeroMQ signals on edges only: when the edge is consumed elsewhere (any ``EVENTS`` read or
    send on the socket) the waiting poll is not woken, and the message sits in the socket
    until the poll's timeout, which papermill leaves at *never* (issue 28 item 7). This
    channel waits in slices of :data:`WAKE_EVERY` seconds; each slice ends with a plain
    (level-triggered) poll, so a delivered message is seen within half a second.
    """

    async def get_msg(self, timeout: float | None = None) -> dict:
        """The next message; ``queue.Empty`` after ``timeout`` seconds (None: no limit)."""
        assert self.socket is not None
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = WAKE_EVERY if deadline is None else max(0.0, deadline - time.monotonic())
            if await self.socket.poll(int(min(WAKE_EVERY, left) * 1000)):
                return await self._recv()
            if deadline is not None and time.monotonic() >= deadline:
                raise Empty


class WakefulClient(AsyncKernelClient):
    """The async kernel client of nbclient/papermill, its channels :class:`WakefulChannel`."""

    shell_channel_class = Type(WakefulChannel)
    iopub_channel_class = Type(WakefulChannel)
    stdin_channel_class = Type(WakefulChannel)
    control_channel_class = Type(WakefulChannel)


@contextlib.contextmanager
def ipc_config() -> Iterator:
    """A traitlets Config making one kernel talk over IPC sockets in a new private folder.

    The folder is short (sockets paths are limited to ~100 bytes) and unique per kernel; it is
    removed when the block ends.
    """
    from traitlets.config import Config

    folder = Path(tempfile.mkdtemp(prefix="bk-"))
    try:
        yield Config({"KernelManager": {"transport": TRANSPORT, "ip": str(folder / "k")},
                      "AsyncKernelManager": {"client_class": CLIENT}})
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
    """papermill's nbclient engine with :func:`ipc_config`'s kernel and a default cell timeout.

    It delegates to papermill's own engine, imported on use: papermill loads this class while
    it is being imported itself (entry points), so nothing here may import papermill first.
    """

    @classmethod
    def execute_notebook(cls, nb, kernel_name, **kwargs):
        """Execute as papermill's default engine does: IPC, the wakeful client, a timeout."""
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
