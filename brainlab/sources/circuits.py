"""Circuit journals (SPEC §6.7): JSONL files, one event per line, into ``circuit_events``.

SPEC §6.7 splits each event's fields into required and optional ones. A missing optional field
takes its default (``facts`` [], ``new_fact`` not stated, ``tokens`` NULL) and costs nothing;
where a replay rule later needs the defaulted value (``new_fact`` on a stop that comes back) a
warning row says how it is read. A problem in one event (not JSON, unknown event, a missing or
unreadable required field, out of order, after the ``end``) costs that event only. Where the
lost event is one the replay cannot do without (a ``stop`` or the ``end``) the ticket's other
events still load and the ticket is marked not replayable, with the reason. Every problem is an
``ingest_errors`` row and, when its ticket is known, a ``circuit_problems`` row (what it cost).
Unknown fields are kept, as JSON, in ``extra``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from brainlab.sources.base import Parsed, Source, decode_text
from brainlab.sources.files import list_files
from brainlab.sources.messages import Verbatim, said
from brainlab.spec import ranges
from brainlab.spec.stops import STOP_CODES  # SPEC §6.2

EVENTS = ("step", "stop", "decision", "admission", "review", "session", "end",
          # seed circuit-skills (docs/regulator.md section 3): the référent-technique's verdict,
          # an answer to a plan question, a component under load, a finding filed closed
          "verdict", "answer", "sous-charge", "decouverte")
# the référent-technique's verdict (seed "### Verdict — tranché | monte au responsable")
REFERENT_VERDICTS = ("tranché", "monte au responsable")
PLAN_ANSWERS = ("CHANGE", "GARDE")  # seed "Changer ou garder" (plan questions, decisions)
DECIDERS = ("table", "regulator", "supervisor")
DECISION_KINDS = ("RELANCE_REPRENDRE", "RELANCE_DEPUIS", "MONTE")
OUTCOMES = ("integrated", "ended", "escalated")
VERDICTS = {"ACCEPTÉ": "ACCEPTÉ", "ACCEPTE": "ACCEPTÉ", "RENDU": "RENDU"}
# SPEC §6.7 required fields of each event, besides ticket, ts and event (a controles stop has
# no code, SPEC §6.2). Everything else is optional.
REQUIRED = {
    "step": ("step", "component"),
    "stop": ("name", "code"),
    "decision": ("by", "kind"),
    "admission": ("accepted",),
    "review": (),
    "session": ("agent",),
    "end": ("outcome",),
    "verdict": ("verdict",),
    "answer": ("answer",),
    "sous-charge": ("component",),
    "decouverte": ("filed",),
}
# Events the replay cannot do without: losing one makes the ticket not replayable.
STRUCTURAL = ("stop", "end")
# Fields mapped to columns (SPEC name -> column); everything else goes to `extra`.
COLUMNS = {
    "step": "step", "component": "component", "name": "name", "code": "code",
    "kind": "kind", "facts": "facts", "by": "decided_by", "depuis": "depuis",
    "new_fact": "new_fact", "accepted": "accepted", "reason": "reason", "verdict": "verdict",
    "agent": "agent", "tokens": "tokens", "outcome": "outcome", "questioned": "questioned",
    "stop_kind": "stop_kind",
}
TEXT = ("step", "component", "name", "stop_kind", "decided_by", "kind", "reason", "verdict",
        "agent", "outcome")
# What each problem costs, as written in circuit_problems.effect.
WARNING, EVENT_DROPPED, NOT_REPLAYABLE = "warning", "event_dropped", "not_replayable"
COSTS = {
    EVENT_DROPPED: "this event is left out, the rest of the ticket loads",
    NOT_REPLAYABLE: "the ticket loads without it but is marked not replayable",
}


@dataclass
class _Line:
    """One journal line read: its row, or the problem that keeps it out, and its warnings."""

    number: int
    ticket: str | None = None
    event: str | None = None  # the event name, when it could be read
    row: dict | None = None
    problem: str = ""
    warnings: list[str] = field(default_factory=list)


class CircuitsSource(Source):
    """Ticket circuit journals: ``circuits/**/*.jsonl`` under a brain, or any folder of them."""

    name = "circuits"
    tables = ("circuit_events", "circuit_problems")

    @staticmethod
    def nothing_found(path: Path) -> str:
        """Say that ``brainlab ingest circuits`` found no journal in ``path``."""
        return (f"no circuit journal in {path}: looked for circuits/**/*.jsonl (else"
                " **/*.jsonl); nothing was written. Give the brain folder or its circuits/")

    def discover(self, root: Path) -> list[Path]:
        """Every ``*.jsonl`` under ``root/circuits`` when present, else under ``root``."""
        base = root / "circuits" if (root / "circuits").is_dir() else root
        return sorted(p for p in base.rglob("*.jsonl") if p.is_file())

    def parse(self, path: Path, data: bytes, root: Path) -> Parsed:
        """Read each line, group by ticket, keep every good event, record what problems cost."""
        parsed = Parsed()
        text = decode_text(data, parsed)
        if text is None:
            return parsed
        source_file = str(path.resolve())
        tickets: dict[str, _Ticket] = {}
        for number, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            line = _read_line(raw, number, source_file)
            if line.ticket is None:
                parsed.error(number, line.problem)
                continue
            tickets.setdefault(line.ticket, _Ticket(line.ticket)).take(line)
        for ticket in tickets.values():
            ticket.check_returning_stops()
            for row in ticket.kept:
                parsed.add("circuit_events", row)
            for number, event, effect, reason in ticket.problems:
                parsed.add("circuit_problems", {
                    "source_file": source_file, "line": number, "ticket": ticket.ticket,
                    "event": event, "effect": effect, "reason": reason})
                cost = f"; {COSTS[effect]}" if effect in COSTS else ""
                parsed.error(number, said("ticket {}: {}{}", ticket.ticket, reason, Verbatim(cost)),
                             severity="warning" if effect == WARNING else "error")
        return parsed


class _Ticket:
    """The lines of one ticket in file order: events kept, problems with what they cost."""

    def __init__(self, ticket: str) -> None:
        self.ticket = ticket
        self.kept: list[dict] = []
        self.problems: list[tuple[int, str | None, str, str]] = []

    def take(self, line: _Line) -> None:
        """Keep the line's event, or record its problem and cost (SPEC §6.7 order included)."""
        if line.problem:
            self._lose(line, line.problem)
            return
        row, last = line.row, self.kept[-1] if self.kept else None
        if last is not None and last["event"] == "end":
            self.problems.append((line.number, line.event, EVENT_DROPPED,
                                  f"{line.event} event after the ticket's end (line {last['line']})"))
            return
        if last is not None and row["event_at"] < last["event_at"]:
            self._lose(line, f"{line.event} event out of order: {row['event_at'].isoformat()} is"
                             f" before the previous event ({last['event_at'].isoformat()},"
                             f" line {last['line']})")
            return
        self.kept.append(row)
        self.problems.extend((line.number, line.event, WARNING, w) for w in line.warnings)

    def _lose(self, line: _Line, reason: str) -> None:
        lost_structure = line.event is None or line.event in STRUCTURAL
        self.problems.append((line.number, line.event,
                              NOT_REPLAYABLE if lost_structure else EVENT_DROPPED, reason))

    def check_returning_stops(self) -> None:
        """Warn where a stop comes back and no new_fact is stated (SPEC §6.5 needs it).

        A stop's new_fact is its own, else its first decision's; not stated, it reads false.
        """
        pending, key, rank, decided = None, None, 0, False
        for row in self.kept:
            if row["event"] == "stop":
                self._warn_new_fact(pending, rank)
                stop_key = (row.get("name"), row.get("step"), row.get("component"))
                rank = rank + 1 if stop_key == key else 1
                key, decided = stop_key, False
                pending = row if rank > 1 and row.get("new_fact") is None else None
            elif row["event"] == "decision" and not decided:
                decided = True
                if row.get("new_fact") is not None:
                    pending = None
        self._warn_new_fact(pending, rank)

    def _warn_new_fact(self, stop: dict | None, rank: int) -> None:
        if stop is None:
            return
        self.problems.append((stop["line"], "stop", WARNING, (
            f"stop {stop['name']} came back (relaunch rank {rank}) and neither it nor its first"
            " decision states new_fact: read as false (SPEC §6.7), so a rule set that escalates"
            " a stop back without a new fact fires here")))


def _read_line(raw: str, number: int, source_file: str) -> _Line:
    """One journal line -> its row, or the problem that keeps it out."""
    try:
        item = json.loads(raw)
    except json.JSONDecodeError as exc:
        ticket, event = _guess(raw)
        return _Line(number, ticket, event, problem=f"not JSON ({exc.msg})")
    if not isinstance(item, dict):
        return _Line(number, problem="not a JSON object")
    ticket = _text(item.get("ticket"))
    if not ticket:
        return _Line(number, problem="missing field 'ticket': the line belongs to no ticket")
    event = item.get("event")
    if event is None:  # what was lost cannot be known: it may have been a stop
        return _Line(number, ticket, None, problem="missing field 'event'")
    if event not in EVENTS:
        return _Line(number, ticket, str(event),
                     problem=f"unknown event {event!r} (known: {', '.join(EVENTS)})")
    line = _Line(number, ticket, event)
    required = [f for f in ("ts", *REQUIRED[event]) if not (
        f == "code" and _text(item.get("name")) == "controles")]
    missing = [f for f in required if item.get(f) is None]
    if missing:
        line.problem = f"{event} event missing field(s) {', '.join(missing)}"
        return line
    try:
        event_at = _timestamp(item["ts"])
    except (TypeError, ValueError):
        line.problem = f"{event} event with bad ts {item['ts']!r}"
        return line
    row = {"source_file": source_file, "line": number, "ticket": ticket,
           "event_at": event_at, "event": event}
    extra = {}
    for key, value in item.items():
        if key in ("ticket", "ts", "event"):
            continue
        if key in COLUMNS:
            row[COLUMNS[key]] = value
        else:
            extra[key] = value
    if event == "stop" and "kind" in row:
        row["stop_kind"] = row.pop("kind")
    line.problem = _read_values(event, row, line.warnings, extra)
    if line.problem:
        return line
    if event in ("stop", "decision"):
        row.setdefault("facts", [])  # SPEC §6.7: facts defaults to []
    for key in ("facts", "depuis"):
        if key in row:
            row[key] = json.dumps(row[key], ensure_ascii=False)
    row["extra"] = json.dumps(extra, ensure_ascii=False) if extra else None
    line.row = row
    return line


def _read_values(event: str, row: dict, warnings: list[str], extra: dict | None = None) -> str:
    """Check and normalise values; '' when the row is good, else why it is unreadable.

    An unreadable required value is a problem; an unreadable optional one is read as not
    stated, with a warning.
    """
    required = {"decision": ("decided_by", "kind")}.get(event, REQUIRED[event])
    extra = extra or {}

    def unreadable(column: str, why: str) -> str:
        if column in required:
            return f"{event} event: {why}"
        warnings.append(f"{event} event: {why}; read as not stated")
        row[column] = None
        return ""

    for column in TEXT:
        if row.get(column) is not None and _text(row[column]) is None:
            problem = unreadable(column, f"{column} must be text, got {row[column]!r}")
            if problem:
                return problem
        elif row.get(column) is not None:
            row[column] = _text(row[column])
    for column, allowed in _ENUMS.get(event, {}).items():
        if row.get(column) is not None and row[column] not in allowed:
            problem = unreadable(column, f"{column} must be one of {', '.join(allowed)},"
                                         f" got {row[column]!r}")
            if problem:
                return problem
    for column in ("new_fact", "accepted", "questioned"):
        if row.get(column) is not None and not isinstance(row[column], bool):
            problem = unreadable(column, f"{column} must be true or false, got {row[column]!r}")
            if problem:
                return problem
    if row.get("tokens") is not None:
        tokens = _whole(row["tokens"])
        if tokens is None or tokens < 0:
            unreadable("tokens", f"tokens must be a non-negative integer, got {row['tokens']!r}")
        elif tokens > ranges.SESSION_TOKENS.high:  # sums of such counts overflow (issue 47)
            unreadable("tokens", f"tokens too large: {str(tokens)[:40]} is past"
                       f" {ranges.SESSION_TOKENS.high:.0e} ({ranges.SESSION_TOKENS.name},"
                       " spec/ranges.py)")
        else:
            row["tokens"] = tokens
    if event == "stop":
        code = row.get("code")
        if code is not None:
            row["code"] = _whole(code)
            if row["code"] is not None and not ranges.SMALL_COUNT.fits(abs(row["code"])):
                row["code"] = None  # not a stop code of SPEC §6.2 (and past INTEGER)
            if row["code"] is None:
                return f"stop event: code must be an integer, got {code!r}"
    elif event == "review":
        if row.get("verdict") is None:
            warnings.append("review without a verdict: not counted as a rendered review"
                            " (SPEC §6.5 max_reviews)")
        else:
            row["verdict"] = VERDICTS[row["verdict"]]
    elif event == "answer" and extra.get("answer") not in PLAN_ANSWERS:
        return (f"answer event: answer must be one of {', '.join(PLAN_ANSWERS)},"
                f" got {extra.get('answer')!r}")
    elif event == "admission" and row["accepted"] is False and row.get("reason") is None:
        warnings.append("refused admission without a reason: counted as a refusal under every"
                        " rule set (switching an admission rule off cannot remove it)")
    return ""


_ENUMS = {
    "stop": {"name": tuple(STOP_CODES)},
    "decision": {"decided_by": DECIDERS, "kind": DECISION_KINDS},
    "review": {"verdict": tuple(VERDICTS)},
    "end": {"outcome": OUTCOMES},
    "verdict": {"verdict": REFERENT_VERDICTS},
}


def _text(value) -> str | None:
    """A text field: strings as they are, numbers as written (step 2.3); None otherwise."""
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def _whole(value) -> int | None:
    """An integer written as 15, 15.0 or "15"; None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


_FIELD = r'"{}"\s*:\s*"([^"\\]+)"'


def _guess(raw: str) -> tuple[str | None, str | None]:
    """The ticket and event of a line that is not JSON, when they can still be read in it."""
    found = [re.search(_FIELD.format(name), raw) for name in ("ticket", "event")]
    ticket, event = (m.group(1) if m else None for m in found)
    return ticket, (event if event in EVENTS else None)


def _timestamp(value) -> datetime:
    """ISO 8601 -> naive UTC datetime (a ts without zone is taken as UTC)."""
    if not isinstance(value, str):
        raise TypeError(value)
    stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if stamp.tzinfo is not None:
        stamp = stamp.astimezone(UTC).replace(tzinfo=None)
    return stamp


class BrainCircuitsSource(CircuitsSource):
    """Circuit journals inside a brain checkout: only ``circuits/`` (never other JSONL files)."""

    def discover(self, root):
        """``circuits/**/*.jsonl`` under the brain, nothing when the folder is absent."""
        return list_files(root / "circuits", "*.jsonl", recursive=True)
