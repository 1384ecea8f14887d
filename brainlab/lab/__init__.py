"""``brainlab lab`` and the notebooks' plumbing: which store, the db path, recorded results.

The lab opens the store every command uses (``--db``, else the settings' store:
``$BRAINLAB_DB``, else ``[paths] db``; else ``data/brainlab.duckdb``) and the demo only when
asked or when there is no store (saying so loudly); JupyterLab works on the user's copies of
the notebooks (:mod:`brainlab.lab.copies`), never the tracked files.

Notebooks find their settings through :func:`notebook_settings` and their database through
:func:`notebook_db` (their parameters cell calls it; papermill may override ``db_path``): the
lab hands its kernels the settings it resolved (``$BRAINLAB_SETTINGS``, and ``$BRAINLAB_DB``).
A notebook states the figures a test checks by :func:`record`, which publishes them as display
data of a mimetype no frontend renders (:data:`RECORD_MIME`, nothing beside it):
the user sees nothing, the saved notebook keeps them, and :func:`read_records` collects them
from an executed notebook.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from brainlab.common.errors import BrainlabError
from brainlab.common.paths import DB_ENV, DEFAULT_DB, DEMO_DIR, user_path  # noqa: F401  (re-exported)

RECORD_MIME = "application/vnd.brainlab.record+json"  # invisible: no renderer anywhere
NOTEBOOK_DIR = Path("notebooks")  # the tracked notebooks (stored without outputs)
WORK_DIR = Path("data/notebooks")  # the user's copies, which the lab opens (lab/copies.py)


def demo_db_path(demo_dir: Path = DEMO_DIR) -> Path:
    """Where ``brainlab demo`` puts its database."""
    from brainlab.demo import demo_paths

    return demo_paths(Path(demo_dir))[1]


def _quiet_ingest(db, sources, root, label):
    from brainlab.store import ingest, open_writer

    con = open_writer(db)
    try:
        return ingest.run(con, sources, Path(root))
    finally:
        con.close()


def build_demo(demo_dir: Path = DEMO_DIR, weeks: int = 12, seed: int = 7, console=None,
               ingest=None) -> Path:
    """Run the demo (synthesize + ingest) into ``demo_dir``; return the database path."""
    from rich.console import Console

    from brainlab.demo import run_demo

    return run_demo(Path(demo_dir), weeks=weeks, seed=seed,
                    console=console or Console(quiet=True), ingest=ingest or _quiet_ingest)


def ensure_demo_db(demo_dir: Path = DEMO_DIR, console=None, ingest=None) -> Path:
    """The demo database, built first when it is missing."""
    db = demo_db_path(demo_dir)
    if not db.exists():
        build_demo(demo_dir, console=console, ingest=ingest)
    return db


def notebook_settings():
    """The settings a notebook uses (:func:`brainlab.settings.current`): one helper for all.

    In a kernel ``brainlab lab`` or ``brainlab report`` started: the settings that command
    resolved (``$BRAINLAB_SETTINGS``); under a plain ``papermill`` or ``jupyter`` run: the
    environment, then ``$BRAINLAB_CONFIG``, then ``brainlab.toml`` in the folder where the
    command was typed, then the SPEC defaults. Never build ``Thresholds()`` by hand.
    """
    from brainlab.settings import current

    return current()


def notebook_db(default: str | os.PathLike = "../data/demo/brainlab.duckdb") -> str:
    """The database a notebook should read: the settings' (:func:`notebook_settings`), else ``default``.

    The settings' store is ``$BRAINLAB_DB`` (a relative one is a path from the folder where
    the user typed the command: the kernel itself runs in ``notebooks/``), else the settings
    file's ``[paths] db``.

    Every notebook calls it first, so it also makes the kernel print whole lines
    (:func:`brainlab.lab.output.whole_lines`: no lone-newline output in an nbclient run).
    """
    from brainlab.common.paths import config_requested
    from brainlab.lab.output import whole_lines

    whole_lines()

    if not config_requested():  # nothing set: no settings code to import
        return str(default)
    db = notebook_settings().db
    return str(db) if db else str(default)


def record(name: str, value) -> None:
    """Publish one machine-readable result (what tests read from an executed notebook), unseen.

    Display data of :data:`RECORD_MIME` alone: no frontend has a renderer for it, so JupyterLab
    draws nothing and ``jupyter nbconvert --to html`` writes no output area for it (an empty
    ``text/plain`` beside it was an empty output area in every export); the output stays in
    the executed notebook for :func:`read_records`.
    """
    from IPython.display import display

    plain = json.loads(json.dumps({name: value}, default=_plain, ensure_ascii=False))
    display({RECORD_MIME: plain}, raw=True)


def _plain(value):
    """Return a numpy scalar as its Python value (pandas rows hold np.int64, np.bool_), else str."""
    item = getattr(value, "item", None)
    return item() if callable(item) and getattr(value, "ndim", None) == 0 else str(value)


def read_records(notebook) -> dict:
    """Every value a notebook recorded, from its cells' display data (a nbformat node or a path)."""
    import nbformat

    if not hasattr(notebook, "cells"):
        notebook = nbformat.read(str(notebook), as_version=4)
    found: dict = {}
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            value = output.get("data", {}).get(RECORD_MIME)
            if isinstance(value, dict):
                found.update(value)
    return found


@dataclass
class LabStore:
    """The store ``brainlab lab`` opens and why: ``demo`` is True for the synthetic demo."""

    db: Path
    demo: bool
    note: str = ""  # what to tell the user (loudly when the demo stands in for their store)


def choose_store(db: Path | None = None, demo: bool = False, default: Path = DEFAULT_DB,
                 demo_dir: Path = DEMO_DIR, configured: Path | None = None,
                 where: str = "") -> LabStore:
    """The store the lab opens: ``db``, else the settings' (``configured``), else ``default``.

    ``configured``: :attr:`brainlab.settings.Settings.db` (``$BRAINLAB_DB``, else the settings
    file's ``[paths] db``), ``where`` what set it (said when it does not exist). The demo
    only when asked (``demo``) or when no store exists at ``default``. Nothing is built here:
    a missing demo is built by :func:`ensure_demo_db` when launching.
    """
    if demo and db is not None:
        raise BrainlabError("give --db or --demo, not both")
    demo_db = demo_db_path(demo_dir)
    if demo:
        return LabStore(demo_db, True, "opening the demo store (synthetic sessions)")
    named = db if db is not None else configured
    if named:
        path = user_path(named)
        if not path.exists():
            where = "--db" if db is not None else where or "settings"
            raise BrainlabError(f"no database at {path} ({where}): ingest into it first "
                                "(`brainlab ingest brain PATH`, `brainlab ingest claude`)")
        return LabStore(path, False)
    path = user_path(default)
    if path.exists():
        return LabStore(path, False)
    return LabStore(demo_db, True, (
        f"No store at {default}: opening the DEMO store {demo_db} - synthetic sessions,"
        " not yours. Ingest yours with `brainlab ingest brain PATH` or `brainlab ingest"
        " claude`, or pass --db PATH"))


def tracked_notebooks() -> Path:
    """The notebooks shipped beside the package (``<checkout>/notebooks``), else ./notebooks."""
    beside = Path(__file__).resolve().parents[2] / "notebooks"
    return beside if beside.is_dir() else NOTEBOOK_DIR


def prepare_notebooks(source: Path | None = None, work: Path = WORK_DIR) -> list[str]:
    """Copy or refresh the user's notebooks in ``work`` from ``source``; return what to say."""
    from brainlab.lab.copies import sync_copies

    source = Path(source) if source else tracked_notebooks()
    if not source.is_dir():
        raise BrainlabError(f"no notebook folder at {source}: run from the project root or "
                            "pass --dir")
    return sync_copies(Path(source), Path(work)).lines(Path(work))


def lab_command(notebook_dir: Path, db: Path, port: int | None = None,
                open_browser: bool = True) -> list[str]:
    """The JupyterLab command line ``brainlab lab`` runs."""
    cmd = [sys.executable, "-m", "jupyterlab", f"--notebook-dir={Path(notebook_dir).resolve()}"]
    if port:
        cmd.append(f"--port={port}")
    if not open_browser:
        cmd.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # containers often run as root; JupyterLab refuses otherwise
    return cmd


def launch(notebook_dir: Path, db: Path, port: int | None = None,
           open_browser: bool = True, env_extra: dict[str, str] | None = None) -> int:
    """Open JupyterLab on ``notebook_dir`` with ``BRAINLAB_DB`` set to ``db``, and ``env_extra``.

    ``env_extra``: e.g. ``BRAINLAB_TIMEZONE``, the zone the notebooks' days are days of.

    On POSIX the process replaces itself with JupyterLab (same PID), so a signal sent to
    ``brainlab lab`` (Ctrl-C, ``kill PID``, a supervisor stopping it) reaches JupyterLab and
    stops it; elsewhere JupyterLab runs as a child and its exit code is returned.
    """
    notebook_dir = Path(notebook_dir)
    if not notebook_dir.is_dir():
        raise BrainlabError(f"no notebook folder at {notebook_dir}: run from the project root "
                            "or pass --dir")
    env = {**os.environ, **(env_extra or {}), DB_ENV: str(Path(db).resolve())}
    root = str(Path.cwd().resolve())
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    command = lab_command(notebook_dir, db, port, open_browser)
    if os.name == "posix":
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(command[0], command, env)  # never returns
    return subprocess.call(command, env=env)
