"""Issue 28 item 6: notebooks 01 and 06 on the real transcripts corpus alone (no brain).

Run through the ``papermill`` command, as docs/notebooks.md shows, each in a kernel of its own
(a warning is shown once per kernel: a shared kernel could hide it): before, 01 drew no chart
and 06 drew an empty chart under ``UserWarning: I don't know how to infer vegalite type from
'empty'``. The table check (item 9) reads the demo's shared runs (tests/notebook_runs.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from notebook_runs import GROUP

from brainlab.metrics.usage_time import TZ_ENV, WEEK_ENV

pytestmark = pytest.mark.slow  # xdist group: tests/conftest.py KERNEL_GROUPS
NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
PAPERMILL = Path(sys.executable).parent / "papermill"


def run(name: str, db: Path, tmp_path: Path, env: dict | None = None) -> dict:
    out = tmp_path / name
    done = subprocess.run([str(PAPERMILL), str(NOTEBOOKS / name), str(out), "-p", "db_path",
                           str(db), "--engine", "brainlab", "--execution-timeout", "300",
                           "-k", "python3"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=900,
                          env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(out.read_text(encoding="utf-8"))


def outputs(nb: dict) -> list[dict]:
    return [o for c in nb["cells"] for o in c.get("outputs", [])]


def _html(output: dict) -> str:
    html = output.get("data", {}).get("text/html", "")
    return "".join(html) if isinstance(html, list) else html  # nbformat keeps lines


def charts(nb: dict) -> list[dict]:
    return [o for o in outputs(nb) if any("vegalite" in k for k in o.get("data", {}))
            or "vega" in _html(o)]


def warnings(nb: dict) -> list[str]:
    return [o.get("text", "") if isinstance(o.get("text"), str) else "".join(o.get("text", []))
            for o in outputs(nb) if o.get("name") == "stderr"]


def test_01_draws_the_measured_weeks_of_a_transcripts_only_store(corpus_store, tmp_path):
    """Weeks of the zone and first day `brainlab lab --timezone --start-of-week` sets (24)."""
    nb = run("01_metabolism_trends.ipynb", corpus_store, tmp_path,
             env={TZ_ENV: "America/Los_Angeles", WEEK_ENV: "sunday"})
    drawn = charts(nb)
    assert drawn, "no chart drawn"
    text = json.dumps(outputs(nb))
    assert "Claude Code sessions" in text and "measured from transcripts" in text
    assert "weeks of America/Los_Angeles" in text and "week (Sunday)" in text
    starts = {date.fromisoformat(d[:10]) for d in re.findall(
            r'"week_start": "(\d{4}-\d{2}-\d{2})', json.dumps(drawn))}
    assert starts and {d.weekday() for d in starts} == {6}  # every week starts on a Sunday
    assert not [w for w in warnings(nb) if "Warning" in w]


def test_06_draws_no_empty_chart_and_says_why(corpus_store, tmp_path):
    nb = run("06_logged_vs_measured.ipynb", corpus_store, tmp_path)
    assert not [w for w in warnings(nb) if "infer vegalite type" in w]
    assert "none with a rolling ratio on any basis" in json.dumps(outputs(nb))


@pytest.mark.xdist_group(GROUP)
def test_notebook_tables_read_as_brainlab_tables(executed):
    """Issue 28 item 9: no numpy reprs, no 0..n index, counts with separators (01, 06, 07)."""
    import re

    for name in ("01_metabolism_trends.ipynb", "06_logged_vs_measured.ipynb",
                 "07_compliance.ipynb"):
        nb, _records, _seconds = executed(NOTEBOOKS / name)
        text = json.dumps(outputs(nb))
        assert "np.float64(" not in text and "np.int64(" not in text and "np.True_" not in text
        tables = [h for h in map(_html, outputs(nb)) if "<table" in h and "<svg" not in h]
        assert tables, name
        for html in tables:
            assert not re.search(r'<th[^>]*class="row_heading[^"]*"[^>]*>\s*0\s*</th>', html), name
            assert 'class="dataframe"' not in html, name  # a bare DataFrame's repr
