"""The weekly report's what-ifs show the replays' intervals (issue 41 item 4).

The broker and regulator sections read the object `simulate broker|regulator --json` builds,
on the history up to the week's end: each policy's or rule set's figures as value (low to
high) and its verdict against the recorded one, as the CLI says it.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from contextlib import redirect_stdout
from html import unescape
from pathlib import Path

from brainlab.report import sections, whatif
from brainlab.spec.weeks import Week
from brainlab.store import query

BRAINLAB = str(Path(sys.executable).with_name("brainlab"))


def _render(db: Path, week: str) -> dict[str, str]:
    with redirect_stdout(io.StringIO()):
        ctx = sections.open_report(db=str(db), week=week)
        try:
            return {"breath": sections.breath(ctx), "regulator": sections.regulator(ctx)}
        finally:
            sections.finish(ctx)


def _cli(db: Path, *args: str) -> dict:
    done = subprocess.run([BRAINLAB, "simulate", *args, "--db", str(db), "--json"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_report_shows_each_policy_and_rule_set_with_its_interval(demo, charts_here):
    db = demo["db"]
    last = query(db, "SELECT max(started_at) AS at FROM sprint_agent_inputs")["at"][0]
    week = Week.of(last.date())  # every sprint is up to its end: the CLI's whole history
    page = {k: unescape(v) for k, v in _render(db, week.label).items()}
    broker = _cli(db, "broker")
    assert "What if: other context-broker policies (history up to this week)" in page["breath"]
    assert f"{broker['replayed']:,} of {broker['total']:,} sprint(s)" in page["breath"]
    for row in broker["policies"]:
        cells = [whatif.estimate(row[key], kind) for key, _l, kind in whatif.BROKER_FIGURES]
        verdict = whatif.versus(row, "policy", "recorded")
        assert f"<td>{verdict}</td>" in page["breath"]
        for cell in cells:
            assert cell in page["breath"], (row["policy"], cell)
    assert any(not r["distinguishable_from_recorded"] for r in broker["policies"]
               if r["policy"] != "recorded") == ("indistinguishable from recorded"
                                                  in page["breath"].replace(
        "'indistinguishable from recorded':", ""))
    regulator = _cli(db, "regulator", "--rules", "default", "--rules", "strict",
                     "--rules", "lenient")
    assert "What if: other regulator rule sets" in page["regulator"]
    for row in regulator["rule_sets"]:
        for key, _l, kind in whatif.REGULATOR_FIGURES:
            assert whatif.estimate(row[key], kind) in page["regulator"], (row["rules"], key)
    # an earlier week's page replays only the history up to its end
    earlier = {k: unescape(v) for k, v in _render(db, week.shifted(-3).label).items()}
    replayed = int(earlier["breath"].split(" of ")[1].split(" sprint(s)")[0].replace(",", ""))
    assert replayed < broker["total"]
