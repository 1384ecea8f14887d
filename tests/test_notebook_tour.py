"""Notebook 05, the protocol tour (issue 44 item 1): every concept on a real demo session.

On the demo: the metabolism log shown is its markdown (not the JSONL transcript), no printed
figure reads ``nan`` or ``None``, and every concept is present with its SPEC address and one
"Look at" sentence. On a transcripts-only store the tour runs and says what is missing. The
tour's arithmetic (brainlab.metrics.tour) names each division by zero instead of printing nan.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from notebook_runs import NOTEBOOK_DIR

from brainlab.metrics import tour
from brainlab.spec.thresholds import Thresholds
from brainlab.viz.holdings import NOTE_PREFIX

TOUR = NOTEBOOK_DIR / "05_protocol_tour.ipynb"
CONCEPTS = {  # heading words -> SPEC addresses the section must cite
    "Boot": ["§2.3", "§3.3"], "mode": ["§2.7"], "metabolism log": ["§3.1"],
    "health score": ["§3.2"], "ratio": ["§3.3"], "Saturation": ["§3.3"],
    "source map": ["§4.2", "§4.3"], "Breath": ["§4.4"], "claim": ["§2.4", "§2.6"],
    "workspace": ["§5"], "circuit": ["§6"], "compliance": ["§2.7"]}


def _text(output) -> str:
    if output.get("output_type") == "stream":
        return "".join(output["text"])
    data = output.get("data", {})
    if "text/html" in data:
        return re.sub(r"<[^>]+>", " ", "".join(data["text/html"]))
    if "image/svg+xml" in data:
        return ""
    return "".join(data.get("text/plain", ""))


def test_a_ratio_with_nothing_to_divide_by_is_explained_not_nan():
    lines = tour.ratio_steps(pd.Series({"n_use": 1, "n_build": 0, "n_explore": 0,
                                        "ratio": float("nan"), "ratio_band": None}))
    assert "undefined" in lines[0] and "nothing to divide by" in lines[0]
    assert not re.search(r"\bnan\b|\bNone\b", " ".join(lines))
    # planted: 4 use, 2 build, 2 explore -> 4 / (2 + 0.5 * 2) = 1.33, healthy
    lines = tour.ratio_steps(pd.Series({"n_use": 4, "n_build": 2, "n_explore": 2,
                                        "ratio_band": "healthy", "ratio_at_boot": None}),
                             Thresholds())
    assert "= 1.33 -> healthy" in lines[0] and "undefined" in lines[1]


def test_health_steps_match_the_spec_example_and_name_what_is_missing():
    # SPEC §3.2's worked example: todos 2, commits 3, tokens 45k, peak 31% -> 35 / 13.95 = 2.51
    lines, score = tour.health_steps(pd.Series({
        "category": "use-brain", "tokens_used": 45000, "context_peak_pct": 31,
        "todos_closed": 2, "commits": 3}))
    assert score == pytest.approx(35 / 13.95) and "13.95" in lines[0]
    lines, score = tour.health_steps(pd.Series({
        "category": "build-brain", "tokens_used": 500, "context_peak_pct": 10,
        "kernel_files_touched": 1, "adrs_written": None}))
    assert score == 15.0 and "max(1, 0.05) = 1.00" in lines[0]
    assert any("not in the log: adrs_written" in line for line in lines)
    lines, score = tour.health_steps(pd.Series({"category": "use-brain", "tokens_used": None,
                                                "context_peak_pct": 40}))
    assert score is None and "no score" in lines[0]
    assert tour.fmt(float("nan")) == "not recorded" and tour.fmt(None, missing="-") == "-"
    assert tour.text(float("nan"), "none") == "none"


@pytest.mark.slow
def test_the_tour_on_the_demo_shows_every_concept_on_real_data(executed):
    nb, records, _ = executed(TOUR)
    headings = [("".join(c.source)) for c in nb.cells if c.cell_type == "markdown"]
    for words, addresses in CONCEPTS.items():
        section = next((h for h in headings if h.startswith("## ") and words.lower() in
                        h.splitlines()[0].lower()), None)
        assert section, f"no section on {words}"
        assert all(a in section for a in addresses), (words, addresses)
        assert "**Look at:**" in section or words == "compliance", words
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    printed = "\n".join(_text(o) for o in outputs)
    # the metabolism log as the markdown file it is, not the session's JSONL transcript
    assert re.search(r"progression/metabolism/\S+\.md:", printed)
    assert "# Metabolism — " in printed and "| **tokens_used** |" in printed
    assert '{"type"' not in printed and ".jsonl:" not in printed
    assert not re.findall(r"\b(nan|NaN|None|NaT)\b", printed), "a figure printed as nan/None"
    assert not [n for n in printed.splitlines() if NOTE_PREFIX in n], "a note on the demo"
    assert "health_score = " in printed and "ratio = " in printed
    assert "saturated" in printed and "alerts (SPEC §4.4)" in printed
    assert "cold start" in printed and "declared mode" in printed
    assert "graduation by mode" in printed and "log.md, one decision per line" in printed
    assert "claims in the store" in printed and "rule(s) broken" in printed
    charts = [o["data"]["text/plain"] for o in outputs if "image/svg+xml" in o.get("data", {})]
    assert any("source map, then release map" in "".join(c) for c in charts)
    assert any("its circuit in time" in "".join(c) for c in charts)
    assert records["health_by_hand"] == pytest.approx(records["health_sql"])
    assert records["saturated_sessions"] >= 1
    assert records["tour_sprint"]["kept"] >= 1  # a garder with its reason
    ticket = records["tour_ticket"]
    assert ticket["outcome"] and ticket["events"] > 5
    stops = [o for o in outputs if "text/html" in o.get("data", {})
             and "regulator: RELANCE" in "".join(o["data"]["text/html"])]
    assert stops, "the ticket's table names the regulator's decision"
    assert re.search(r"\b(1[5-9]|2[03]) (sans-livraison|relecture-arret|integration|question|"
                     r"hors-portee|besoin|references)\b", printed), "a stop by code and name"


@pytest.mark.slow
def test_the_tour_on_transcripts_only_says_what_is_missing(store_kernels):
    nb, _records, error, _ = store_kernels("corpus", TOUR)
    assert error is None, error
    printed = json.dumps([o for c in nb.cells for o in c.get("outputs", [])])
    assert NOTE_PREFIX in printed and "brainlab ingest brain" in printed
    assert not re.search(r"\b(nan|NaN)\b", printed)
