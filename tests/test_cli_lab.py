"""`brainlab lab`: the store every command uses (the demo only when asked or when there is no
store, said loudly), the notebooks as the user's copies (issue 28 items 2, 3)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from click.testing import CliRunner
from lab_process import free_port, group_alive, port_open, start_lab, stop_group

from brainlab import lab
from brainlab.cli import main
from brainlab.lab import copies as notebook_copies

ROOT = Path(__file__).resolve().parents[1]
BRAINLAB = Path(sys.executable).with_name("brainlab")
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _lab_in(folder: Path, *args: str, env_db: str | None = None):
    """`brainlab lab ARGS --print-command --no-browser` typed in a shell in ``folder``."""
    env = {k: v for k, v in os.environ.items() if k != lab.DB_ENV}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    if env_db is not None:
        env[lab.DB_ENV] = env_db
    command = " ".join([str(BRAINLAB), "lab", *args, "--print-command", "--no-browser"])
    return subprocess.run(["bash", "-c", f"cd '{folder}' && {command}"], env=env,
                          capture_output=True, text=True, timeout=120)


def _db_line(result) -> str:
    return next(ln for ln in result.stdout.splitlines() if ln.startswith(lab.DB_ENV + "="))


def test_lab_opens_the_default_store_every_command_uses(tmp_path, empty_store):
    (tmp_path / "data").mkdir()
    shutil.copy(empty_store, tmp_path / "data" / "brainlab.duckdb")
    result = _lab_in(tmp_path)
    assert result.returncode == 0, result.stderr
    assert _db_line(result) == f"{lab.DB_ENV}={tmp_path / 'data' / 'brainlab.duckdb'}"
    assert "DEMO" not in result.stderr
    assert f"--notebook-dir={tmp_path / 'data' / 'notebooks'}" in result.stdout
    # --print-command builds nothing and copies nothing
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["brainlab.duckdb"]


def test_lab_without_a_store_says_loudly_it_opens_the_demo_and_builds_nothing(tmp_path):
    result = _lab_in(tmp_path)
    assert result.returncode == 0, result.stderr
    assert _db_line(result) == f"{lab.DB_ENV}={tmp_path / 'data' / 'demo' / 'brainlab.duckdb'}"
    assert "No store at data/brainlab.duckdb: opening the DEMO store" in result.stderr
    assert "not yours" in result.stderr and "does not exist yet" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_lab_demo_when_asked_and_brainlab_db_from_the_shell_folder(tmp_path, empty_store):
    (tmp_path / "data").mkdir()
    shutil.copy(empty_store, tmp_path / "data" / "brainlab.duckdb")
    shutil.copy(empty_store, tmp_path / "mine.duckdb")
    asked = _lab_in(tmp_path, "--demo")
    assert asked.returncode == 0, asked.stderr
    assert _db_line(asked).endswith(str(Path("data", "demo", "brainlab.duckdb")))
    relative = _lab_in(tmp_path, env_db="mine.duckdb")  # relative: from where it was typed
    assert _db_line(relative) == f"{lab.DB_ENV}={tmp_path / 'mine.duckdb'}", relative.stderr
    missing = _lab_in(tmp_path, env_db="nope.duckdb")
    assert missing.returncode == 1
    assert missing.stderr.strip().splitlines() == [
        f"Error: no database at {tmp_path / 'nope.duckdb'} ($BRAINLAB_DB): ingest into it "
        "first (`brainlab ingest brain PATH`, `brainlab ingest claude`)"]
    both = _lab_in(tmp_path, "--demo", "--db", "mine.duckdb")
    assert both.returncode == 1 and "Error: give --db or --demo, not both" in both.stderr


def _save(base: str, token: str, name: str, nb: dict) -> None:
    """Save ``nb`` as JupyterLab's Save does (the contents API)."""
    body = json.dumps({"type": "notebook", "format": "json", "content": nb}).encode()
    request = urllib.request.Request(f"{base}/api/contents/{name}", data=body, method="PUT",
                                     headers={"Authorization": f"token {token}",
                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as reply:
        assert reply.status in (200, 201)


def test_saving_in_the_lab_writes_the_users_copy_never_the_tracked_notebook(demo, tmp_path):
    tracked = {p.name: p.read_bytes() for p in NOTEBOOKS}
    work, port = tmp_path / "work", free_port()
    proc = start_lab(demo["db"], port, "t0ken", tmp_path, tmp_path / "lab.log", work)
    try:
        name = NOTEBOOKS[0].name
        nb = json.loads(tracked[name])
        cell = next(c for c in nb["cells"] if c["cell_type"] == "code")
        cell["outputs"] = [{"output_type": "stream", "name": "stdout",
                            "text": f"read {demo['db']}\n"}]
        cell["execution_count"] = 1
        _save(f"http://127.0.0.1:{port}", "t0ken", name, nb)
        saved = json.loads((work / name).read_text())
        assert saved["cells"][nb["cells"].index(cell)]["outputs"], "the copy holds the save"
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
        stop_group(proc)
    assert {p.name: p.read_bytes() for p in NOTEBOOKS} == tracked
    assert sorted(p.name for p in work.glob("*.ipynb")) == sorted(tracked)


def test_copies_are_refreshed_unless_the_user_saved_them(tmp_path):
    source, work = tmp_path / "notebooks", tmp_path / "work"
    source.mkdir()
    for name in ("01_a.ipynb", "02_b.ipynb"):
        (source / name).write_text('{"v": 1}')
    first = notebook_copies.sync_copies(source, work)
    assert first.copied == ["01_a.ipynb", "02_b.ipynb"]
    assert notebook_copies.sync_copies(source, work).lines(work) == []
    (work / "02_b.ipynb").write_text('{"v": 1, "mine": true}')  # the user saved 02
    for name in ("01_a.ipynb", "02_b.ipynb"):
        (source / name).write_text('{"v": 2}')  # a newer tracked version of both
    again = notebook_copies.sync_copies(source, work)
    assert again.refreshed == ["01_a.ipynb"] and again.kept == ["02_b.ipynb"]
    assert (work / "01_a.ipynb").read_text() == '{"v": 2}'
    assert (work / "02_b.ipynb").read_text() == '{"v": 1, "mine": true}'
    assert (work / "02_b.new.ipynb").read_text() == '{"v": 2}'
    assert any("kept your edited" in line and "02_b.new.ipynb" in line
               for line in again.lines(work))


def test_the_copies_links_to_the_glossary_resolve(tmp_path):
    # the notebooks link names to ../docs/glossary.md#...: from the copies too (issue 44 item 2)
    source, work = tmp_path / "repo" / "notebooks", tmp_path / "data" / "notebooks"
    source.mkdir(parents=True)
    (source / "01_a.ipynb").write_text('{"v": 1}')
    (tmp_path / "repo" / "docs").mkdir()
    (tmp_path / "repo" / "docs" / "glossary.md").write_text("# Glossary v1\n")
    notebook_copies.sync_copies(source, work)
    assert (work / ".." / "docs" / "glossary.md").read_text() == "# Glossary v1\n"
    (tmp_path / "repo" / "docs" / "glossary.md").write_text("# Glossary v2\n")
    notebook_copies.sync_copies(source, work)
    assert (work.parent / "docs" / "glossary.md").read_text() == "# Glossary v2\n"


def test_lab_print_command_with_db(demo, tmp_path):
    (tmp_path / "notebooks").mkdir()
    result = CliRunner().invoke(main, ["lab", "--dir", str(tmp_path / "notebooks"), "--db",
                                       str(demo["db"]), "--no-browser", "--print-command"])
    assert result.exit_code == 0, result.output
    assert f"BRAINLAB_DB={demo['db'].resolve()}" in result.output
    assert "jupyterlab" in result.output and "--no-browser" in result.output


def test_lab_missing_db_is_an_error(tmp_path):
    result = CliRunner().invoke(main, ["lab", "--db", str(tmp_path / "nope.duckdb"),
                                       "--print-command"])
    assert result.exit_code == 1 and "no database" in result.output


def test_ensure_demo_db_builds_once(tmp_path, monkeypatch):
    # the user's whole build runs (no stand-in: it is what `brainlab lab` makes: synthesize,
    # ingest, render), on a 1-week brain instead of the 12 weeks (~5 CPU-s less; the size is
    # not what is tested, docs/testing.md stop 27); the builds are counted, as an unchanged
    # file alone would not show a second, idempotent build
    builds = []
    real = lab.build_demo

    def counted(*args, **kwargs):
        builds.append(args)
        return real(*args, **{**kwargs, "weeks": 1})

    monkeypatch.setattr(lab, "build_demo", counted)
    db = lab.ensure_demo_db(tmp_path / "demo")
    assert db == tmp_path / "demo" / "brainlab.duckdb" and db.exists()
    stamp = db.stat().st_mtime_ns
    assert lab.ensure_demo_db(tmp_path / "demo") == db and db.stat().st_mtime_ns == stamp
    assert len(builds) == 1


def test_notebook_db_reads_env(monkeypatch):
    monkeypatch.setenv(lab.DB_ENV, "/x/y.duckdb")
    assert lab.notebook_db() == "/x/y.duckdb"
    monkeypatch.delenv(lab.DB_ENV)
    assert lab.notebook_db("a.duckdb") == "a.duckdb"


def test_a_signal_to_brainlab_lab_stops_jupyterlab(demo, tmp_path):
    # SIGTERM to the PID `brainlab lab` runs as must stop JupyterLab and free its port: the
    # lab replaces itself with JupyterLab (same PID), nothing is left behind in its group
    port = free_port()
    proc = start_lab(demo["db"], port, "t0ken", tmp_path, tmp_path / "lab.log")
    try:
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
        deadline = time.monotonic() + 30
        while (port_open(port) or group_alive(proc.pid)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not port_open(port), "JupyterLab still serves the port after the signal"
        assert not group_alive(proc.pid), "a process of brainlab lab outlived the signal"
    finally:
        stop_group(proc)


def test_the_copies_come_from_the_package_notebooks_wherever_lab_is_typed():
    assert lab.tracked_notebooks() == ROOT / "notebooks"
