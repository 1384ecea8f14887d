"""Metabolism logs (SPEC §3.1): one markdown file per session plus the index README.

Every variant the SPEC lists is read: key/value tables with bold keys or values, ``45k`` and
``31%`` values, N/A and ``<non mesuré>`` markers, v1 logs without handoff rows, spec-style
``key : value`` lines and a YAML-ish ``agents_loaded:`` list. A log missing a field the scribe
requires still loads, flagged ``is_incomplete`` with a warning row.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from brainlab.sources.base import Parsed, Source, decode_text
from brainlab.sources.files import list_files
from brainlab.sources.messages import said
from brainlab.sources.text import (
    int_range_problem,
    is_separator_row,
    parse_bool,
    parse_int,
    parse_number,
    parse_percent,
    parse_text,
    split_key_value,
    split_table_row,
    strip_markup,
)
from brainlab.spec import ranges
from brainlab.spec.vocabulary import METABOLISM_MANDATORY

SESS_ID_PATTERN = re.compile(r"^sess-[0-9A-Za-z][\w.-]*$")  # SPEC §2.1
_SESS_STAMP = re.compile(r"^sess-(\d{8})-(\d{4})")
_TITLE = re.compile(r"^#\s*Metabolism\s*[—–-]+\s*(\d{4}-\d{2}-\d{2})\s*[—–-]+\s*(\S+)", re.I)
_FILE_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})-(.+)\.md$")

# Name drift absorbed once (SPEC §3.1): log spelling -> canonical column.
KEY_ALIASES = {
    "context_peak": "context_peak_pct", "session_id": "sess_id", "session": "sess_id",
    "tokens": "tokens_used", "duration": "duration_min", "peak": "context_peak_pct",
    "kpi": "cold_start_kpi_pass", "handoff": "handoff_level", "date": "log_date",
}

ValueParser = Callable[[str], tuple[object, str | None]]


def _as_int(parser: ValueParser) -> ValueParser:
    def parse(text: str):
        value, problem = parser(text)
        if value is not None:
            problem = int_range_problem(value, text)
        if value is None or problem:
            return None, problem
        return int(round(value)), None
    return parse


def _ranged(parser: ValueParser, bound: ranges.Range) -> ValueParser:
    """``parser`` whose number must fall in ``bound`` (spec/ranges.py): else not stored."""
    def parse(text: str):
        value, problem = parser(text)
        if value is not None and (out := bound.problem(value)):
            return None, f"{out} ({bound.name}, spec/ranges.py): not stored"
        return value, problem
    return parse


FIELDS: dict[str, ValueParser] = {
    "sess_id": parse_text, "log_date": parse_text, "type": parse_text, "mode": parse_text,
    "project": parse_text,
    "tokens_used": _ranged(_as_int(_ranged(parse_number, ranges.SESSION_TOKENS)),
                           ranges.SESSION_TOKENS),
    "context_peak_pct": _ranged(parse_percent, ranges.PERCENT),
    "context_at_close": _ranged(parse_percent, ranges.PERCENT),
    "duration_min": _ranged(parse_number, ranges.MINUTES),
    "commits": _ranged(parse_int, ranges.SMALL_COUNT),
    "todos_closed": _ranged(parse_int, ranges.SMALL_COUNT),
    "saturation_flag": parse_bool, "handoff_level": parse_text,
    "cold_start_kpi_pass": parse_bool, "health_score": _ranged(parse_number, ranges.SCORE),
    "kernel_files_touched": _ranged(parse_int, ranges.SMALL_COUNT),
    "adrs_written": _ranged(parse_int, ranges.SMALL_COUNT),
    "insights_captured": _ranged(parse_int, ranges.SMALL_COUNT),
}
_SECTIONS = {"agents": ("agents chargés", "agents charges", "agents loaded", "agents"),
             "signals": ("signaux", "signals", "seuils"), "notes": ("notes",)}


def normalise_key(raw: str) -> str:
    """``**Context Peak**`` -> ``context_peak_pct`` (markup, case, spaces, aliases)."""
    key = strip_markup(raw).strip().lower().replace(" ", "_").replace("-", "_")
    return KEY_ALIASES.get(key, key)


def session_start(sess_id: str | None, log_date: str | None) -> datetime | None:
    """When a session started: ``sess-YYYYMMDD-HHMM-...``, else the log's date at midnight."""
    if sess_id:
        match = _SESS_STAMP.match(sess_id)
        if match:
            try:
                return datetime.strptime(match.group(1) + match.group(2), "%Y%m%d%H%M")
            except ValueError:
                pass
    if log_date:
        try:
            return datetime.strptime(log_date, "%Y-%m-%d")
        except ValueError:
            return None
    return None


class MetabolismSource(Source):
    """``progression/metabolism/*.md``: per-session logs and the README index."""

    name = "metabolism"
    tables = ("raw_metabolism_logs", "raw_agent_loads", "raw_metabolism_index")

    def discover(self, root: Path) -> list[Path]:
        """Every markdown file in progression/metabolism/ (or metabolism/ at the root)."""
        found: list[Path] = []
        for folder in (root / "progression" / "metabolism", root / "metabolism"):
            found.extend(list_files(folder, "*.md"))
        return found

    def parse(self, path: Path, data: bytes, root: Path) -> Parsed:
        """Dispatch: README.md is the index, anything else a session log."""
        parsed = Parsed()
        text = decode_text(data, parsed)
        if text is None:
            return parsed
        if path.name.lower() == "readme.md":
            _parse_index(text, str(path.resolve()), parsed)
        else:
            _parse_log(path, text, str(path.resolve()), parsed)
        return parsed


def _parse_log(path: Path, text: str, source_file: str, parsed: Parsed) -> None:
    values: dict[str, object] = {}
    extra: dict[str, str] = {}
    problems: list[str] = []
    agents: list[dict] = []
    signals: list[str] = []
    notes: list[str] = []
    title_date = title_id = None
    section = "header"
    fmt = None
    header_cells: int | None = None
    in_agents_list = False

    def field(key: str, raw: str, line_no: int) -> None:
        if key in values or key in extra:
            parsed.error(line_no, said("duplicate key {!r}: first value kept", key), "warning")
            return
        parser = FIELDS.get(key)
        if parser is None:
            extra[key] = strip_markup(raw)
            return
        value, problem = parser(raw)
        if problem:
            parsed.error(line_no, said("{}: {}; field left empty", key, problem), "warning")
            problems.append(key)
        values[key] = value

    for line_no, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        title = _TITLE.match(stripped)
        if title:
            title_date, title_id = title.group(1), title.group(2)
            continue
        if stripped.startswith("#"):
            heading = stripped.lstrip("#").strip().lower()
            section = next((name for name, words in _SECTIONS.items()
                            if any(heading.startswith(w) for w in words)), "other")
            header_cells, in_agents_list = None, False
            continue
        cells = split_table_row(line)
        if cells is not None:
            if is_separator_row(cells):
                continue
            if header_cells is None:
                header_cells = len(cells)
                first = strip_markup(cells[0]).lower()
                if first in {"clé", "cle", "key", "agent", "champ"}:
                    continue
            if len(cells) < 2 or (header_cells and len(cells) < header_cells):
                parsed.error(line_no, said(f"truncated table row ({len(cells)} cell(s)): {{!r}}", stripped))
                continue
            if section == "agents":
                _agent_row(cells[0], cells[1], line_no, agents, parsed)
            elif section == "header":
                fmt = fmt or "table"
                field(normalise_key(cells[0]), cells[1], line_no)
            continue
        header_cells = None
        if section == "header" and stripped:
            if normalise_key(stripped.rstrip(":")) == "agents_loaded" and stripped.endswith(":"):
                in_agents_list = True
                continue
            item = _list_item(stripped) if in_agents_list else None
            if item:
                _agent_row(item[0], item[1], line_no, agents, parsed)
                continue
            in_agents_list = False
            pair = split_key_value(line)
            if pair:
                fmt = fmt or "key-value"
                key = normalise_key(pair[0])
                if key in {"total_context_agents", "tokens_par_agent"}:
                    continue
                field(key, pair[1], line_no)
            elif not stripped.startswith(("```", ">")):
                parsed.error(line_no, said("unrecognised line in header: {!r}", stripped), "warning")
        elif section == "signals" and stripped and not _is_placeholder(stripped):
            signals.append(stripped.lstrip("-* ").strip())
        elif section == "notes" and stripped and not _is_placeholder(stripped):
            notes.append(stripped)

    file_match = _FILE_NAME.match(path.name)
    sess_id = values.get("sess_id") or title_id or (file_match.group(2) if file_match else None)
    if not sess_id:
        sess_id = path.stem
        parsed.error(None, said("no session id in title, keys or file name: file name used"),
                     "warning")
    elif not SESS_ID_PATTERN.match(str(sess_id)):
        parsed.error(None, said("session id {!r} does not follow sess-YYYYMMDD-HHMM-<slug>", sess_id),
                     "warning")
    log_date = values.get("log_date") or title_date or (file_match.group(1) if file_match else None)
    if fmt is None:
        parsed.error(None, said("no metabolism fields found (no key/value table or key : value lines)"))
        return
    # Absent keys are missing; an explicit <non mesuré> / N/A is a recorded "not measured".
    missing = [k for k in METABOLISM_MANDATORY if k not in values]
    if missing:
        parsed.error(None, said("missing mandatory field(s) {}: loaded and flagged incomplete",
                                ", ".join(missing)), "warning")
    has_v2_rows = "handoff_level" in values or "cold_start_kpi_pass" in values
    row = {
        "source_file": source_file, "sess_id": str(sess_id), "log_date": log_date,
        "started_at": session_start(str(sess_id), log_date),
        "log_format": fmt, "log_version": "v2" if has_v2_rows else "v1",
        "is_incomplete": bool(missing or problems), "missing_fields": missing,
        "unparsed_fields": problems, "signals": signals,
        "notes": "\n".join(notes) or None,
        "extra": json.dumps(extra, ensure_ascii=False, sort_keys=True) if extra else None,
    }
    for key in FIELDS:
        if key not in ("sess_id", "log_date"):
            row[key] = values.get(key)
    parsed.add("raw_metabolism_logs", row)
    for agent in agents:
        parsed.add("raw_agent_loads", {"source_file": source_file, "sess_id": str(sess_id), **agent})


def _list_item(stripped: str) -> tuple[str, str] | None:
    """``- name : value`` (both parts non-empty) -> (name, value); linear on any line."""
    if not stripped.startswith("-"):
        return None
    name, sep, value = stripped[1:].partition(":")
    name, value = name.strip(), value.strip()
    return (name, value) if sep and name and value else None


def _is_placeholder(text: str) -> bool:
    return text.startswith("<") and text.endswith(">")


def _agent_row(name: str, tokens: str, line_no: int, agents: list[dict], parsed: Parsed) -> None:
    agent = strip_markup(name).strip()
    if not agent or agent.lower().startswith("total") or _is_placeholder(agent):
        return
    value, problem = parse_number(tokens.split("tokens")[0])
    if value is not None and (out := ranges.SESSION_TOKENS.problem(value)):
        value, problem = None, f"{out} ({ranges.SESSION_TOKENS.name}, spec/ranges.py)"
    if problem:
        parsed.error(line_no, said("agent {!r}: {}; tokens left empty", agent, problem), "warning")
    agents.append({"agent": agent, "tokens_logged": None if value is None else int(value),
                   "line": line_no})


_INDEX_COLUMNS = {
    "date": "log_date", "session": "sess_id", "type": "type", "mode": "mode",
    "health_score": "health_score", "handoff": "handoff_level", "kpi": "cold_start_kpi_pass",
    "seuils": "thresholds",
}


def _parse_index(text: str, source_file: str, parsed: Parsed) -> None:
    header: list[str] | None = None
    for line_no, line in enumerate(text.splitlines(), start=1):
        cells = split_table_row(line)
        if cells is None:
            header = None
            continue
        if is_separator_row(cells):
            continue
        if header is None:
            header = [_INDEX_COLUMNS.get(strip_markup(c).lower().replace(" ", "_"), "") for c in cells]
            continue
        if "sess_id" not in header:
            continue
        if len(cells) != len(header):
            parsed.error(line_no, said(f"index row has {len(cells)} cells, header has {len(header)}"))
            continue
        raw = {col: cell for col, cell in zip(header, cells, strict=True) if col}
        if not raw.get("sess_id") or raw["sess_id"].startswith("<") or raw["sess_id"] == "...":
            continue
        health, problem = parse_number(raw.get("health_score", ""))
        if problem:
            parsed.error(line_no, said("health_score: {}", problem), "warning")
        kpi, _ = parse_bool(raw.get("cold_start_kpi_pass", ""))
        parsed.add("raw_metabolism_index", {
            "source_file": source_file, "line": line_no,
            "log_date": parse_text(raw.get("log_date", ""))[0],
            "sess_id": strip_markup(raw["sess_id"]), "type": parse_text(raw.get("type", ""))[0],
            "mode": parse_text(raw.get("mode", ""))[0], "health_score": health,
            "handoff_level": parse_text(raw.get("handoff_level", ""))[0],
            "cold_start_kpi_pass": kpi, "thresholds": parse_text(raw.get("thresholds", ""))[0],
        })
