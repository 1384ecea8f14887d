"""Circuit journals (SPEC §6.7): JSONL files, one event per line, into ``circuit_events``.

A ticket is loaded whole or not at all: a line that is not JSON, an unknown event, a missing
or invalid field, an event older than the one before it in the same ticket (SPEC §6.7 "ordered
by ts within a ticket") or an event after the ticket's ``end`` becomes an ``ingest_errors``
row, and the ticket it belongs to is left out (a replay of half a ticket would be wrong). Every
other ticket of the file loads. Unknown fields are kept, as JSON, in ``extra``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from brainlab.sources.base import Parsed, Source, decode_text

EVENTS = ("step", "stop", "decision", "admission", "review", "session", "end")
DECIDERS = ("table", "regulator", "supervisor")
DECISION_KINDS = ("RELANCE_REPRENDRE", "RELANCE_DEPUIS", "MONTE")
OUTCOMES = ("integrated", "ended", "escalated")
VERDICTS = {"ACCEPTÉ": "ACCEPTÉ", "ACCEPTE": "ACCEPTÉ", "RENDU": "RENDU"}
# SPEC §6.2: stop names and their exit codes (controles has none).
STOP_CODES = {
    "sans-livraison": 15, "relecture-arret": 16, "integration": 17, "question": 18,
    "hors-portee": 19, "besoin": 20, "references": 23, "controles": None,
}
# Fields each event must carry (SPEC §6.7), besides ticket, ts and event.
REQUIRED = {
    "step": ("step",),
    "stop": ("name", "code", "step", "component"),
    "decision": ("by", "kind", "new_fact"),
    "admission": ("accepted",),
    "review": ("verdict",),
    "session": ("agent", "tokens"),
    "end": ("outcome",),
}
# Fields mapped to columns (SPEC name -> column); everything else goes to `extra`.
COLUMNS = {
    "step": "step", "component": "component", "name": "name", "code": "code",
    "kind": "kind", "facts": "facts", "by": "decided_by", "depuis": "depuis",
    "new_fact": "new_fact", "accepted": "accepted", "reason": "reason", "verdict": "verdict",
    "agent": "agent", "tokens": "tokens", "outcome": "outcome", "questioned": "questioned",
    "stop_kind": "stop_kind",
}


class CircuitsSource(Source):
    """Ticket circuit journals: ``circuits/**/*.jsonl`` under a brain, or any folder of them."""

    name = "circuits"
    tables = ("circuit_events",)

    def discover(self, root: Path) -> list[Path]:
        """Every ``*.jsonl`` under ``root/circuits`` when present, else under ``root``."""
        base = root / "circuits" if (root / "circuits").is_dir() else root
        return sorted(p for p in base.rglob("*.jsonl") if p.is_file())

    def parse(self, path: Path, data: bytes, root: Path) -> Parsed:
        """Validate each line, group by ticket, load only tickets without a problem."""
        parsed = Parsed()
        text = decode_text(data, parsed)
        if text is None:
            return parsed
        by_ticket: dict[str, list[dict]] = {}
        bad: dict[str, list[str]] = {}
        for number, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            row, ticket, problem = _parse_line(raw, number, str(path.resolve()))
            if problem:
                parsed.error(number, problem)
                if ticket is not None:
                    bad.setdefault(ticket, []).append(f"line {number}")
                continue
            events = by_ticket.setdefault(ticket, [])
            problem = _order_problem(events, row)
            if problem:
                parsed.error(number, f"ticket {ticket}: {problem}")
                bad.setdefault(ticket, []).append(f"line {number}")
            events.append(row)
        for ticket, events in by_ticket.items():
            if ticket in bad:
                parsed.error(None, f"ticket {ticket} not loaded ({len(events)} good events"
                                   f" dropped) because of problems at {', '.join(bad[ticket])}")
                continue
            for row in events:
                parsed.add("circuit_events", row)
        return parsed


def _parse_line(raw: str, number: int, source_file: str) -> tuple[dict | None, str | None, str]:
    """One journal line -> (row, ticket, problem); problem is '' when the line is good."""
    try:
        item = json.loads(raw)
    except json.JSONDecodeError as exc:
        return None, None, f"not JSON ({exc.msg})"
    if not isinstance(item, dict):
        return None, None, "not a JSON object"
    ticket = item.get("ticket")
    if not isinstance(ticket, str) or not ticket:
        return None, None, "missing field 'ticket'"
    event = item.get("event")
    if event not in EVENTS:
        known = ", ".join(EVENTS)
        return None, ticket, f"ticket {ticket}: unknown event {event!r} (known: {known})"
    missing = [f for f in ("ts", *REQUIRED[event]) if f not in item]
    if missing:
        return None, ticket, f"ticket {ticket}: {event} event missing field(s) {', '.join(missing)}"
    try:
        event_at = _timestamp(item["ts"])
    except (TypeError, ValueError):
        return None, ticket, f"ticket {ticket}: bad ts {item['ts']!r}"
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
    problem = _check_values(event, row)
    if problem:
        return None, ticket, f"ticket {ticket}: {problem}"
    for key in ("facts", "depuis"):
        if key in row:
            row[key] = json.dumps(row[key], ensure_ascii=False)
    if "kind" in row and event == "stop":
        row["stop_kind"] = row.pop("kind")
    row["extra"] = json.dumps(extra, ensure_ascii=False) if extra else None
    return row, ticket, ""


def _check_values(event: str, row: dict) -> str:
    """Value checks beyond presence; '' when the row is good."""
    if event == "stop":
        if row["name"] not in STOP_CODES:
            return f"unknown stop name {row['name']!r}"
        code = row["code"]
        if code is not None and (isinstance(code, bool) or not isinstance(code, int)):
            return f"stop code must be an integer or null, got {code!r}"
        if code is None and row["name"] != "controles":
            return f"stop {row['name']} needs a code"
    elif event == "decision":
        if row["decided_by"] not in DECIDERS:
            return f"decision 'by' must be one of {DECIDERS}, got {row['decided_by']!r}"
        if row["kind"] not in DECISION_KINDS:
            return f"decision kind must be one of {DECISION_KINDS}, got {row['kind']!r}"
        if not isinstance(row["new_fact"], bool):
            return f"decision new_fact must be true or false, got {row['new_fact']!r}"
    elif event == "admission":
        if not isinstance(row["accepted"], bool):
            return f"admission accepted must be true or false, got {row['accepted']!r}"
        if not row["accepted"] and not row.get("reason"):
            return "refused admission missing field reason"
    elif event == "review":
        if row["verdict"] not in VERDICTS:
            return f"review verdict must be ACCEPTÉ or RENDU, got {row['verdict']!r}"
        row["verdict"] = VERDICTS[row["verdict"]]
    elif event == "session":
        tokens = row["tokens"]
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            return f"session tokens must be a non-negative integer, got {tokens!r}"
        if "questioned" in row and not isinstance(row["questioned"], bool):
            return f"session questioned must be true or false, got {row['questioned']!r}"
    elif event == "end":
        if row["outcome"] not in OUTCOMES:
            return f"end outcome must be one of {OUTCOMES}, got {row['outcome']!r}"
    return ""


def _order_problem(events: list[dict], row: dict) -> str:
    """SPEC §6.7 order within a ticket: ts never goes back, nothing after `end`."""
    if not events:
        return ""
    last = events[-1]
    if last["event"] == "end":
        return f"{row['event']} event after the ticket's end (line {last['line']})"
    if row["event_at"] < last["event_at"]:
        return (f"out of order: {row['event_at'].isoformat()} is before the previous event"
                f" ({last['event_at'].isoformat()}, line {last['line']})")
    return ""


def _timestamp(value) -> datetime:
    """ISO 8601 -> naive UTC datetime (a ts without zone is taken as UTC)."""
    if not isinstance(value, str):
        raise TypeError(value)
    stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if stamp.tzinfo is not None:
        stamp = stamp.astimezone(UTC).replace(tzinfo=None)
    return stamp
