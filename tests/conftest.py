"""Shared fixtures: crafted brain trees, real DuckDB files, one synthetic demo brain per run."""

from __future__ import annotations

import fcntl
import os
import pickle
import shutil
import sys
import textwrap
from pathlib import Path

import pytest
from notebook_runs import executed, store_kernels  # noqa: F401  (fixtures for every file)
from timeline import group_of
from timeline import register as register_timeline

from brainlab.common.paths import CACHE_ENV
from brainlab.demo import build_store
from brainlab.store import ingest as store_ingest
from brainlab.store import open_writer, query
from brainlab.transcripts.ingest import ingest_claude


def write(root: Path, relative: str, text: str | bytes) -> Path:
    """Write a file of a crafted brain (text is dedented)."""
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def ingest_brain(root: Path, db: Path):
    """Ingest ``root`` into ``db`` with the brain sources; return the summary (the library's)."""
    return store_ingest.ingest_brain(db, root)


def ingest_transcripts(root: Path, sessions: dict[str, list[dict]],
                       db_name: str = "transcripts.duckdb") -> Path:
    """Write each session's lines as claude/projects/-home-u-brain/<session>.jsonl under
    ``root``, ingest them with the real ``ingest_claude``; return the database."""
    import json

    for session, lines in sessions.items():
        write(root, f"claude/projects/-home-u-brain/{session}.jsonl",
              "".join(json.dumps(line) + "\n" for line in lines))
    db = root / db_name
    con = open_writer(db)
    try:
        ingest_claude(con, root / "claude", workers=1)
    finally:
        con.close()
    return db


def _xdist_worker(tmp_path_factory) -> bool:
    """True in an xdist worker, whose base folder xdist names popen-<worker> in the run's (a
    pytest started by a test inherits PYTEST_XDIST_WORKER but not that folder)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return bool(worker) and tmp_path_factory.getbasetemp().name == f"popen-{worker}"


def run_folder(tmp_path_factory) -> Path:
    """A folder of this test run that every xdist worker sees: the run's base temporary folder
    (each worker's own is a folder inside it), or this process's without xdist."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if _xdist_worker(tmp_path_factory) else base


def built_once(tmp_path_factory, name: str, build) -> Path:
    """The folder ``shared-<name>`` of this run, filled by ``build(folder)`` once per run: the
    first worker builds under a file lock, the other waits and reuses it (issue 28 item 1: a
    session fixture built once per worker cost each build twice). Tests only read it."""
    shared = run_folder(tmp_path_factory) / f"shared-{name}"
    with open(f"{shared}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (shared / ".built").exists():
            shutil.rmtree(shared, ignore_errors=True)  # a worker that died while building
            shared.mkdir()
            build(shared)
            (shared / ".built").touch()
    return shared


@pytest.fixture(scope="session", autouse=True)
def _store_template_cache(tmp_path_factory) -> None:
    """New stores copy the empty-store template from this run's own cache, not ~/.cache.

    Each xdist worker has a cache folder of its own (live state, spools); the template in it
    is a copy of the one built once for the run (~3 CPU-s a build, both workers need it).
    Without xdist it is built in the cache when a test first creates a store."""
    own = tmp_path_factory.mktemp("brainlab-cache")
    os.environ.setdefault(RUN_TEMPLATE_ENV, str(run_folder(tmp_path_factory)))  # for nested runs
    if _xdist_worker(tmp_path_factory):
        os.environ[CACHE_ENV] = str(built_once(tmp_path_factory, "store-template",
                                               _build_template))
        seeded_cache(own)
    os.environ[CACHE_ENV] = str(own)
    # a bug in a command run by a test shows its traceback (and fails the test) instead of
    # the user's one-line "Error: unexpected ..." (tests/test_cli_unexpected.py covers that)
    os.environ["BRAINLAB_DEBUG"] = "1"


def _build_template(folder: Path) -> None:
    from brainlab.store import template
    from brainlab.store.schema import _build_empty, template_key

    os.environ[CACHE_ENV] = str(folder)
    if not _template_of_outer_run(folder):
        template.ensure(template_key(), _build_empty)


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """A CLI subprocess's environment apart from this machine and from the test run's: this
    checkout on PYTHONPATH, ``HOME=home`` (no user config, no ~/.cache), the system PATH, no
    BRAINLAB_DEBUG (the user's one-line errors), and ``extra``.

    The run's own cache folder is kept: a new store copies the empty-store template built once
    per run there, instead of building it in each test's fresh HOME (~3 CPU-s a store, issue
    28 item 1; brainlab/store/template.py). It is this run's temporary folder, never the
    machine's.
    """
    return {"PYTHONPATH": os.pathsep.join(sys.path), "HOME": str(home), "PATH": "/usr/bin:/bin",
            CACHE_ENV: os.environ[CACHE_ENV], **extra}


def seeded_cache(folder: Path) -> Path:
    """``folder`` made a cache folder holding the run's empty-store template: for a test that
    needs a cache of its own (live state, spools, limits snapshots) and creates stores, which
    are then copied from the template instead of built (~3 CPU-s each, issue 28 item 1)."""
    from brainlab.store import template
    from brainlab.store.schema import _build_empty, template_key

    source = template.ensure(template_key(), _build_empty)  # in the run's cache: once a run
    folder.mkdir(parents=True, exist_ok=True)
    if source is not None:
        shutil.copy(source, folder / source.name)
    return folder


@pytest.fixture
def brain(tmp_path: Path) -> Path:
    """An empty brain folder to write crafted files into."""
    root = tmp_path / "brain"
    root.mkdir()
    return root


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A database path (the file is created by the first ingest)."""
    return tmp_path / "brainlab.duckdb"


@pytest.fixture(scope="session")
def demo(tmp_path_factory) -> dict:
    """A 12-week synthetic brain (seed 7) with its transcripts, ingested once for the whole run
    (both workers: :func:`built_once`); tests read it, a test that writes uses a copy."""
    def build(base: Path) -> None:
        # brain files, then the demo's transcripts, as `brainlab demo`
        manifest = build_store(base / "brain", base / "brainlab.duckdb", weeks=12, seed=7,
                               workers=1)
        (base / "manifest.pickle").write_bytes(pickle.dumps(manifest))

    base = built_once(tmp_path_factory, "demo", build)
    manifest = pickle.loads((base / "manifest.pickle").read_bytes())
    return {"root": base / "brain", "db": base / "brainlab.duckdb", "manifest": manifest,
            "planted": {p["effect"].split(":")[0]: p for p in manifest.planted}}


REPO = Path(__file__).resolve().parent.parent


def _shared() -> Path:
    """The read-only ``shared/`` folder beside the checkout (CI lays it there), else /work/shared."""
    for candidate in (REPO.parent / "shared", Path("/work/shared")):
        if candidate.is_dir():
            return candidate
    return REPO.parent / "shared"


SHARED = _shared()
CORPUS = SHARED / "corpora" / "claude-code"                       # real public transcripts
TEMPLATE_BRAIN = SHARED / "reference" / "cortex-template" / "Tetardtek__Cortex-template"


def smallest_projects(count: int) -> list[Path]:
    """The ``count`` corpus projects holding the fewest transcript bytes: a small real team
    tree for the Spark tests, whose cost follows the lake's size (issue 28 item 1)."""
    projects = (p for p in (CORPUS / "projects").iterdir() if p.is_dir())
    return sorted(projects, key=lambda p: sum(f.stat().st_size for f in p.rglob("*.jsonl")))[:count]


@pytest.fixture(scope="session")
def corpus_store(tmp_path_factory) -> Path:
    """A store holding only the real transcripts of ``shared/corpora`` (no brain files)."""
    if not CORPUS.is_dir():
        pytest.fail(f"the real corpus is missing at {CORPUS}")

    def build(folder: Path) -> None:
        con = open_writer(folder / "brainlab.duckdb")
        try:
            ingest_claude(con, CORPUS, workers=1)
        finally:
            con.close()

    return built_once(tmp_path_factory, "corpus", build) / "brainlab.duckdb"


@pytest.fixture(scope="session")
def template_store(tmp_path_factory) -> Path:
    """A store holding the public template brain (agents, contexts, claims; no metabolism logs)."""
    if not TEMPLATE_BRAIN.is_dir():
        pytest.fail(f"the template brain is missing at {TEMPLATE_BRAIN}")
    return built_once(tmp_path_factory, "template",
                      lambda folder: ingest_brain(TEMPLATE_BRAIN, folder / "brainlab.duckdb")
                      ) / "brainlab.duckdb"


@pytest.fixture(scope="session")
def empty_store(tmp_path_factory) -> Path:
    """A store with the schema and no rows (what a user has before any ingest succeeds)."""
    return built_once(tmp_path_factory, "empty",
                      lambda folder: open_writer(folder / "brainlab.duckdb").close()
                      ) / "brainlab.duckdb"


__all__ = ["CORPUS", "SHARED", "TEMPLATE_BRAIN", "built_once", "cli_env", "ingest_brain", "query",
           "run_folder", "seeded_cache", "smallest_projects", "write"]


# --- issue 28 items 1, 7: kernel tests spread over both workers, grouped by what they share ---
# The papermill hang was a missed wake-up in the kernel client (brainlab.lab.kernels.WakefulClient
# fixes it for brainlab's runs; docs/notebooks.md), not kernels started together: kernel tests
# need not run one after another. A group keeps on one worker the tests sharing a session's
# kernels (tests/notebook_runs.py), a module's store or a lab; groups run in parallel
# (--dist loadgroup). A test marked with its own xdist_group keeps it.
KERNEL_GROUPS = {
    "test_notebooks.py": "notebooks",          # one kernel per store, shared (notebook_runs)
    "test_notebooks_export.py": "notebooks",   # exports the demo runs of notebook_runs
    "test_notebook_names.py": "notebooks",     # reads the demo runs of notebook_runs
    "test_notebooks_measured.py": "papermill",  # fresh kernels (warnings show once per kernel)
    "test_measured_report.py": "measured",     # module store of the demo's transcripts
    "test_store_unavailable.py": "unavailable",
    "test_lab_browser.py": "lab",              # one JupyterLab and one browser for the file
    "test_cli_lab.py": "lab",
    "test_report.py": "reports", "test_report_units.py": "reports",
    "test_report_sections.py": "reports", "test_report_layout.py": "reports",
    "test_cli_report.py": "reports2", "test_cli_brain.py": "reports2",
    "test_lake_report.py": "reports2",
    "test_kernels.py": "concurrent",          # 8 notebook runs at once: start it early
    "test_notebook_runners.py": "concurrent",  # stock papermill runs at once
    "test_docs_notebooks.py": "papermill",     # the documented papermill runs, fresh kernels
}


def _register_papermill_engine() -> None:
    """``engine_name="brainlab"`` in this process even before pip registered the entry point."""
    from papermill.engines import papermill_engines

    from brainlab.lab.kernels import BrainlabEngine

    papermill_engines.register("brainlab", BrainlabEngine)


def pytest_configure(config):
    _register_papermill_engine()
    register_timeline(config)  # BRAINLAB_TEST_TIMELINE=FILE: per-worker timeline (docs/testing.md)
    # pytest-xdist >= 3.6 reorders work units by their number of tests (--loadscope-reorder, on
    # by default): a group of 50 one-second tests would start before a group of 8 long ones.
    # Keep the longest-first order of pytest_collection_modifyitems (= --no-loadscope-reorder).
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def _kernel_group(item) -> str | None:
    """The xdist group of a test that starts Jupyter kernels (KERNEL_GROUPS), else None."""
    return KERNEL_GROUPS.get(item.path.name)


@pytest.hookimpl(tryfirst=True)  # before xdist's worker hook turns the marks into group names
def pytest_collection_modifyitems(config, items):
    for item in items:
        group = _kernel_group(item)
        if group and not _marked_group(item):  # xdist joins two group marks into a new name
            item.add_marker(pytest.mark.xdist_group(group))
    # longest first (issue 28 item 1): xdist hands out work units (a group, or one ungrouped
    # test) in this order once pytest_configure above turned its reordering off, so the long
    # groups start at once on both workers and the short tests fill the end of the run
    items.sort(key=_schedule_rank)


def _marked_group(item) -> bool:
    return any(mark.name == "xdist_group" for mark in item.iter_markers())


# The order work starts in, longest first: groups by their total seconds, then the files of the
# slowest ungrouped tests, then the rest in collection order. Group seconds and SLOW_FILES from
# the timeline of the hog run of 2026-12-06 07:00 (`python tests/timeline.py`,
# docs/testing.md). Only the order matters, a group not listed would start after those
# listed, and no test depends on it (tests/test_suite_schedule.py checks that every group is
# listed).
GROUP_SECONDS = {  # the groups' wall seconds in the timeline of the hog run of 2026-12-06 07:00
    # (1,423 tests; docs/testing.md), concurrent less the 120 s wait b3a8177 removed
    "spark": 133, "lab": 112, "notebooks": 93, "reports2": 68, "spark_cluster": 46,
    "concurrent": 31, "papermill": 30, "reports": 19, "measured": 14, "kernels": 10,
    "unavailable": 7,
    "report_trends": 25, "trends_null": 14,  # stop 26: from the same run's ungrouped tests
}
SLOW_FILES = (  # the longest single tests first (setup included), by the same timeline
    "test_report_trends.py", "test_report_once.py", "test_trends.py", "test_tune_sessions.py",
    "test_live_safety.py", "test_hostile_numbers.py", "test_fuzz_brain.py", "test_docs.py",
    "test_claude_record.py", "test_store_upgrade.py", "test_ingest.py", "test_model_data.py",
    "test_hostile_settings.py", "test_notebook_tour.py", "test_usage_reconcile.py",
    "test_report_whatif.py", "test_store_template.py", "test_usage_team.py",
    "test_tables_fit.py", "test_claude_fuzz.py", "test_usage_rollup.py", "test_redact_rules.py",
    "test_suite_schedule.py", "test_otel_ingest.py", "test_claude_counting.py",
    "test_rules_boot_close.py", "test_rules_modes.py", "test_report_timezone.py",
    "test_otel_synth.py", "test_usage_time.py", "test_claude_ingest_paths.py")


def _schedule_rank(item) -> tuple:
    group = group_of(item)
    if group != "-":
        return (0, -GROUP_SECONDS.get(group, 0))
    if item.path.name in SLOW_FILES:
        return (1, SLOW_FILES.index(item.path.name))
    return (2, 0)


# --- issue 28 item 1: a pytest run started by a test copies its run's template ---
RUN_TEMPLATE_ENV = "BRAINLAB_TEST_RUN_FOLDER"  # set by the outermost run, inherited


def _template_of_outer_run(folder: Path) -> bool:
    """Copy into ``folder`` the empty-store template the outer test run built, when this is a
    pytest started by one of its tests (tests/test_suite_schedule.py) and it has one: a
    nested xdist run built its own (~2.6 CPU-s). False when there is none to copy."""
    from brainlab.store import template
    from brainlab.store.schema import template_key

    outer = os.environ.get(RUN_TEMPLATE_ENV)
    if not outer or Path(outer) == folder.parent:  # the outermost run: it builds
        return False
    source = Path(outer) / "shared-store-template" / template.template_path(template_key()).name
    if not source.is_file():
        return False
    shutil.copy(source, folder / source.name)
    return True


# --- issue 28 item 1: report renders and stores shared by several report test files ---
# A week's render costs ~3-6 CPU-s (a kernel start, imports, the sections, the charts); where
# several files render the same week of the same store and only read the page, it is rendered
# once per run (built_once) and the tests read it. Tests must not write into these folders.
CORPUS_SINCE = "2026-W31"  # the corpus's last two weeks: W31, and W32 its latest


@pytest.fixture
def charts_here(monkeypatch):
    """Charts converted in this process (``BRAINLAB_REPORT_CHART_PROCESS=0``), not in a chart
    process started per render: a render in this process then costs ~0.9 CPU-s less, the
    engine warm after its first start (issue 28 item 1). The SVGs are the chart process's
    byte for byte (test_report_once.py's chart process test); the converter's globals
    are put back after the test."""
    from brainlab.report import sections

    monkeypatch.setenv(sections.CHART_PROCESS_ENV, "0")
    monkeypatch.setattr(sections, "_CHARTS_READY", None)
    monkeypatch.setattr(sections, "_CHARTS", None)


@pytest.fixture(scope="session")
def corpus_reports(corpus_store, tmp_path_factory) -> Path:
    """The output folder of ``brainlab report weekly --db CORPUS --since 2026-W31`` (the CLI
    in a subprocess, as a user runs it): the weeks 2026-W31 and 2026-W32 and the index.
    Read by test_report_shapes.py (W31, the index) and test_report_layout.py (the latest
    week, W32), which rendered W32 a second time."""
    def build(folder: Path) -> None:
        import subprocess

        done = subprocess.run([str(Path(sys.executable).parent / "brainlab"), "report",
                               "weekly", "--db", str(corpus_store), "--out",
                               str(folder / "reports"), "--since", CORPUS_SINCE], cwd=folder,
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr

    return built_once(tmp_path_factory, "corpus-reports", build) / "reports"


@pytest.fixture(scope="session")
def cli_demo(tmp_path_factory) -> dict:
    """``brainlab demo --dir demo --weeks 3 --seed 3`` as a user types it (the console script
    in a subprocess, an 80-column terminal), once a run (built_once; read only): synthesize,
    ingest the brain, its transcripts and telemetry, print the summary, render the latest
    week (papermill). test_cli_brain.py checks what it prints and writes; test_otel_synth.py
    the telemetry section of the page it rendered, where it rendered a 1-week store of its
    own by ``report weekly`` (issue 28 item 1). ``done`` (returncode, stdout, stderr),
    ``folder`` (the command's working folder: ``demo/`` is in it), ``page``."""
    import json
    import subprocess

    def build(folder: Path) -> None:
        done = subprocess.run([str(Path(sys.executable).with_name("brainlab")), "demo", "--dir",
                               "demo", "--weeks", "3", "--seed", "3"], cwd=folder,
                              env={**os.environ, "COLUMNS": "80"}, capture_output=True,
                              text=True, timeout=900)
        (folder / "command.json").write_text(json.dumps({
            "args": done.args, "returncode": done.returncode, "stdout": done.stdout,
            "stderr": done.stderr}))

    folder = built_once(tmp_path_factory, "cli-demo", build)
    record = json.loads((folder / "command.json").read_text())
    done = subprocess.CompletedProcess(record["args"], record["returncode"], record["stdout"],
                                       record["stderr"])
    pages = sorted((folder / "demo" / "reports").glob("*/weekly_health.html"))
    return {"done": done, "folder": folder, "page": pages[-1] if pages else None}


@pytest.fixture(scope="module")
def playwright_driver():
    """The module's one Playwright (its sync API allows one a thread): every test driving
    Chromium launches it from this driver. Stopped at the module's end: a running driver
    leaves its asyncio loop set as the thread's running loop, and a later test's
    ``asyncio.run`` in the same worker fails (test_kernels.py did, with the driver kept for
    the session)."""
    from playwright.sync_api import sync_playwright

    driver = sync_playwright().start()
    yield driver
    driver.stop()


@pytest.fixture(scope="module")
def report_browser(playwright_driver):
    """One headless Chromium per test module for its report checks (report_helpers.Browser: a
    new page a check), launched on first use, closed with the module's driver (issue 28
    item 1: a Chromium process per check before)."""
    from report_helpers import Browser

    browser = Browser(playwright_driver)
    yield browser
    browser.close()


@pytest.fixture(scope="session")
def small_report_store(tmp_path_factory) -> dict:
    """A 3-week synthetic brain (seed 5) with the report tests' HTML payloads, ingested once
    per run (report_helpers.build_brain_db): test_cli_report.py and test_report_early_kernel.py
    each built one of their own. Read only; ``weeks``: its ISO weeks holding a session."""
    from report_helpers import build_brain_db

    def build(folder: Path) -> None:
        _db, manifest = build_brain_db(folder, weeks=3, seed=5)
        (folder / "manifest.pickle").write_bytes(pickle.dumps(manifest))

    folder = built_once(tmp_path_factory, "small-report-store", build)
    manifest = pickle.loads((folder / "manifest.pickle").read_bytes())
    return {"root": folder, "db": folder / "brainlab.duckdb", "manifest": manifest,
            "weeks": sorted({f"{s.started_at:%G-W%V}" for s in manifest.sessions})}


@pytest.fixture(scope="session")
def small_week_command(small_report_store, tmp_path_factory) -> dict:
    """``brainlab report weekly --week LAST`` on :func:`small_report_store` (the CLI in a
    subprocess, its kernel starts logged: report_helpers.report_command), once per run across
    xdist workers (built_once): test_report_early_kernel.py checks its one kernel,
    test_cli_report.py fails a run over a copy of its output, test_report.py reads the page,
    the notebook and summary.json (issue 28 item 1: each rendered a week of its own, and
    test_report.py built an 8-week store for it). Read only. ``done`` (the command's
    returncode, stdout, stderr), ``starts``, ``out``, ``week``."""
    return _command_once(tmp_path_factory, "small-week-command", small_report_store["db"],
                         small_report_store["weeks"][-1], fail_starts=0)


@pytest.fixture(scope="session")
def small_empty_week_command(small_report_store, tmp_path_factory) -> dict:
    """``brainlab report weekly --week W`` on :func:`small_report_store`, W the week before its
    first (no session), the command's early kernel dying at once (report_command's
    fail_starts=1), once per run (built_once; read only): test_report_early_kernel.py checks
    that papermill's own kernel rendered it, test_report.py the no-sessions page (issue 28
    item 1: each rendered an empty week of its own). As :func:`small_week_command`."""
    from brainlab.metrics.report import Week

    week = Week.parse(small_report_store["weeks"][0]).shifted(-1).label
    return _command_once(tmp_path_factory, "small-empty-week-command",
                         small_report_store["db"], week, fail_starts=1)


def _command_once(tmp_path_factory, name: str, db: Path, week: str, fail_starts: int) -> dict:
    """report_helpers.report_command of ``week`` once per run (built_once), its result read
    back: the CompletedProcess (``done``), the kernel ``starts``, the ``out`` folder."""
    import json
    import subprocess

    from report_helpers import report_command

    def build(folder: Path) -> None:
        done, starts = report_command(folder, (db, week), fail_starts=fail_starts)
        (folder / "command.json").write_text(json.dumps({
            "args": done.args, "returncode": done.returncode, "stdout": done.stdout,
            "stderr": done.stderr, "starts": starts}))

    folder = built_once(tmp_path_factory, name, build)
    record = json.loads((folder / "command.json").read_text())
    done = subprocess.CompletedProcess(record["args"], record["returncode"], record["stdout"],
                                       record["stderr"])
    return {"done": done, "starts": record["starts"], "out": folder / "reports", "week": week}
