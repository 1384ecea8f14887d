"""The planted stop kind (synth/circuits.py): lowering the relaunch limit saves sessions
without adding wake-ups, and the replay is seeded and reproducible."""

import random
from datetime import datetime

import pandas as pd

from brainlab.sim.circuit_arrays import compile_journals
from brainlab.sim.regulator import replay
from brainlab.synth.circuits import PLANTED_KIND, generate_tickets


def journals(n=1500, seed=4):
    tickets = generate_tickets(random.Random(seed), datetime(2026, 1, 5), datetime(2026, 4, 6), n)
    return [e for t in tickets for e in t]


def test_lowering_the_relaunch_limit_saves_sessions_without_wakeups():
    events = journals()
    result = replay(compile_journals(events), ["default", "max_relance_same_stop=2"],
                    draws=200, seed=7)
    diff = result.compare("default").set_index("rules").loc["max_relance_same_stop=2"]
    assert diff.sessions_per_ticket_diff_hi < 0  # fewer sessions, the whole 90% interval
    assert diff.loop_sessions_per_ticket_diff_hi < 0
    assert diff.wakeups_per_ticket_diff < 0.01  # about no more wake-ups per ticket
    # On the tickets that met the planted kind, wake-ups stay the same and sessions fall.
    planted = {e["ticket"] for e in events if e.get("kind") == PLANTED_KIND}
    per = result.per_ticket[result.per_ticket.ticket.isin(planted)]
    means = per.groupby("rules")[["wakeups", "sessions"]].mean()
    assert abs(means.wakeups["max_relance_same_stop=2"] - means.wakeups["default"]) < 0.02
    assert means.sessions["max_relance_same_stop=2"] < means.sessions["default"] - 0.3


def test_replay_is_seeded_and_reproducible():
    c = compile_journals(journals(n=300, seed=9))
    specs = ["default", "lenient"]
    a = replay(c, specs, draws=50, seed=3)
    b = replay(c, specs, draws=50, seed=3)
    other = replay(c, specs, draws=50, seed=4)
    pd.testing.assert_frame_equal(a.summary, b.summary)
    pd.testing.assert_frame_equal(a.per_ticket, b.per_ticket)
    assert not a.summary.equals(other.summary)
    lenient = a.summary.set_index("rules").loc["lenient"]
    for m in ("wakeups_per_ticket", "sessions_per_ticket", "integrated_share"):
        assert lenient[m + "_lo"] <= lenient[m] <= lenient[m + "_hi"]
    assert a.per_ticket[a.per_ticket.rules == "lenient"].continued.any()
