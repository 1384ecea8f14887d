"""Helpers shared by the report tests: a synthetic brain with planted HTML payloads, and a
real headless Chromium with the network off (DESIGN §3 "a real browser for the HTML report").

One Chromium per test module (Debian's binary driven by Playwright: ``Browser``, the
module fixture ``report_browser`` in conftest.py), one tab that each check navigates to its page
(a new document each time), each page loaded once for its DOM, console, screenshot and
measures: a ``chromium --headless`` process per check cost ~1.3 CPU-s (issue 28 item 1,
docs/testing.md stop 21), a new tab per check ~0.1 more than a navigation (issue 40). A
check reads the DOM after the load event (scripts ran, so an executed payload shows) and every
console message and uncaught error; the host resolver maps every name to NOTFOUND and the
proxy points at a closed port, so any request off the machine fails (a console error).
"""

from __future__ import annotations

import html.parser
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from brainlab.store import ingest, open_writer
from brainlab.synth import SynthOptions, synthesize
from brainlab.transcripts.ingest import ingest_claude

# Payloads whose execution would show in the dumped DOM (an attribute on <body>, the title).
PWN_NOTE = ("<img src=x onerror=\"document.body.setAttribute('data-pwned','note')\"> "
            "<script>document.title='pwned';document.body.setAttribute('data-pwned','script')"
            "</script> <svg onload=\"document.body.setAttribute('data-pwned','svg')\"></svg>")
PWN_FILE = "<img src=x onerror=document.body.setAttribute('data-pwned','file')>.md"

CHROMIUM = os.environ.get("BRAINLAB_CHROMIUM") or shutil.which("chromium") or \
    shutil.which("chromium-browser") or "/usr/bin/chromium"


def build_brain_db(root: Path, weeks: int = 8, seed: int = 11) -> tuple[Path, object]:
    """Synthesize a brain, plant the test payloads, ingest it; return (db, manifest)."""
    brain = root / "brain"
    manifest = synthesize(brain, SynthOptions(weeks=weeks, seed=seed))
    last = manifest.sessions[-1]
    log = next((brain / "progression" / "metabolism").glob(f"*{last.sess_id}.md"))
    # the notes paragraph is the log's last line: the payload joins it
    log.write_text(log.read_text(encoding="utf-8").rstrip("\n") + f" {PWN_NOTE}\n",
                   encoding="utf-8")
    workspace = next(p for p in sorted((brain / "workspace").iterdir()) if p.is_dir())
    (workspace / PWN_FILE).write_text("planted by the report tests\n", encoding="utf-8")
    db = root / "brainlab.duckdb"
    con = open_writer(db)
    try:
        ingest.ingest_brain(con, brain)
        ingest_claude(con, brain / "claude", workers=1)  # the demo's transcripts (SPEC §7)
    finally:
        con.close()
    return db, manifest


def chromium_available() -> bool:
    """True when a Chromium binary and Playwright are present (CI installs Debian's chromium
    and the dev extra)."""
    return Path(CHROMIUM).exists() and importlib.util.find_spec("playwright") is not None


# Playwright's own switches cover the rest (no first run, extensions, background networking);
# its --hide-scrollbars is left off: a page is measured as a person's browser shows it
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-sync",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9"]


class Loaded(NamedTuple):
    """What a check read: the DOM after load, the console lines, ``script``'s result."""

    dom: str
    console: list[str]
    measured: object


class Browser:
    """One headless Chromium for a test module's report checks, launched on first use from
    the module's Playwright driver; every check navigates one tab of one context to its page
    (a new tab ~0.1 CPU-s more a check, issue 40), a new tab after a screenshot or a failed
    load."""

    def __init__(self, driver) -> None:
        self._driver = driver
        self._browser = self._context = self._tab = None
        self._console: list[str] = []

    def _open_tab(self):
        if self._context is None:
            self._browser = self._driver.chromium.launch(
                executable_path=CHROMIUM, args=FLAGS, ignore_default_args=["--hide-scrollbars"])
            self._context = self._browser.new_context()
        if self._tab is None:
            tab = self._context.new_page()
            # the list of the load under way (a new one each load)
            tab.on("console", lambda m: self._console.append(
                f"CONSOLE {m.type}: {m.text} ({m.location['url']}:{m.location['lineNumber']})"))
            tab.on("pageerror", lambda e: self._console.append(
                "Uncaught error: " + (f"{e.name}: " if e.name else "") + e.message))
            self._tab = tab
        return self._tab

    def load(self, page: Path, width: int = 1280, height: int = 900, png: Path | None = None,
             script: str | None = None) -> Loaded:
        """Load ``page`` (to the load event) in a ``width`` x ``height`` px viewport with
        scrollbars; return its DOM, its console messages and uncaught errors (a line each,
        ``CONSOLE <type>: ...`` or ``Uncaught error: ...``) and what the JS function
        ``script`` returned, run after them through DevTools (the page's CSP does not apply);
        with ``png``, then save the viewport there, scrollbars hidden."""
        tab = self._open_tab()
        self._console = console = []
        kept = False
        try:
            tab.set_viewport_size({"width": width, "height": height})
            tab.goto(page.resolve().as_uri(), wait_until="load", timeout=60_000)
            dom = tab.evaluate("document.documentElement.outerHTML")
            seen = Loaded(dom, list(console), tab.evaluate(script) if script else None)
            if png is not None:  # the tab keeps its scrollbars hidden: not kept
                self._context.new_cdp_session(tab).send("Emulation.setScrollbarsHidden",
                                                        {"hidden": True})
                tab.screenshot(path=str(png))
            else:
                kept = True
            return seen
        finally:
            if not kept:
                tab.close()
                self._tab = None

    def close(self) -> None:
        if self._browser is not None:
            self._context.close()
            self._browser.close()
            self._browser = self._context = self._tab = None


class ActiveContent(html.parser.HTMLParser):
    """Collect every element that could run code: <script>, on* attributes, javascript: URLs."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "iframe", "object", "embed", "foreignobject"):
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            if name.lower().startswith("on") or "javascript:" in (value or "").lower():
                self.found.append(f"<{tag} {name}={value!r}>")


def active_content(markup: str) -> list[str]:
    """Every element of ``markup`` that could execute (empty list = inert document)."""
    parser = ActiveContent()
    parser.feed(markup)
    return parser.found


# A python3 kernel spec in front of the installed one (JUPYTER_PATH comes first): each start
# is logged; it exits at once while FAIL_STARTS says so, then runs ipykernel.
FLAKY = """
import os, sys
log = os.environ["KERNEL_LOG"]
with open(log, "a") as f:
    f.write("start\\n")
starts = sum(1 for _ in open(log))
if starts <= int(os.environ["FAIL_STARTS"]):
    sys.exit(3)
from ipykernel import kernelapp
sys.argv = ["ipykernel_launcher", *sys.argv[1:]]
kernelapp.launch_new_instance()
"""


def report_command(folder: Path, store: tuple[Path, str], fail_starts: int
                   ) -> tuple[subprocess.CompletedProcess, list[str]]:
    """``brainlab report weekly --week WEEK --db DB --out folder/reports`` in a subprocess
    (``store`` = (DB, WEEK)) with the FLAKY kernel spec (its first ``fail_starts`` starts
    exit at once); returns the process and the kernel starts it logged."""
    from brainlab.report import runner

    spec = folder / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-c", FLAKY, "-f", "{connection_file}"],
        "display_name": "Python 3", "language": "python"}))
    log = folder / "kernels.log"
    env = {**os.environ, "JUPYTER_PATH": str(folder / "jupyter"),
           "KERNEL_LOG": str(log), "FAIL_STARTS": str(fail_starts)}
    env.pop(runner.EARLY_ENV, None)
    db, week = store
    done = subprocess.run([str(Path(sys.executable).with_name("brainlab")), "report", "weekly",
                           "--week", week, "--db", str(db), "--out", str(folder / "reports")],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=600)
    return done, log.read_text().splitlines() if log.exists() else []
