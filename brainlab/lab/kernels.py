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
- :class:`EarlyKernel` starts a kernel before its notebook is known and has it run warm-up
  code (imports) while the caller does its own work on the other core; papermill then
  executes the notebook in it (``km=``). Issue 28 item 8: a report command's kernel start and
  imports no longer come after the command's own start, week check and imports.
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
from jupyter_client.manager import KernelManager
from traitlets import Type

CELL_TIMEOUT = 600  # seconds a cell may run when the caller gives no timeout
TRANSPORT = "ipc"
WAKE_EVERY = 0.5  # seconds: a waiting client looks at its socket at least this often
CLIENT = "brainlab.lab.kernels.WakefulClient"  # nbclient's kernel client (AsyncKernelManager)


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


# What nbclient passes a kernel it starts itself: IPython's history in memory, no file written.
KERNEL_ARGUMENTS = ["--HistoryManager.hist_file=:memory:"]


class TrackedKernelManager(KernelManager):
    """A ``KernelManager`` that remembers the clients it made, so that they can be closed.

    nbclient leaves open the channels of a client it made for a kernel it was handed (its
    ``owns_km`` rule); papermill gives no access to that client. :meth:`close_clients` does.
    """

    def client(self, **kwargs):
        """A client of this kernel (``client_class``), remembered."""
        made = super().client(**kwargs)
        self.__dict__.setdefault("_made_clients", []).append(made)
        return made

    def close_clients(self) -> None:
        """Stop the channels of every client made so far."""
        for made in self.__dict__.pop("_made_clients", []):
            with contextlib.suppress(Exception):  # a client already stopped
                made.stop_channels()


class EarlyKernel:
    """A kernel over IPC started now, running ``warm_up`` while its caller works on.

    The warm-up is sent at once, ``silent`` (no output, no execution count: the notebook's
    cells keep their numbers), before the kernel has even bound its sockets (ZeroMQ queues
    it). :meth:`ready` moves the kernel to the notebook's folder and waits for it: True when
    it answered, False when it died or did not answer in time (the caller then starts a kernel
    the usual way). Hand :attr:`km` to papermill (``execute_notebook(..., km=...)``) or to
    nbclient; :meth:`close` stops every client, kills the kernel and removes its sockets.
    Any failure to start raises (the caller decides to fall back); nothing is left behind.
    """

    def __init__(self, warm_up: str, kernel_name: str = "python3", **start) -> None:
        self._stack = contextlib.ExitStack()
        try:
            config = self._stack.enter_context(ipc_config())
            config.KernelManager.client_class = CLIENT  # nbclient's client, as papermill's
            self.km = TrackedKernelManager(kernel_name=kernel_name, config=config)
            self.km.start_kernel(extra_arguments=list(KERNEL_ARGUMENTS), **start)
            self._stack.callback(self._shutdown)
            self._kc = self.km.blocking_client()
            self._kc.start_channels(shell=True, iopub=False, stdin=False, hb=False,
                                    control=False)
            self._stack.callback(self._kc.stop_channels)
            self._kc.execute(warm_up, silent=True, store_history=False)
        except BaseException:
            self._stack.close()
            raise

    def _shutdown(self) -> None:
        self.km.close_clients()
        if self.km.has_kernel:
            with contextlib.suppress(Exception):  # already dead and reaped
                self.km.shutdown_kernel(now=True)

    def ready(self, cwd: str | None = None, timeout: float = 60) -> bool:
        """Change the kernel's folder to ``cwd`` and wait until it did (after the warm-up).

        False when the kernel died or gave no answer within ``timeout`` seconds.
        """
        code = f"__import__('os').chdir({str(cwd)!r})" if cwd else "pass"
        asked = self._kc.execute(code, silent=True, store_history=False)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.km.is_alive():
                return False
            try:
                reply = self._kc.get_shell_msg(timeout=WAKE_EVERY)
            except Empty:
                continue
            if reply.get("parent_header", {}).get("msg_id") == asked:
                return reply["content"].get("status") == "ok"
        return False

    def close(self) -> None:
        """Stop the clients, kill the kernel, remove its socket folder (once; idempotent)."""
        self._stack.close()

    def __enter__(self) -> EarlyKernel:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


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
