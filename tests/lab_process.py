"""Start `brainlab lab` for real (its own session, a free port, a token) and stop it by its PID."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BRAINLAB = Path(sys.executable).with_name("brainlab")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def start_lab(db: Path, port: int, token: str, runtime: Path, log: Path,
              work_dir: Path | None = None) -> subprocess.Popen:
    """`brainlab lab --db DB --port PORT --no-browser` from the project root; wait until it answers.

    ``work_dir`` (default ``runtime/work``): where the lab puts its copies of notebooks/ and
    what JupyterLab serves (``--work``), never the project's data/ folder.
    """
    extra = ["--work", str(work_dir or runtime / "work")]
    env = {**os.environ, "JUPYTER_TOKEN": token, "JUPYTER_RUNTIME_DIR": str(runtime),
           "JUPYTERLAB_WORKSPACES_DIR": str(runtime / "workspaces")}
    with open(log, "wb") as out:
        proc = subprocess.Popen([str(BRAINLAB), "lab", "--db", str(db), "--port", str(port),
                                 "--no-browser", *extra], cwd=ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"brainlab lab exited {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}",
                                        timeout=2) as reply:
                if reply.status == 200:
                    return proc
        except OSError:
            time.sleep(0.5)
    stop_group(proc)
    raise RuntimeError(f"brainlab lab did not answer on port {port}: {log.read_text()[-2000:]}")


def stop_group(proc: subprocess.Popen) -> None:
    """Last resort for a test's cleanup: kill the process group this test started."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=10)


def group_alive(pgid: int) -> bool:
    """True while any process of the group ``pgid`` is alive (a leftover JupyterLab or kernel)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True
