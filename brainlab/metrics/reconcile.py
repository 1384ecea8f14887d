"""One session's spend measured three ways (issue 45): ``usage_reconcile`` for ``usage reconcile``.

Transcripts, telemetry (``api_request`` events) and the status line's snapshots each measure a
session's tokens and cost; the view (store/models/marts/usage_reconcile.sql) puts them side
by side per session and UTC day, with the gap of each field, the authoritative figure and a
flag when a gap passes the tolerance (docs/transcripts.md, "Three measures of one session").
"""

from __future__ import annotations

from pathlib import Path

SOURCES = ("transcript", "telemetry", "statusline")
SOURCE_NAMES = {"transcript": "transcripts", "telemetry": "telemetry",
                "statusline": "statusline"}
FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens",
          "cost_usd")
EMPTY = ("No usage to reconcile in {db}: `brainlab ingest claude` adds transcripts,"
         " `brainlab ingest otel FILE` telemetry, and the status line's snapshots come with the"
         " next ingest once `brainlab hooks install` has set it up.\n")


def reconcile_rows(db: str | Path, since=None, until=None, session: str | None = None,
                   flagged_only: bool = False, limit: int | None = None) -> list[dict]:
    """The ``usage_reconcile`` rows as records, flagged and largest cost gaps first.

    Each record: ``session_id``, ``day``, ``sources`` (which of transcripts, telemetry and
    statusline saw the session that day), one object per source with its token fields and
    ``cost_usd`` (null when that source did not see it; the status line has no cache
    fields), ``gap`` (each field's largest minus smallest value, null with fewer than two
    sources), ``reconciled`` (the authoritative value of each field), ``flagged`` and
    ``note``.
    """
    from brainlab.store.connection import rows

    where, params = [], []
    for clause, value in (("day >= ?", since), ("day <= ?", until),
                          ("session_id = ?", session)):
        if value is not None:
            where.append(clause)
            params.append(value)
    if flagged_only:
        where.append("flagged")
    sql = ("SELECT * FROM usage_reconcile" + (" WHERE " + " AND ".join(where) if where else "")
           + " ORDER BY flagged DESC, gap_cost_usd DESC NULLS LAST, day DESC, session_id"
           + (f" LIMIT {int(limit)}" if limit else ""))
    names, found = rows(db, sql, params)
    return [record(dict(zip(names, row, strict=True))) for row in found]


def record(row: dict) -> dict:
    """One view row as the nested record ``--json`` prints."""
    out = {"session_id": row["session_id"], "day": row["day"].isoformat(),
           "sources": list(row["sources"])}
    for source in SOURCES:
        seen = SOURCE_NAMES[source] in out["sources"]
        out[SOURCE_NAMES[source]] = {
            field: row.get(f"{source}_{field}") for field in FIELDS
            if f"{source}_{field}" in row} if seen else None
    out["gap"] = {field: row[f"gap_{field}"] for field in FIELDS}
    out["reconciled"] = {field: row[f"reconciled_{field}"] for field in FIELDS}
    out["flagged"] = bool(row["flagged"])
    out["note"] = row["note"]
    return out


def reconcile_output(db: str | Path, fmt: str = "text", **filters) -> str:
    """What ``brainlab usage reconcile`` prints: a table (``text``), ``json`` or ``csv``."""
    records = reconcile_rows(db, **filters)
    if fmt == "json":
        import json

        return json.dumps(records, indent=1) + "\n"
    columns = ("session_id", "day", "sources", "cost_transcripts", "cost_telemetry",
               "cost_statusline", "gap_cost_usd", "gap_input_tokens", "gap_output_tokens",
               "gap_cache_read_tokens", "gap_cache_creation_tokens", "reconciled_cost_usd",
               "flagged", "note")
    flat = [(r["session_id"], r["day"], "+".join(r["sources"]),
             *((r[name] or {}).get("cost_usd") for name in SOURCE_NAMES.values()),
             r["gap"]["cost_usd"], r["gap"]["input_tokens"], r["gap"]["output_tokens"],
             r["gap"]["cache_read_tokens"], r["gap"]["cache_creation_tokens"],
             r["reconciled"]["cost_usd"], r["flagged"], r["note"]) for r in records]
    if fmt == "csv":
        from brainlab.common import tables

        return tables.to_csv(columns, flat)
    if not records:
        return EMPTY.format(db=db)
    return text(records)


def _money(value) -> str:
    return "—" if value is None else f"${value:,.2f}"


def _count(value) -> str:
    return "—" if value is None else f"{value:,}"


def text(records: list[dict]) -> str:
    """An 80-column table: one line per session and day, then what the counts mean."""
    lines = [f"{'session':<8}  {'day':<10}  {'by':<3}  {'transcr.':>8}  {'telem.':>8}"
             f"  {'status':>8}  {'gap $':>7}  {'gap out':>8}  flag"]
    letters = {"transcripts": "T", "telemetry": "O", "statusline": "S"}
    for r in records:
        seen = "".join(letters[s] for s in r["sources"])
        lines.append(
            f"{r['session_id'][:8]:<8}  {r['day']:<10}  {seen:<3}"
            f"  {_money((r['transcripts'] or {}).get('cost_usd')):>8}"
            f"  {_money((r['telemetry'] or {}).get('cost_usd')):>8}"
            f"  {_money((r['statusline'] or {}).get('cost_usd')):>8}"
            f"  {_money(r['gap']['cost_usd']):>7}  {_count(r['gap']['output_tokens']):>8}"
            f"  {'YES' if r['flagged'] else ''}")
    flagged = sum(r["flagged"] for r in records)
    alone = sum(len(r["sources"]) == 1 for r in records)
    import textwrap

    notes = (f"{len(records):,} session-day(s) (UTC days), {flagged:,} flagged (a token gap of"
             " at least 1 token and over 1%, or a cost gap of at least $0.01 and over 1%),"
             f" {alone:,} seen by one source only (not compared). by: T transcripts, O"
             " telemetry (api_request), S status line; every field, each gap and the"
             " authoritative figure: --json.")
    return "\n".join(lines) + "\n\n" + textwrap.fill(notes, 80) + "\n"


def reconcile_week(db: str | Path, since, until) -> dict | None:
    """The report's figures for UTC days ``since``..``until``: None when no source saw any.

    ``reconciled_cost_usd`` (the authoritative cost summed), ``transcript_cost_usd``, their
    ``gap_usd``, the session-days seen by more than one source (``compared``), the ``flagged``
    ones and ``frame``: the flagged rows as a DataFrame (session, day, sources, each source's
    cost, the gaps).
    """
    import pandas as pd

    records = reconcile_rows(db, since=since, until=until)
    if not records:
        return None
    reconciled = sum(r["reconciled"]["cost_usd"] or 0.0 for r in records)
    transcripts = sum((r["transcripts"] or {}).get("cost_usd") or 0.0 for r in records)
    flagged = [r for r in records if r["flagged"]]
    frame = pd.DataFrame([{
        "session": r["session_id"][:8], "day": r["day"], "sources": ", ".join(r["sources"]),
        **{f"{name} $": (r[name] or {}).get("cost_usd") for name in SOURCE_NAMES.values()},
        "gap $": r["gap"]["cost_usd"], "gap input": r["gap"]["input_tokens"],
        "gap output": r["gap"]["output_tokens"]} for r in flagged])
    return {"reconciled_cost_usd": reconciled, "transcript_cost_usd": transcripts,
            "gap_usd": reconciled - transcripts, "session_days": len(records),
            "compared": sum(len(r["sources"]) > 1 for r in records), "flagged": len(flagged),
            "frame": frame}
