"""Issue 41 item 3: helloWorld's focus.md, the seed's third project signal.

Seed context-broker lines 56-61: a project is detected from a repository file named in the
request, the BSI claim slug containing the project, or helloWorld's focus (focus.md). The
replay tries them in that order and records the one that decided; the focus file keeps no
history, so it speaks only for sessions booted after it was last written.
"""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from brainlab.sim import broker, broker_output
from brainlab.sim.broker_scope import Focus, SessionInfo, describe_focus, read_focus, scope
from brainlab.spec.broker import PROJECT_SIGNALS
from brainlab.store import reader
from tests.conftest import SHARED, ingest_brain, write

WRITTEN = pd.Timestamp("2026-03-10 18:00")
AFTER, BEFORE = pd.Timestamp("2026-03-11 09:00"), pd.Timestamp("2026-03-09 09:00")


def _frames(rows):
    """Two agents on two files each per sprint: (sprint, project, session, started)."""
    agents = pd.DataFrame([{"sprint_id": s, "project": p, "agent": a, "session_id": sess,
                            "domain": "core", "started_at": at}
                           for s, p, sess, at in rows for a in ("dev", "tw")])
    refs = pd.DataFrame([(s, a, f"src/{a}/{k}.ts", "read") for s, *_ in rows
                         for a in ("dev", "tw") for k in (1, 2)],
                        columns=["sprint_id", "agent", "path", "kind"])
    return agents, refs


CASES = [  # sprint, project (record or working directory), session id, started
    ("repo", "blog", "0b9e-uuid-1", AFTER),  # repo file, though the focus names shop
    ("slug", None, "sess-20260311-0900-blog", AFTER),  # claim slug, though the focus says shop
    ("focus", None, "0b9e-uuid-2", AFTER),  # only the focus names it
    ("brain-after", "brain", "0b9e-uuid-3", AFTER),  # run in the brain's own folder
    ("brain-before", "brain", "0b9e-uuid-4", BEFORE),  # booted before the focus was written
    ("none-before", None, "0b9e-uuid-5", BEFORE),  # nothing names it
]


def _detected(focus):
    agents, refs = _frames(CASES)
    info = SessionInfo(known={"shop", "blog"}, focus=focus)
    _, _, sc = scope(agents, refs, {"shop", "blog"}, info, contracts="all")
    frame = sc.sprints.set_index("sprint_id")
    return sc, {s: (frame.at[s, "project"], frame.at[s, "project_signal"]) for s, *_ in CASES}


def test_each_signal_decides_in_the_seeds_order():
    sc, got = _detected(Focus("/home/u/brain/focus.md", WRITTEN, ("shop",)))
    assert got["repo"] == ("blog", "repo file")
    assert got["slug"] == ("blog", "claim slug")
    assert got["focus"] == ("shop", "focus")
    assert got["brain-after"] == ("shop", "focus")
    assert got["brain-before"] == ("brain", "brain folder")
    assert pd.isna(got["none-before"][0]) and pd.isna(got["none-before"][1])
    assert sc.project_signals == {"broker block": 0, "repo file": 1, "claim slug": 1,
                                  "focus": 2, "brain folder": 1}
    assert list(sc.project_signals) == list(PROJECT_SIGNALS)
    assert set(sc.sprints["project_signal"].dropna()) <= set(PROJECT_SIGNALS)
    # the project the focus decided routes the sprint: replayed under its contract
    replayed = sc.sprints[sc.sprints["skip_reason"].isna()].set_index("sprint_id")
    assert replayed.at["focus", "contract"] == "declared"
    assert sc.skipped["no identified project"] == 1


def test_without_a_usable_focus_the_third_signal_decides_nothing():
    for focus in (None, Focus("/home/u/brain/focus.md", WRITTEN, ("shop", "blog")),
                  Focus("/home/u/brain/focus.md", None, ("shop",))):
        sc, got = _detected(focus)
        assert sc.project_signals["focus"] == 0
        assert got["repo"] == ("blog", "repo file") and got["slug"] == ("blog", "claim slug")
        assert pd.isna(got["focus"][0])
        # no focus: the brain folder is not known, so a working directory is a repository
        assert got["brain-after"] == (("brain", "repo file") if focus is None
                                      else ("brain", "brain folder"))
    assert "ambiguous" in describe_focus(Focus("/b/focus.md", WRITTEN, ("shop", "blog")))
    assert "absent" in describe_focus(None)


def test_demo_focus_decides_its_sprints_in_text_and_json(demo):
    ss = broker.load_sprints(demo["db"])
    report, _ = broker_output.broker_report(ss, ["protocol"], draws=20, backtest=False,
                                            find_change=False)
    focus_entry = next(e for e in demo["manifest"].planted if e["effect"].startswith("focus:"))
    assert report["project_signals"]["focus"] == len(focus_entry["transcript_sessions"]) == 3
    assert report["focus"]["project"] == "originsdigital" == focus_entry["project"]
    assert report["focus"]["decided"] == 3
    decided = ss.scope.sprints[ss.scope.sprints["project_signal"] == "focus"]
    assert set(decided["sprint_id"]) == set(focus_entry["transcript_sessions"])
    assert decided["skip_reason"].isna().all()  # replayed under originsdigital's contract
    assert sum(report["project_signals"].values()) == report["total"]
    text = broker_output.format_report(report, width=200)
    assert "3 focus" in text and "focus: originsdigital for sessions booted since" in text


@pytest.mark.parametrize("store", ["template_store", "corpus_store", "empty_store"])
def test_a_store_without_a_focus_file_says_the_signal_is_absent(store, request):
    with reader(request.getfixturevalue(store)) as con:
        assert read_focus(con) is None
    if store == "corpus_store":  # the others have no sprint to replay (said elsewhere)
        report, _ = broker_output.broker_report(
            broker.load_sprints(request.getfixturevalue(store), contracts="all"),
            ["protocol"], draws=20, backtest=False, find_change=False)
        assert report["focus"]["file"] is None and report["project_signals"]["focus"] == 0
        assert "third project signal is absent" in broker_output.format_report(report)


def test_focus_file_ingest_good_bad_and_the_templates(tmp_path):
    db = tmp_path / "store.duckdb"
    template = tmp_path / "template"
    shutil.copytree(SHARED / "reference" / "cortex-template" / "Tetardtek__Cortex-Template",
                    template, ignore=shutil.ignore_patterns("_history", "claude*"))
    ingest_brain(template, db)
    with reader(db) as con:
        focus = read_focus(con)
    # the template's fresh-fork focus ("Aucun focus defini"): read, names no project
    assert focus is not None and focus.projects == () and focus.project is None
    assert "names no known project" in describe_focus(focus)
    bad = tmp_path / "bad"
    write(bad, "focus.md", b"# Focus\n\nshop \xff\xfe actif\n")
    write(bad, "claims/sess-1.yml", "sess_id: sess-1\ntype: work\nstatus: open\n"
                                    "opened_at: 2026-03-01T09:00:00\n")
    binary = tmp_path / "binary"
    write(binary, "focus.md", b"# Focus\n\x00\n")
    write(binary, "claims/sess-2.yml", "sess_id: sess-2\ntype: work\nstatus: open\n"
                                       "opened_at: 2026-03-01T09:00:00\n")
    ingest_brain(bad, db)
    ingest_brain(binary, db)
    with reader(db) as con:
        errors = con.execute("SELECT file, line, severity FROM ingest_errors"
                             " WHERE source = 'focus' ORDER BY file").fetchall()
        files = {r[0] for r in con.execute("SELECT source_file FROM focus_files").fetchall()}
        claims = {r[0] for r in con.execute("SELECT sess_id FROM claims").fetchall()}
    assert (str((bad / "focus.md").resolve()), 3, "warning") in errors
    assert (str((binary / "focus.md").resolve()), 2, "error") in errors
    assert str((bad / "focus.md").resolve()) in files  # undecodable bytes replaced, row kept
    assert str((binary / "focus.md").resolve()) not in files  # a binary file: nothing of it
    assert {"sess-1", "sess-2"} <= claims  # the good rows of the same brains are kept
