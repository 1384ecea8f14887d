"""The Spark ingest on a real standalone cluster: a master and one worker on this machine.

Issue 27.4: the job must cross process boundaries as on a team's cluster. The master and the
worker are started with pyspark's own ``sbin/spark-daemon.sh`` (the pip package ships it, not
``start-master.sh``/``start-worker.sh``, which only wrap it), bound to 127.0.0.1 on free
ports, with their logs, pid files and work folders in the test's tmp dir, and stopped in a
finalizer even when the test fails. ``brainlab spark ingest-claude --master spark://...`` runs
as a user runs it (a subprocess) on a small tree of two users; the lake it writes, read back
through ``attach``, must equal a local store of the same tree (``brainlab ingest claude``, a
subprocess without a JVM). The oracle was a second, ``local[2]``, Spark run (a whole driver
JVM, ~20 CPU-s); test_spark.py proves a local[2] lake equals the local store on every raw
table, cc_files and the usage views, so the local store asserts as much at a fraction of the
cost (issue 28 item 1).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from brainlab.store import query
from tests.conftest import CORPUS

pyspark = pytest.importorskip("pyspark")
# its own group: its JVMs (master, worker, driver) are its own, so it may run beside the
# local[2] Spark tests on the other worker (the suite's longest group otherwise)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("spark_cluster")]

SPARK_HOME = Path(pyspark.__file__).parent
BRAINLAB = str(Path(sys.executable).parent / "brainlab")
TABLES = ("cc_request_lines", "cc_tool_call_lines", "cc_tool_results", "cc_spans", "cc_marks",
          "cc_files", "ingest_errors", "ingest_files")
VIEWS = ("usage_daily", "usage_sessions", "usage_models", "cc_session_measures")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def daemon(env: dict, action: str, klass: str, *args: str) -> None:
    done = subprocess.run(["bash", str(SPARK_HOME / "sbin" / "spark-daemon.sh"), action, klass,
                           "1", *args], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def wait_for(port: int, seconds: float = 120) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port} after {seconds} s")


@pytest.fixture
def cluster(tmp_path, request):
    """A standalone master and one worker (1 core, 1 GB); yields (master URL, env, work dir)."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java runtime: a Spark master cannot start (apt-get install"
                    " openjdk-17-jre-headless)")
    dirs = {name: tmp_path / name for name in ("logs", "pids", "work")}
    for folder in dirs.values():
        folder.mkdir()
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOG_DIR": str(dirs["logs"]),
           "SPARK_PID_DIR": str(dirs["pids"]), "SPARK_WORKER_DIR": str(dirs["work"]),
           "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_IDENT_STRING": f"brainlab-{tmp_path.name}"}
    master_port, worker_port = free_port(), free_port()
    url = f"spark://127.0.0.1:{master_port}"
    master, worker = "org.apache.spark.deploy.master.Master", \
        "org.apache.spark.deploy.worker.Worker"

    def stop() -> None:  # each stop on its own: a failed worker start still stops the master
        for klass in (worker, master):
            subprocess.run(["bash", str(SPARK_HOME / "sbin" / "spark-daemon.sh"), "stop", klass,
                            "1"], env=env, capture_output=True, timeout=120)

    request.addfinalizer(stop)
    daemon(env, "start", master, "--host", "127.0.0.1", "--port", str(master_port),
           "--webui-port", str(free_port()))
    wait_for(master_port)
    daemon(env, "start", worker, "--host", "127.0.0.1", "--port", str(worker_port),
           "--webui-port", str(free_port()), "--cores", "1", "--memory", "1g", url)
    wait_for(worker_port)
    return url, env, dirs["work"]


def lay_out(root: Path) -> None:
    """The two smallest corpus projects, one per user."""
    projects = sorted((p for p in (CORPUS / "projects").iterdir() if p.is_dir()),
                      key=lambda p: sum(f.stat().st_size for f in p.rglob("*.jsonl")))[:2]
    for user, project in zip(("ada", "bob"), projects, strict=True):
        shutil.copytree(project, root / user / "box" / "projects" / project.name)


def ingest(tmp_path: Path, env: dict, lake: str, master: str) -> str:
    done = subprocess.run([BRAINLAB, "spark", "ingest-claude", "team", "--lake", lake,
                           "--master", master], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=1800)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def local_store(tmp_path: Path) -> tuple[str, Path]:
    """The same tree ingested by the single-machine path: (its summary line, its store)."""
    db = tmp_path / "local.duckdb"
    done = subprocess.run([BRAINLAB, "ingest", "claude", "team", "--db", str(db)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout, db


def counts(summary: str) -> dict[str, int]:
    """The ``N read``, ``N unchanged``, ``N errors``... counts of a ``claude ...`` summary."""
    return {name: int(n) for n, name in re.findall(r"(\d+) (read|unchanged|removed|errors|"
                                                    r"warnings)\b", summary.split("\n")[0])}


def attached(tmp_path: Path, lake: str) -> Path:
    db = tmp_path / f"{lake}.duckdb"
    done = subprocess.run([BRAINLAB, "attach", "--lake", lake, "--db", str(db)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return db


def frame(db: Path, relation: str) -> pd.DataFrame:
    return query(db, f"SELECT * FROM {relation} ORDER BY ALL").reset_index(drop=True)


def test_a_standalone_cluster_writes_the_lake_a_local_store_holds(cluster, tmp_path):
    url, env, work = cluster
    lay_out(tmp_path / "team")
    on_cluster = ingest(tmp_path, env, "lake-cluster", url)
    local, local_db = local_store(tmp_path)
    files = len(list((tmp_path / "team").rglob("*.jsonl")))
    assert counts(on_cluster) == counts(local) == {  # before: the local[2] run's counts
        "read": files, "unchanged": 0, "removed": 0, "errors": 0, "warnings": 0}
    assert on_cluster.startswith(f"claude {files} read, 0 unchanged, 0 reset, 0 removed,"
                                 " 0 errors")
    # the job ran in an executor of the worker, another JVM with its own Python workers
    assert list(work.glob("app-*/*/stderr")), "no executor ran on the worker"
    cluster_db = attached(tmp_path, "lake-cluster")
    for relation in TABLES + VIEWS:
        pd.testing.assert_frame_equal(frame(cluster_db, relation), frame(local_db, relation),
                                      check_exact=False, rtol=1e-9)
    assert len(frame(cluster_db, "cc_request_lines")) > 0
    users = query(cluster_db, "SELECT count(DISTINCT source_file) AS n FROM cc_files").n[0]
    assert users == len(list((tmp_path / "team").rglob("*.jsonl")))
