"""The notebooks in JupyterLab as a person uses them: `brainlab lab`, Chromium, Run All Cells.

A real `brainlab lab` on a free port against the demo database; Debian's chromium driven by
Playwright (``executable_path=/usr/bin/chromium``, no browser download) whose host resolver
fails every name, so nothing leaves the machine; every request not addressed to the lab is
recorded and fails the test. JupyterLab is loaded once, in one page, and each numbered
notebook opened in it in turn (File > Open from Path, then Close and Shut Down). For each:
Run All Cells, then no error output, no "Error loading script", no failed or blocked request,
and every chart output holds a drawn SVG or canvas; on 01 and 04 one slider is moved and a
chart below it must change without re-running a cell. A screenshot of each notebook's first
screenful is written to the pytest tmp dir (``lab-screens/``); with ``BRAINLAB_LAB_SCREENS=all``
one per screenful, top to bottom, for a person to look at (each costs a scroll and 0.4 s for the
outputs to attach: ~40 s a run, issue 28.1). The lab is stopped by a signal to its PID and no
process it started may outlive it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
import urllib.request
from pathlib import Path

import psutil
import pytest
from lab_process import free_port, port_open, start_lab, stop_group

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
TOKEN = "brainlab-browser-test"
# the slider each interactive notebook moves: (notebook, slider label prefix, key, presses)
SLIDERS = {"01_metabolism_trends.ipynb": ("dates", "ArrowLeft", 20),
           "04_threshold_tuning.ipynb": ("coach_ratio", "ArrowRight", 6)}
DRAWN = ("els => els.map(e => { const c = e.querySelector('canvas'); const s = "
         "e.querySelector('svg'); if (c) return c.width > 0 && c.height > 0 && "
         "c.toDataURL().length > 1000; return !!s && s.querySelectorAll('path, rect, text')"
         ".length > 0; })")
SIGNATURE = ("e => { const c = e.querySelector('canvas'); return c ? c.toDataURL() : "
             "(e.querySelector('svg') || e).innerHTML; }")

playwright = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[dev]'")


@pytest.fixture(scope="module")
def lab(demo, tmp_path_factory):
    """A running `brainlab lab` on the demo database; stopped by SIGTERM to its PID after."""
    runtime = tmp_path_factory.mktemp("lab-runtime")
    tracked = {path: path.read_bytes() for path in NOTEBOOKS}
    port = free_port()  # the lab serves its own copies of notebooks/ (JupyterLab autosaves)
    proc = start_lab(demo["db"], port, TOKEN, runtime, runtime / "lab.log",
                     runtime / "notebooks")
    started: dict[int, psutil.Process] = {}  # every process the lab started (kernels too)
    info = {"port": port, "base": f"http://127.0.0.1:{port}", "pid": proc.pid,
            "started": started}
    try:
        yield info
        started.update({c.pid: c for c in psutil.Process(proc.pid).children(recursive=True)})
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
        _gone, alive = psutil.wait_procs(list(started.values()), timeout=30)
        assert not alive, f"processes left behind by brainlab lab: {alive}"
        assert not port_open(port)
        changed = [p.name for p, text in tracked.items() if p.read_bytes() != text]
        assert not changed, f"running the notebooks in the lab changed tracked files: {changed}"
    finally:
        stop_group(proc)
        for child in started.values():
            if child.is_running():
                child.kill()


@pytest.fixture(scope="module")
def browser(playwright_driver):
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} missing: `make browser` installs it")
    # the module's Playwright (conftest.playwright_driver, stopped at the module's end)
    chromium = playwright_driver.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
    # one context for the file: its HTTP cache keeps JupyterLab's scripts (served
    # "immutable") from the first page on, instead of each page downloading and the lab
    # serving them again (issue 28 item 1); each notebook still gets a page of its own
    context = chromium.new_context(viewport={"width": 1280, "height": 1000})
    yield context
    context.close()
    chromium.close()


def _remember_children(lab) -> None:
    """Note every process the lab runs now (its kernels), for the check that none outlives it."""
    children = psutil.Process(lab["pid"]).children(recursive=True)
    lab["started"].update({c.pid: c for c in children})


def _shutdown_kernels(lab) -> None:
    """Delete every kernel session of the lab (a run leaves its kernel idle otherwise)."""
    _remember_children(lab)
    auth = {"Authorization": f"token {TOKEN}"}
    with urllib.request.urlopen(urllib.request.Request(f"{lab['base']}/api/sessions",
                                                       headers=auth)) as reply:
        sessions = json.load(reply)
    for session in sessions:
        urllib.request.urlopen(urllib.request.Request(
            f"{lab['base']}/api/sessions/{session['id']}", method="DELETE", headers=auth))


def _open(browser, lab, shown: dict, name: str):
    """The lab's page on the notebook ``name``: (page, other hosts' urls, failed requests).

    The first notebook loads JupyterLab in a new page; the next ones open in that page as a
    person opens the next notebook (File > Open from Path), the one before closed and shut
    down: JupyterLab's scripts are parsed and run once for the file, not once a notebook (~6
    CPU-s of chromium each, issue 28 item 1). ``shown`` holds the page and what it recorded
    since the last test read it. Requests are recorded, not intercepted: Playwright's
    interception turns the HTTP cache off. A request to another host fails at the host
    resolver (FLAGS) and is recorded."""
    page = shown.get("page")
    if page is None or page.is_closed():
        page = browser.new_page()
        blocked, failed = [], []
        own = (f"http://127.0.0.1:{lab['port']}/", f"ws://127.0.0.1:{lab['port']}/")

        def seen(request):
            if not request.url.startswith((*own, "data:", "blob:")):
                blocked.append(request.url)

        page.on("request", seen)
        page.on("requestfailed", lambda r: failed.append(f"{r.url} {r.failure}"))
        shown.update(page=page, blocked=blocked, failed=failed)
        page.goto(f"{lab['base']}/lab/tree/{name}?token={TOKEN}&reset")  # no restored tabs
    else:
        _menu(page, "File", "Open from Path…")
        page.locator(".jp-Dialog input").fill(name)
        page.locator(".jp-Dialog .jp-mod-accept").click()
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    page.wait_for_selector("#jp-main-statusbar >> text=Idle", timeout=120_000)
    news = page.get_by_role("button", name="No")  # "get notified about Jupyter news?" toast
    if news.count():
        news.first.click()
    return page, shown["blocked"], shown["failed"]


def _menu(page, menu: str, item: str) -> None:
    """Click ``item`` in the menu bar's ``menu``."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{menu}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{re.escape(item)}$")).click()


def _close_notebook(page) -> None:
    """File > Close and Shut Down Notebook: the page is left with no notebook, as before one."""
    _menu(page, "File", "Close and Shut Down Notebook…")
    page.locator(".jp-Dialog .jp-mod-warn").click()
    page.wait_for_selector(".jp-NotebookPanel", state="detached", timeout=60_000)


def _run_all(page, timeout: float = 300) -> None:
    _menu(page, "Run", "Run All Cells")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.25)  # was 1 s: half a second lost per notebook on average (issue 28.1)
        prompts = page.eval_on_selector_all(".jp-CodeCell .jp-InputPrompt",
                                            "els => els.map(e => e.textContent.trim())")
        if (prompts and all(re.fullmatch(r"\[\d+\]:", p) for p in prompts)
                and page.locator("#jp-main-statusbar >> text=Idle").count()):
            return
    raise AssertionError(f"Run All Cells did not finish in {timeout} s: {prompts}")


def _charts_settled(page, timeout: float = 120, still: float = 1.5) -> list[bool]:
    """Per chart on the page, whether it holds a drawing, once all are drawn and their number
    has not changed for ``still`` seconds (the last widgets' views attach after the kernel
    idles). Polled every 0.25 s: a fixed 2 s wait and 2 s polls cost ~4 s a notebook."""
    charts = page.locator(".jp-OutputArea-output .vega-embed")
    deadline, last, since = time.monotonic() + timeout, None, time.monotonic()
    while time.monotonic() < deadline:
        drawn = page.evaluate(DRAWN, charts.element_handles())
        if drawn != last:
            last, since = drawn, time.monotonic()
        elif drawn and all(drawn) and time.monotonic() - since >= still:
            return drawn
        time.sleep(0.25)
    return last or []


def _screenshots(page, folder: Path, stem: str, most: int = 40) -> None:
    """The notebook as pictures: its first screenful, or with ``BRAINLAB_LAB_SCREENS=all``
    one per screenful, scrolling the notebook top to bottom."""
    scroller = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer"
    height, step = page.eval_on_selector(scroller, "e => [e.scrollHeight, e.clientHeight]")
    if os.environ.get("BRAINLAB_LAB_SCREENS") != "all":
        most = 1
    for part in range(min(most, -(-height // max(step, 1)))):
        page.eval_on_selector(scroller, f"e => {{ e.scrollTop = {part * step}; }}")
        page.wait_for_timeout(400)  # cells scrolled into view attach their outputs
        page.screenshot(path=str(folder / f"{stem}-{part + 1:02d}.png"))


def _move_slider(page, label: str, key: str, presses: int) -> float:
    """Move the slider labelled ``label``; return seconds until a chart below it changed."""
    slider = page.locator(".widget-slider", has=page.locator(".widget-label",
                                                             has_text=label)).first
    # a panel's charts are outputs of its cell below the controls (brainlab.viz.widgets.Panel)
    panel = slider.locator("xpath=ancestor::div[contains(@class, 'jp-CodeCell')][1]")
    chart = panel.locator(".vega-embed").first
    chart.scroll_into_view_if_needed()
    before = chart.evaluate(SIGNATURE)
    handle = slider.locator(".noUi-handle").last
    handle.focus()
    start = time.monotonic()
    for _ in range(presses):
        page.keyboard.press(key)
    deadline = start + 60
    while time.monotonic() < deadline:
        current = panel.locator(".vega-embed").first
        if current.count() and page.evaluate(DRAWN, [current.element_handle()])[0] \
                and current.evaluate(SIGNATURE) != before:
            return time.monotonic() - start
        time.sleep(0.05)
    raise AssertionError(f"moving {label} changed no chart of its panel")


@pytest.fixture(scope="module")
def shown():
    """The one page of the file (see :func:`_open`), closed after the last notebook."""
    holder: dict = {}
    yield holder
    if holder.get("page") is not None and not holder["page"].is_closed():
        holder["page"].close()


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_in_jupyterlab(path, lab, browser, shown, tmp_path_factory):
    screens = tmp_path_factory.getbasetemp() / "lab-screens"
    screens.mkdir(exist_ok=True)
    try:
        page, blocked, failed = _open(browser, lab, shown, path.name)
    except Exception:
        if shown.get("page") is not None:
            shown["page"].close()  # the next notebook starts on a new page
        _shutdown_kernels(lab)
        raise
    passed = False
    try:
        _run_all(page)
        drawn = _charts_settled(page)  # the outputs settled: then read the errors
        errors = page.locator(".jp-OutputArea-output[data-mime-type="
                              "'application/vnd.jupyter.stderr']").all_inner_texts()
        assert not [e for e in errors if "Error" in e or "Traceback" in e], errors
        assert page.get_by_text("Error loading script").count() == 0
        assert drawn, "no chart drew (no .vega-embed on the page)"
        assert all(drawn), f"{drawn.count(False)} of {len(drawn)} charts hold no drawing"
        if path.name in SLIDERS:
            seconds = _move_slider(page, *SLIDERS[path.name])
            print(f"{path.name}: slider redraw {seconds:.2f} s (browser, shared machine)")
        _screenshots(page, screens, path.stem)
        assert not blocked, f"requests to other hosts: {blocked}"
        assert not failed, f"failed requests: {failed}"
        passed = True
    finally:
        blocked.clear()
        failed.clear()
        _remember_children(lab)
        try:
            if passed:
                _close_notebook(page)
        finally:
            if not passed or page.is_closed() or page.locator(".jp-NotebookPanel").count():
                page.close()  # after a failure the next notebook starts on a new page
        _shutdown_kernels(lab)
