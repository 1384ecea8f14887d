"""Notebook runs started at the same moment all finish (issue 28 item 7), and a relative
``BRAINLAB_DB`` means a path from the folder where the user typed the command.

Four ``papermill`` commands (the documented one: ``--engine brainlab --execution-timeout``)
and four runs of brainlab's report runner are started at once, each from a shell in a user's
folder holding ``data/brainlab.duckdb`` while the kernel runs in ``nbs/``. Over TCP, kernels
started together could be handed the same port and wait forever; over IPC (brainlab.kernels)
every run must end, and each notebook must find the store the relative path names.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import nbformat

from brainlab.lab import read_records

ROOT = Path(__file__).resolve().parents[1]
PAPERMILL = Path(sys.executable).with_name("papermill")
RUNS = 4

RUNNER = """
import sys
from importlib.metadata import entry_points
from pathlib import Path
from brainlab.report import runner
runner.execute(Path(sys.argv[1]), Path(sys.argv[2]), {}, "t", timeout=120, cwd=Path("nbs"))
"""


def _notebook(path: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("from brainlab.lab import notebook_db, record\n\n"
                                       "db_path = notebook_db()")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(
        "import os\nfrom pathlib import Path\n\nrecord('db', db_path)\n"
        "record('exists', Path(db_path).is_file())\nrecord('cwd', os.getcwd())")]
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python",
                                 "display_name": "Python 3"}
    nbformat.write(nb, str(path))
    return path


def _shell(folder: Path, command: str) -> list[str]:
    """A command typed in a shell in ``folder`` with a relative BRAINLAB_DB."""
    return ["bash", "-c", f"cd {shlex.quote(str(folder))} && "
            f"BRAINLAB_DB=data/brainlab.duckdb exec {command}"]


def test_notebook_runs_started_at_once_all_finish_and_find_a_relative_db(tmp_path,
                                                                         empty_store):
    engines = {e.name for e in entry_points(group="papermill.engine")}
    assert "brainlab" in engines, ("papermill's 'brainlab' engine is not installed: "
                                   "pip install -e . (pyproject.toml's entry point)")
    user = tmp_path / "user"
    (user / "data").mkdir(parents=True)
    (user / "nbs").mkdir()
    shutil.copy(empty_store, user / "data" / "brainlab.duckdb")
    notebook = _notebook(user / "nbs" / "probe.ipynb")
    env = {**os.environ}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    commands = {}
    for i in range(RUNS):
        commands[f"papermill-{i}"] = _shell(user, (
            f"{shlex.quote(str(PAPERMILL))} nbs/probe.ipynb {user}/out-pm-{i}.ipynb --cwd nbs -k python3"
            " --engine brainlab --execution-timeout 120 --no-progress-bar"))
        commands[f"runner-{i}"] = _shell(user, (
            f"{shlex.quote(sys.executable)} -c {shlex.quote(RUNNER)} "
            f"{shlex.quote(str(notebook))} {user}/out-runner-{i}.ipynb"))
    procs = {name: subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, start_new_session=True)
             for name, cmd in commands.items()}
    hung, failed = [], {}
    for name, proc in procs.items():
        try:
            output, _ = proc.communicate(timeout=600)  # a hang, not slowness: none took 60 s
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.communicate()
            hung.append(name)
            continue
        if proc.returncode:
            failed[name] = output.decode(errors="replace")[-1500:]
    assert not hung, f"runs that never finished: {hung}"
    assert not failed, failed
    expected = str(user / "data" / "brainlab.duckdb")
    for out in sorted(user.glob("out-*.ipynb")):
        records = read_records(out)
        assert records == {"db": expected, "exists": True, "cwd": str(user / "nbs")}, (
            out.name, json.dumps(records))
    assert len(list(user.glob("out-*.ipynb"))) == 2 * RUNS
    assert not [p.name for p in (user / "nbs").iterdir() if p.name != "probe.ipynb"], \
        "a run left files (sockets?) in the kernel's folder"
