"""The regulator replay checked against what really happened, and its one output object.

- :func:`load_history`: the journals (``circuit_events``) and what each ticket recorded (the
  ``tickets`` view: wake-ups, loop sessions, sessions, tokens, outcome, start, replayable).
- :func:`backtest`: the recorded rules (the SPEC defaults) replayed on the recorded tickets,
  per figure, against the ``tickets`` view's own figures (SQL, a separate computation).
- :func:`find_change` / :func:`change_check`: tickets whose events carry a ``rules`` field (the
  rule set the circuit ran under, an unknown field SPEC §6.7 keeps) from a day on, or a change
  named with ``--change-date DAY --to RULES``: the tickets before, replayed under the new rules,
  against what the tickets after actually show.
- :func:`regulator_report`: everything above as one JSON-ready dict (``simulate regulator
  --json``; notebook 03 reads the same dict).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import pandas as pd

from brainlab.common.errors import SimulationError
from brainlab.sim.circuit_arrays import compile_journals
from brainlab.sim.intervals import percentile_interval, triple
from brainlab.sim.named_change import change_day
from brainlab.sim.regulator import METRICS, replay
from brainlab.spec.regulator import RegulatorRules, named_rule_sets

BASELINE = "default"  # the rules the journals were recorded under (SPEC §6.5 defaults)
LEVEL = 0.90
MIN_SIDE = 5  # tickets on each side of a change


@dataclass
class History:
    """Circuit events and the recorded per-ticket figures of a store."""

    events: pd.DataFrame  # circuit_events rows in ticket, time order
    tickets: pd.DataFrame  # the tickets view: one row per ticket the store knows
    not_replayable: dict[str, str]  # ticket -> reason (tickets.not_replayable_reason)

    def compiled(self, tickets=None):
        """The journals compiled for replay, optionally only ``tickets``."""
        events = self.events if tickets is None else \
            self.events[self.events["ticket"].isin(set(tickets))]
        skipped = self.not_replayable if tickets is None else \
            {t: r for t, r in self.not_replayable.items() if t in set(tickets)}
        return compile_journals(events, skipped)

    @property
    def replayable(self) -> pd.DataFrame:
        """The tickets rows the replay takes."""
        return self.tickets[self.tickets["replayable"].astype(bool)]


def load_history(db, until: datetime | None = None) -> History:
    """Read the journals and the ``tickets`` view (read-only).

    ``until``: the history as it stood at that moment (a week's end: the weekly report's
    what-if reads nothing after its week): the tickets started before it, their events
    before it; a ticket with events after it was open then, and is not replayed.
    """
    from brainlab.store import query
    from brainlab.store.connection import held as held_reader

    with held_reader(db) as held:
        events = query(held, "SELECT * FROM circuit_events ORDER BY ticket, event_at,"
                             " source_file, line")
        columns = set(query(held, "SELECT column_name FROM duckdb_columns()"
                                  " WHERE table_name = 'tickets'")["column_name"])
        if "replayable" not in columns:
            raise SimulationError(
                f"{db} was built by an older brainlab (its tickets view cannot say which tickets"
                " are replayable, SPEC §6.7): ingest the journals into a new database, e.g."
                " `brainlab ingest circuits PATH --db NEW.duckdb`")
        tickets = query(held, "SELECT ticket, started_at, wakeups, loop_sessions, sessions,"
                              " tokens, outcome, replayable, not_replayable_reason FROM tickets"
                              " ORDER BY ticket")
    if until is not None:
        at = pd.Timestamp(until)
        last = events.groupby("ticket")["event_at"].max()
        still_open = set(last[pd.to_datetime(last) >= at].index)
        events = events[pd.to_datetime(events["event_at"]) < at]
        tickets = tickets[pd.to_datetime(tickets["started_at"]) < at].copy()
        late = tickets["ticket"].isin(still_open).to_numpy(dtype=bool)
        tickets.loc[late, "replayable"] = False
        tickets.loc[late, "not_replayable_reason"] = "open at that time (events after it)"
    if events.empty and tickets.empty:
        raise SimulationError(f"no circuit events in {db}: run `brainlab ingest circuits PATH`"
                              " (journals: SPEC §6.7, docs/regulator.md)")
    skipped = tickets[~tickets["replayable"].astype(bool)]
    return History(events, tickets, dict(zip(skipped["ticket"],
                                             skipped["not_replayable_reason"], strict=True)))


def skip_reasons(history: History) -> dict[str, int]:
    """Tickets not replayed, by reason: ``open`` (no end event yet) or ``unreadable events``."""
    out: dict[str, int] = {}
    for reason in history.not_replayable.values():
        key = "open" if str(reason).startswith("open") else "unreadable events"
        out[key] = out.get(key, 0) + 1
    return out


def recorded_figures(tickets: pd.DataFrame) -> dict[str, float]:
    """The recorded per-ticket means, in METRICS order, from the ``tickets`` view."""
    wakeups = tickets["wakeups"].astype(float)
    return {
        "wakeups_per_ticket": float(wakeups.mean()),
        "loop_sessions_per_ticket": float(tickets["loop_sessions"].astype(float).mean()),
        "integrated_share": float(((tickets["outcome"] == "integrated")
                                   & (wakeups == 0)).mean()),
        "sessions_per_ticket": float(tickets["sessions"].astype(float).mean()),
        "tokens_per_ticket": float(tickets["tokens"].astype(float).mean()),
    }


def backtest(history: History, draws: int = 1000, seed: int = 0,
             level: float = LEVEL, result=None) -> pd.DataFrame:
    """Per figure: the recorded rules replayed (with the interval) against the recorded value.

    ``result``: a replay that holds the recorded rules (``default``), reused as it is.
    """
    if result is None or BASELINE not in set(result.summary["rules"]):
        result = replay(history.compiled(), {BASELINE: RegulatorRules()}, draws=draws,
                        seed=seed, interval=level)
    return backtest_rows(result, history.tickets)


def backtest_rows(result, tickets: pd.DataFrame) -> pd.DataFrame:
    """The back-test's rows from a replay holding ``default`` and the recorded tickets."""
    row = result.summary.set_index("rules").loc[BASELINE]
    per = result.per_ticket
    replayed = set(per.loc[per["rules"] == BASELINE, "ticket"])
    recorded = recorded_figures(tickets[tickets["ticket"].isin(replayed)])
    return pd.DataFrame([{
        "figure": m, "replayed": float(row[m]), "low": float(row[m + "_lo"]),
        "high": float(row[m + "_hi"]), "recorded": recorded[m],
        "covered": bool(row[m + "_lo"] - 1e-9 <= recorded[m] <= row[m + "_hi"] + 1e-9),
        "tickets": len(replayed)} for m in METRICS])


@dataclass(frozen=True)
class Change:
    """A change of rule set on a day: found in the journals' ``rules`` field, or named."""

    day: pd.Timestamp  # first day under the new rules (UTC, naive)
    to: str  # a rule specification (spec.regulator)
    found: bool


def ticket_rules(history: History) -> pd.Series:
    """Per ticket, the ``rules`` field its events carry (None: the recorded defaults)."""
    extra = history.events[["ticket", "extra"]].dropna()
    rules: dict[str, str] = {}
    for ticket, text in zip(extra["ticket"], extra["extra"], strict=True):
        try:
            value = json.loads(text).get("rules")
        except (ValueError, AttributeError):
            continue
        if isinstance(value, str) and ticket not in rules:
            rules[ticket] = value
    return history.tickets["ticket"].map(rules)


def find_change(history: History) -> Change | None:
    """The first day from which replayable tickets carry another rule set, when one does."""
    tickets = history.tickets.assign(rules=ticket_rules(history).to_numpy())
    tickets = tickets[tickets["replayable"].astype(bool)].dropna(subset=["started_at"])
    marked = tickets.dropna(subset=["rules"])
    if marked.empty:
        return None
    to = marked["rules"].mode().iloc[0]
    day = pd.Timestamp(marked.loc[marked["rules"] == to, "started_at"].min()).floor("D")
    return Change(day, to, True)


def named_change(day: str | None, to: str | None) -> Change | None:
    """The change ``--change-date DAY --to RULES`` names (both or neither), or None."""
    stamp = change_day(day, to, "the day the rules changed and the rule set from that day")
    if stamp is None:
        return None
    named_rule_sets([to])  # a bad specification fails here, with its message
    return Change(stamp.tz_localize(None) if stamp.tzinfo else stamp, to, False)


def change_check(history: History, change: Change, draws: int = 1000, seed: int = 0,
                 level: float = LEVEL) -> pd.DataFrame:
    """Predicted (the tickets before, replayed under the new rules) against actual (after).

    The interval is a prediction interval: the bootstrap spread of the prediction over the
    tickets before plus that of the actual mean over the tickets after (independent draws).
    """
    tickets = history.replayable.dropna(subset=["started_at"])
    starts = pd.to_datetime(tickets["started_at"])
    before = tickets.loc[(starts < change.day).to_numpy(), "ticket"]
    after = tickets.loc[(starts >= change.day).to_numpy(), "ticket"]
    if len(before) < MIN_SIDE or len(after) < MIN_SIDE:
        raise SimulationError(
            f"a change on {change.day:%Y-%m-%d} leaves {len(before)} ticket(s) before and "
            f"{len(after)} after; each side needs {MIN_SIDE}")
    new = named_rule_sets([change.to])
    label = next(iter(new))
    pred = replay(history.compiled(before), new, draws=draws, seed=seed, interval=level)
    pred_draws = pred.draws[pred.draws["rules"] == label][list(METRICS)].to_numpy()
    predicted = pred.summary.iloc[0]
    actual = recorded_figures(history.tickets[history.tickets["ticket"].isin(set(after))])
    # the actual mean's own spread: the after tickets resampled (as recorded)
    values = history.tickets.set_index("ticket").loc[list(after)]
    per = np.column_stack([
        values["wakeups"].astype(float), values["loop_sessions"].astype(float),
        ((values["outcome"] == "integrated") & (values["wakeups"] == 0)).astype(float),
        values["sessions"].astype(float), values["tokens"].astype(float)])
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 45])))
    picks = rng.integers(0, len(per), size=(draws, len(per)))
    act_draws = per[picks].mean(axis=1)
    act = np.array([actual[m] for m in METRICS])
    spread = pred_draws - (act_draws - act)
    lo, hi = percentile_interval(spread, level)
    lo = np.maximum(lo, 0.0)  # every figure is a count or a share: never below 0
    share = list(METRICS).index("integrated_share")
    hi[share] = min(hi[share], 1.0)
    return pd.DataFrame([{
        "figure": m, "predicted": float(predicted[m]), "low": float(lo[i]),
        "high": float(hi[i]), "actual": float(act[i]),
        "covered": bool(lo[i] - 1e-9 <= act[i] <= hi[i] + 1e-9),
        "before_tickets": len(before), "after_tickets": len(after)}
        for i, m in enumerate(METRICS)])


def regulator_report(history: History, rule_sets: dict[str, RegulatorRules], *,
                     draws: int = 1000, seed: int = 0, level: float = LEVEL,
                     backtest_too: bool = True, change: Change | None = None,
                     find: bool = True) -> tuple[dict, object]:
    """(the report dict, the ReplayResult): rule sets with intervals, back-test, change check.

    The recorded rules (``default``) are always replayed first: the baseline every other
    rule set's paired difference is taken against.
    """
    sets = {BASELINE: RegulatorRules()} if BASELINE not in rule_sets else {}
    sets.update(rule_sets)
    result = replay(history.compiled(), sets, draws=draws, seed=seed, interval=level)
    diffs = result.compare(BASELINE, interval=level).set_index("rules")
    rows = []
    for rec in result.summary.to_dict("records"):
        row: dict = {"rules": rec["rules"]}
        diff: dict = {}
        for m in METRICS:
            row[m] = triple(rec[m], rec[m + "_lo"], rec[m + "_hi"])
            d = diffs.loc[rec["rules"]]
            diff[m] = triple(d[m + "_diff"], d[m + "_diff_lo"], d[m + "_diff_hi"])
        row["difference_from_recorded"] = diff
        row["distinguishable_from_recorded"] = rec["rules"] != BASELINE and any(
            lo > 0 or hi < 0 for _, lo, hi in diff.values() if lo is not None)
        rows.append(row)
    skipped = skip_reasons(history)
    report: dict = {
        "rule_sets": rows, "total": int(len(history.tickets)),
        "replayed": int(len(result.per_ticket) // max(len(sets), 1)), "skipped": skipped,
        "not_replayed": [{"ticket": t, "reason": r}
                         for t, r in zip(result.not_replayed["ticket"],
                                         result.not_replayed["reason"], strict=True)],
        "interval": {"level": level, "draws": draws, "seed": seed,
                     "method": "percentile bootstrap over tickets, paired across rule sets"},
    }
    if backtest_too:
        bt = backtest(history, draws=draws, seed=seed, level=level, result=result)
        report["backtest"] = [{"figure": r["figure"],
                               "replayed": triple(r["replayed"], r["low"], r["high"]),
                               "recorded": r["recorded"], "covered": r["covered"],
                               "tickets": int(r["tickets"])} for r in bt.to_dict("records")]
    if change is None and find:
        change = find_change(history)
    if change is not None:
        report["change"] = {"day": f"{change.day:%Y-%m-%d}", "to": change.to,
                            "found": change.found}
        try:
            check = change_check(history, change, draws=draws, seed=seed, level=level)
        except SimulationError as exc:
            if not change.found:  # named: the user asked for it
                raise
            report["change"]["note"] = str(exc)
            check = pd.DataFrame(columns=["figure"])
        report["change_check"] = [
            {"figure": r["figure"], "predicted": triple(r["predicted"], r["low"], r["high"]),
             "actual": r["actual"], "covered": r["covered"],
             "before_tickets": int(r["before_tickets"]),
             "after_tickets": int(r["after_tickets"])} for r in check.to_dict("records")]
    return report, result


# --- text ----------------------------------------------------------------------------------

def format_report(report: dict, result, width: int = 80) -> str:
    """The report as ``simulate regulator`` prints it: scope, back-test, rule sets, change."""
    import textwrap

    from brainlab.sim.regulator import format_summary

    def wrap(text: str) -> str:
        return "\n".join(textwrap.wrap(text, width=width, break_long_words=False,
                                       break_on_hyphens=False))

    skipped = ", ".join(f"{n} {r}" for r, n in report["skipped"].items())
    lines = [wrap(f"{report['total']:,} ticket(s) in the store, {report['replayed']:,} replayed"
                  + (f"; not replayed: {skipped} (tickets.not_replayable_reason)"
                     if skipped else ""))]
    if report.get("backtest") is not None:
        lines += ["", _table_text(
            "back-test: the recorded rules (default) replayed on the recorded tickets against"
            " the tickets view's own figures (per ticket)", report["backtest"], "replayed",
            "recorded", width)]
    lines += ["", format_summary(result, width=width)]
    level = int(round(report["interval"]["level"] * 100))
    same = [r["rules"] for r in report["rule_sets"]
            if r["rules"] != BASELINE and not r["distinguishable_from_recorded"]]
    others = [r for r in report["rule_sets"] if r["rules"] != BASELINE]
    lines.append(wrap(f"{level}% intervals: percentile bootstrap over tickets, paired. "
                      + (f"Not ranked, indistinguishable from the recorded rules ({BASELINE}):"
                         f" {', '.join(same)} (every difference within its interval)."
                         if same else "Every rule set differs from the recorded rules on at"
                         " least one figure." if others else "")))
    if report.get("change_check") == []:
        ch = report["change"]
        lines += ["", wrap(f"change check: rules {ch['to']} from {ch['day']} found in the"
                           f" journals, not checked: {ch.get('note', '')}")]
    elif report.get("change_check") is not None:
        ch, rows = report["change"], report["change_check"]
        how = "found in the journals' rules field" if ch["found"] else \
            "named with --change-date/--to"
        lines += ["", _table_text(
            f"change check: rules {ch['to']} from {ch['day']}, {how}. The "
            f"{rows[0]['before_tickets']:,} ticket(s) before, replayed under them, against the"
            f" {rows[0]['after_tickets']:,} after, as recorded", rows, "predicted", "actual",
            width)]
    return "\n".join(lines)


def _table_text(head: str, rows: list[dict], value: str, other: str, width: int) -> str:
    import textwrap

    from brainlab.common import tables

    names = ["figure", value, "interval", other, "covered"]
    body = []
    for r in rows:
        whole = r["figure"].startswith("tokens")
        fmt = "{:,.0f}" if whole else "{:.3f}"
        low, high = r[value][1], r[value][2]
        body.append((r["figure"].removesuffix("_per_ticket"), fmt.format(r[value][0]),
                     f"{fmt.format(low)}–{fmt.format(high)}", fmt.format(r[other]),
                     "yes" if r["covered"] else "NO"))
    columns = [tables.Column("figure", "figure", "text"),
               tables.Column(value, value, "text"),
               tables.Column("interval", "90% interval", "text"),
               tables.Column(other, other, "text"),
               tables.Column("covered", "covered", "text")]
    text = "\n".join(textwrap.wrap(head, width=width, break_long_words=False,
                                   break_on_hyphens=False))
    text += "\n" + tables.text_table(names, body, width=width, columns=columns,
                                     see="--json").rstrip("\n")
    missed = [r["figure"] for r in rows if not r["covered"]]
    if missed:
        text += "\n" + "\n".join(textwrap.wrap(
            f"not covered: {', '.join(missed)}: read the what-ifs with care", width=width))
    return text
