"""Every runner finishes (issue 44 item 4): what let papermill's own engine miss a reply, gone.

The trigger: nbclient (papermill's engine) mimics a frontend's ``ipywidgets.Output``: every
output captured into one is sent back to the kernel as a ``comm_msg`` on the shell channel,
from the coroutine reading iopub, while another waits for the cell's ``execute_reply`` on
that same socket. jupyter_client sends through a synchronous shadow of the ``zmq.asyncio``
socket, so pyzmq's asyncio layer never learns of the send; the send processes the socket's
pending commands, which consumes the edge announcing a reply already delivered, and the
poll waiting for the reply is never woken (the run waits forever; the kernel is idle).

brainlab's panels no longer use an Output widget (brainlab.viz.widgets.Panel): nothing is sent
to the kernel during a cell, whatever the load. ``--engine brainlab`` stays as the belt.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
import zmq
import zmq.asyncio
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.session import Session

from brainlab.lab import DB_ENV, kernels

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


async def _reply_after_a_shell_send(channel_class, timeout: float) -> tuple[str, float]:
    """A reply reaches the client's socket; before the event loop looks, the client sends a
    ``comm_msg`` on that socket the way nbclient's Output mimic does (``channel.send``)."""
    context = zmq.asyncio.Context()
    client = context.socket(zmq.PAIR)
    client.bind("inproc://shell")
    kernel = zmq.Context.shadow(context.underlying).socket(zmq.PAIR)
    kernel.connect("inproc://shell")
    session = Session()
    channel = channel_class(client, session)
    try:
        waiting = asyncio.ensure_future(channel.get_msg(timeout=timeout))
        await asyncio.sleep(0.1)  # the client polls its socket
        session.send(kernel, session.msg("execute_reply", {}))
        time.sleep(0.2)  # the reply arrives; the event loop is busy (reading iopub)
        channel.send(session.msg("comm_msg", {"comm_id": "x", "data": {"method": "update"}}))
        started = time.monotonic()
        msg = await waiting
        return msg["msg_type"], time.monotonic() - started
    finally:
        client.close(0)
        kernel.close(0)
        context.term()


def test_a_send_on_the_shell_socket_hides_a_delivered_reply():
    """The mechanism, deterministic: the stock channel sleeps on the delivered reply until
    its timeout (papermill's is none: forever); the wakeful channel reads it within a slice."""
    kind, stock = asyncio.run(_reply_after_a_shell_send(AsyncZMQSocketChannel, 3.0))
    assert kind == "execute_reply"
    assert stock > 2.0, "a shell send no longer hides a delivered reply (pyzmq or jupyter_client)"
    kind, ours = asyncio.run(_reply_after_a_shell_send(kernels.WakefulChannel, 60.0))
    assert kind == "execute_reply" and ours < kernels.WAKE_EVERY + 1.0


OUTPUT_CELL = """import ipywidgets as w
out = w.Output()
display(out)
with out:
    print('captured')
"""
PANEL_CELL = """import altair as alt, pandas as pd, ipywidgets as w
from brainlab.viz import widgets
slider = w.IntSlider(value=3, min=1, max=9)
def draw():
    print('n =', slider.value)
    display(alt.Chart(pd.DataFrame({'x': range(slider.value)})).mark_bar().encode(x='x:O'))
display(widgets.watch([slider], widgets.Panel(slider, draw)))
"""


def test_papermill_engine_sends_on_the_shell_channel_for_an_output_widget_not_for_a_panel(
        monkeypatch):
    """What nbclient sends to the kernel while each cell runs: an Output widget makes it send
    ``comm_msg``s; a brainlab panel makes it send nothing but the cell's execute_request."""
    from nbclient import NotebookClient

    sent: list[str] = []
    original = Session.send

    def spy(self, stream, msg_or_type, *args, **kwargs):
        sent.append(msg_or_type if isinstance(msg_or_type, str)
                    else msg_or_type["header"]["msg_type"])
        return original(self, stream, msg_or_type, *args, **kwargs)

    monkeypatch.setattr(Session, "send", spy)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PANEL_CELL),
                                         nbformat.v4.new_code_cell(OUTPUT_CELL)])
    # brainlab's client (kernels.ipc_config): the stock one may sleep on the Output cell's
    # reply until the timeout, which is the bug itself (120 s of a busy run's worker)
    with kernels.ipc_config() as config:
        client = NotebookClient(nb, kernel_name="python3", timeout=120, config=config,
                                resources={"metadata": {"path": str(ROOT)}})
        with client.setup_kernel():
            assert isinstance(client.kc, kernels.WakefulClient)
            sent.clear()
            client.execute_cell(nb.cells[0], 0)
            panel_sent = list(sent)
            sent.clear()
            client.execute_cell(nb.cells[1], 1)
            output_sent = list(sent)
    assert panel_sent == ["execute_request"], panel_sent
    assert "comm_msg" in output_sent, output_sent
    panel = [o for o in nb.cells[0].outputs if o.output_type == "display_data"]
    assert "n = 3" in panel[1]["data"]["text/plain"]  # the controls, then the render's items
    assert "image/svg+xml" in panel[2]["data"]


def test_no_notebook_or_viz_module_uses_an_output_widget():
    """The trigger stays out: no ``Output`` widget, ``interactive`` or ``interact`` (both
    capture into an Output) in the numbered notebooks or brainlab.viz."""
    pattern = re.compile(r"\b(Output|interactive|interact)\(")
    sources = {p.name: "\n".join("".join(c["source"]) for c in json.loads(p.read_text())["cells"])
               for p in NOTEBOOKS}
    sources.update({p.name: p.read_text() for p in (ROOT / "brainlab" / "viz").glob("*.py")})
    found = {name: pattern.findall(text) for name, text in sources.items() if pattern.search(text)}
    assert not found, found


@pytest.mark.slow
def test_stock_papermill_runs_of_the_widget_notebooks_at_once_all_finish(demo, tmp_path):
    """The cheap version of the benchmark (benchmarks/bench_notebook_runners.py): the notebooks
    with panels, each run by papermill's own engine exactly as a scheduler runs it, all at
    once; none may wait on a missed reply, and none stores an Output widget."""
    widgets = [p for p in NOTEBOOKS if p.stem[:2] in ("01", "05", "06")]
    env = {**__import__("os").environ, DB_ENV: str(demo["db"])}
    runs = []
    for path in widgets:
        out = tmp_path / path.name
        runs.append((path, out, time.monotonic(), subprocess.Popen(
            [sys.executable, "-m", "papermill", str(path), str(out), "--cwd",
             str(ROOT / "notebooks"), "-k", "python3", "--log-level", "ERROR"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)))
    for path, out, _start, proc in runs:
        try:
            _out, err = proc.communicate(timeout=480)
        except subprocess.TimeoutExpired:
            for _p, _o, _s, other in runs:
                other.kill()
            pytest.fail(f"stock papermill still running {path.name} after 480 s")
        assert proc.returncode == 0, err[-2000:]
        state = nbformat.read(str(out), as_version=4).metadata.get("widgets", {})
        models = {m["model_name"] for m in state.get(
            "application/vnd.jupyter.widget-state+json", {}).get("state", {}).values()}
        assert "OutputModel" not in models, path.name
