"""The weekly report's what-ifs: other broker policies and regulator rule sets (issue 41 item 4).

Each part reads the JSON object ``simulate broker --json`` / ``simulate regulator --json``
builds (:func:`brainlab.sim.broker_output.broker_report`,
:func:`brainlab.sim.regulator_checks.regulator_report`: no second computation), on the
history up to the week's end (labelled so: a past week's page does not move when later
sprints or tickets arrive), and shows each policy's or rule set's figures with their paired
bootstrap intervals and whether it differs from the recorded one, as the CLI does. The
back-test and the change check stay with the CLI and notebooks 02/03 (named on the page).
"""

from __future__ import annotations

import pandas as pd

from brainlab.common.errors import SimulationError
from brainlab.common.tables import format_cell

BROKER_FIGURES = (("tokens", "tokens", "int"), ("miss_rate", "miss rate", "share"),
                  ("waste_rate", "waste rate", "share"), ("alerts", "alerts", "int"))
REGULATOR_FIGURES = (("wakeups_per_ticket", "wake-ups / ticket", "float"),
                     ("loop_sessions_per_ticket", "loop sessions / ticket", "float"),
                     ("integrated_share", "integrated", "share"),
                     ("sessions_per_ticket", "sessions / ticket", "float"),
                     ("tokens_per_ticket", "tokens / ticket", "int"))
REGULATOR_RULE_SETS = ("default", "strict", "lenient")  # the recorded rules and two variants
NEEDS = {"broker": "sprint_agent_inputs", "regulator": "circuit_events"}  # what each replays


def estimate(triple: list | None, kind: str) -> str:
    """``[value, low, high]`` as ``value (low to high)``, in the figure's own format."""
    if not triple or triple[0] is None:
        return format_cell(None, kind)
    value, low, high = triple
    if low is None or high is None:
        return format_cell(value, kind)
    return f"{format_cell(value, kind)} ({format_cell(low, kind)} to {format_cell(high, kind)})"


def versus(row: dict, name: str, baseline: str) -> str:
    """What the CLI says of a row beside the recorded one."""
    if row[name] == baseline:
        return "recorded (baseline)"
    return ("differs from recorded" if row["distinguishable_from_recorded"]
            else "indistinguishable from recorded")


def broker_table(report: dict) -> pd.DataFrame:
    """One row per policy: each figure with its interval, and its verdict against recorded."""
    from brainlab.sim.broker_output import BASELINE

    rows = [{"policy": row["policy"],
             **{label: estimate(row[key], kind) for key, label, kind in BROKER_FIGURES},
             "against recorded": versus(row, "policy", BASELINE)} for row in report["policies"]]
    return pd.DataFrame(rows)


def regulator_table(report: dict) -> pd.DataFrame:
    """One row per rule set: each figure with its interval, and its verdict against recorded."""
    from brainlab.sim.regulator_checks import BASELINE

    rows = [{"rule set": row["rules"],
             **{label: estimate(row[key], kind) for key, label, kind in REGULATOR_FIGURES},
             "against recorded": versus(row, "rules", BASELINE)} for row in report["rule_sets"]]
    return pd.DataFrame(rows)


def broker_report(ctx) -> dict | None:
    """``simulate broker --json``'s object for the sprints up to the week's end, or None."""
    from brainlab.sim import broker, broker_output

    ss = broker.load_sprints(ctx.db, until=ctx.week.end_at)
    report, _ = broker_output.broker_report(ss, broker.DEFAULT_POLICIES, backtest=False,
                                            find_change=False, thresholds=ctx.thresholds)
    return report


def regulator_report(ctx) -> dict:
    """``simulate regulator --json``'s object for the tickets up to the week's end."""
    from brainlab.settings import current
    from brainlab.sim import regulator_checks
    from brainlab.spec.regulator import named_rule_sets

    history = regulator_checks.load_history(ctx.db, until=ctx.week.end_at)
    rule_sets = named_rule_sets(list(REGULATOR_RULE_SETS), base=current().rules)
    report, _ = regulator_checks.regulator_report(history, rule_sets, backtest_too=False,
                                                  find=False)
    return report


def summary(ctx, kind: str) -> tuple[str, str, pd.DataFrame | None]:
    """(heading, what was replayed, the table) of the ``broker`` or ``regulator`` what-if.

    The table is None when nothing can be replayed; the text then says why (the replay's own
    message: which command adds what is missing). :func:`brainlab.report.sections.breath`
    and ``regulator`` escape and show them.
    """
    policies = kind == "broker"
    heading = ("What if: other context-broker policies (history up to this week)" if policies
               else "What if: other regulator rule sets (history up to this week)")
    try:
        report = broker_report(ctx) if policies else regulator_report(ctx)
    except SimulationError as exc:
        return heading, f"No replay: {exc}", None
    level = int(round(report["interval"]["level"] * 100))
    unit = "sprint" if policies else "ticket"
    skipped = ", ".join(f"{n:,} {r}" for r, n in report["skipped"].items())
    said = (f"{report['replayed']:,} of {report['total']:,} {unit}(s) up to "
            f"{ctx.week.label}'s end replayed" + (f" (skipped: {skipped})" if skipped else "")
            + f". {level}% intervals: percentile bootstrap over {unit}s, "
            f"{report['interval']['draws']:,} draws, the same resamples for every "
            + ("policy" if policies else "rule set")
            + "; 'indistinguishable from recorded': every difference from the recorded one"
            " lies within its interval (never ranked). The back-test and the change check: "
            + ("`brainlab simulate broker --backtest`, notebook 02." if policies else
               "`brainlab simulate regulator --backtest`, notebook 03."))
    return heading, said, broker_table(report) if policies else regulator_table(report)
