"""Small synthetic histories for the replays' calibration (issue 41 checks).

Shared by tests/test_replay_calibration.py (few seeds) and benchmarks/calibrate_replays.py
(many seeds, the rate reported). The broker history is the synthetic sprint plan
(brainlab.synth.sprints) with the planted policy change (brainlab.synth.replay_plants), as
sprint records with the broker's recorded maps, and the breath metrics its expire blocks
print read back by the real block parser.
"""

from __future__ import annotations

import random
from datetime import datetime, time, timedelta

import pandas as pd

from brainlab.sim import broker_checks
from brainlab.sim.sprintset import sprints_from_records
from brainlab.sources.broker_blocks import find_blocks
from brainlab.synth.replay_plants import (
    BROKER_CHANGE_AT,
    BROKER_CHANGE_TO,
    CHANGE_AT,
    switch_policy,
)
from brainlab.synth.sprints import CONTRACT, PROJECT, expire_text, sprint_plan

END = datetime(2026, 3, 27, 18, 0)


def broker_history(seed: int, weeks: int = 12, change: bool = True):
    """(SprintSet of the contracted sprints with printed metrics, the change day)."""
    start = END - timedelta(weeks=weeks)
    plan = sprint_plan(random.Random(seed), start, END)
    day = datetime.combine((start + (END - start) * BROKER_CHANGE_AT).date(), time(0, 0))
    if change:
        switch_policy(plan, day)
    plan = [s for s in plan if s["project"] == PROJECT]
    records, printed = [], []
    for sprint in plan:
        for agent in sprint["agents"]:
            records.append({
                "sprint": sprint["sprint"], "project": PROJECT, "domain": agent["domain"],
                "agent": agent["agent"], "session": sprint["session"],
                "started_at": sprint["started_at"].isoformat(timespec="minutes"),
                "ended_at": sprint["ended_at"].isoformat(timespec="minutes"),
                "referenced": agent["referenced"], "touched": agent["touched"],
                "open_todos": agent["open_todos"], "bytes": sprint["files"],
                "loaded": agent["loaded"], "released": sprint["released"]})
        blocks, _ = find_blocks(expire_text(sprint))
        printed.append({"sprint_id": sprint["sprint"], **blocks[0].metrics})
    ss = sprints_from_records(records, {PROJECT: CONTRACT})
    ss.printed = pd.DataFrame(printed)
    return ss, day


def broker_rates(seeds, draws: int = 200, weeks: int = 12) -> dict:
    """Over ``seeds``: the back-test's coverage (all four figures of a seed covered) and the
    change check's coverage per (seed, figure), with the per-figure rates."""
    backtest_ok, change_hits, per_figure = 0, [], {}
    for seed in seeds:
        ss, day = broker_history(seed, weeks)
        bt = broker_checks.backtest(ss, draws=draws, seed=seed)
        backtest_ok += bool(bt["covered"].all())
        change = broker_checks.Change(pd.Timestamp(day, tz="UTC"), BROKER_CHANGE_TO, None, False)
        check = broker_checks.change_check(ss, change, draws=draws, seed=seed)
        for figure, covered in zip(check["figure"], check["covered"], strict=True):
            if covered is None:  # a figure undefined on either side (e.g. no file loaded)
                continue
            change_hits.append(bool(covered))
            per_figure.setdefault(figure, []).append(bool(covered))
    n = len(list(seeds))
    return {"seeds": n, "backtest": backtest_ok / n,
            "change": sum(change_hits) / len(change_hits),
            "change_by_figure": {f: sum(v) / len(v) for f, v in per_figure.items()}}


def regulator_history(seed: int, folder, n_tickets: int = 120, weeks: int = 12):
    """(History of synthetic journals with the planted rules change, the change day).

    The journals are written in the real format and ingested into a DuckDB file in
    ``folder``, so the recorded figures come from the ``tickets`` view.
    """
    from pathlib import Path

    from brainlab.sim.regulator_checks import load_history
    from brainlab.sources.circuits import CircuitsSource
    from brainlab.store import ingest, open_writer
    from brainlab.synth.circuits import circuit_files
    from brainlab.synth.files import BrainFiles
    from brainlab.synth.replay_plants import RULES_CHANGE_TO

    folder = Path(folder)
    start = END - timedelta(weeks=weeks)
    day = datetime.combine((start + (END - start) * CHANGE_AT).date(), time(0, 0))
    files = BrainFiles()
    circuit_files(files, random.Random(seed), start, END, n_tickets,
                  change=(day, RULES_CHANGE_TO))
    files.write(folder)
    con = open_writer(folder / "c.duckdb")
    try:
        ingest.run(con, [CircuitsSource()], folder)
    finally:
        con.close()
    return load_history(folder / "c.duckdb"), day


def regulator_rates(seeds, folder, draws: int = 200, n_tickets: int = 120) -> dict:
    """Over ``seeds``: back-test coverage (all five figures of a seed) and the change check's
    coverage per (seed, figure), with the per-figure rates."""
    from pathlib import Path

    from brainlab.sim import regulator_checks as rc
    from brainlab.synth.replay_plants import RULES_CHANGE_TO

    backtest_ok, hits, per_figure = 0, [], {}
    for seed in seeds:
        history, day = regulator_history(seed, Path(folder) / f"s{seed}", n_tickets)
        bt = rc.backtest(history, draws=draws, seed=seed)
        backtest_ok += bool(bt["covered"].all())
        check = rc.change_check(history, rc.Change(pd.Timestamp(day), RULES_CHANGE_TO, False),
                                draws=draws, seed=seed)
        for figure, covered in zip(check["figure"], check["covered"], strict=True):
            hits.append(bool(covered))
            per_figure.setdefault(figure, []).append(bool(covered))
    n = len(list(seeds))
    return {"seeds": n, "backtest": backtest_ok / n, "change": sum(hits) / len(hits),
            "change_by_figure": {f: sum(v) / len(v) for f, v in per_figure.items()}}
