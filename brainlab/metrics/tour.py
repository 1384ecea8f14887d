"""What notebook 05 (the protocol tour) shows of one session and its neighbours (issue 44 item 1).

Thin readers over the SQL views, one per concept, each returning a DataFrame or a small dict
the notebook prints; every figure is computed by the views (metabolism, signals, broker
blocks, workspaces, circuits), never here. What is here is the teaching: the arithmetic of a
score written out with its operands, and each division by zero named instead of printed as
``nan``. Each function returns an empty frame (or None) when the store lacks the data, so the
notebook can say what is missing.
"""

from __future__ import annotations

import math

import pandas as pd

from brainlab.spec.thresholds import Thresholds
from brainlab.store import query

DB = str


def _number(value) -> float | None:
    """``value`` as a float, None when missing (NULL, NaN, pandas NA)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def fmt(value, digits: int = 2, missing: str = "not recorded") -> str:
    """A figure as the tour prints it: ``missing`` instead of nan/None, integers without .0."""
    number = _number(value)
    if number is None:
        return missing
    return f"{number:,.0f}" if number == int(number) and abs(number) < 1e15 else \
        f"{number:,.{digits}f}"


def text(value, missing: str = "not recorded") -> str:
    """A text field as the tour prints it: ``missing`` instead of nan/None/empty."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return missing
    return str(value) or missing


def pick_session(db: DB, sess_id: str = "") -> str | None:
    """The session the tour follows: ``sess_id``, else one picked from the logged sessions.

    The first work session with a metabolism log that closed todos and committed (one that
    wrote a handoff preferred), else the first logged session; None without logs.
    """
    if sess_id:
        return sess_id
    found = query(db, """
        SELECT sess_id FROM stg_metabolism_sessions s
        ORDER BY (type = 'work' AND commits > 0 AND todos_closed > 0) DESC,
                 EXISTS (SELECT 1 FROM handoffs h WHERE h.sess_id = s.sess_id) DESC,
                 started_at, sess_id LIMIT 1""")
    return None if found.empty else str(found.sess_id.iloc[0])


def logged(db: DB, sess_id: str) -> pd.Series | None:
    """The session as its metabolism log records it (basis ``logged``): source_file is the .md."""
    from brainlab import metrics

    rows = metrics.sessions(db, basis="logged")
    rows = rows[rows.sess_id == sess_id]
    return None if rows.empty else rows.iloc[0]


def boot(db: DB, session_type: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """SPEC §2.3: the session type's layered file list and its boot targets (% of 200k)."""
    layers = query(db, "SELECT layer, position, path FROM context_files WHERE session_type = ? "
                       "ORDER BY layer, position", [session_type])
    targets = query(db, "SELECT target_l0_pct, target_l1_pct, target_l2_pct, target_boot_pct "
                        "FROM session_contexts WHERE session_type = ?", [session_type])
    return layers, targets


def boot_reads(db: DB, sess_id: str) -> pd.DataFrame:
    """What the session's transcript shows it read at boot: one row per file, first read first."""
    return query(db, """
        SELECT regexp_replace(file_path, '^.*/brain/', '') AS file, count(*) AS reads,
               min(ts) AS first_read
        FROM brain_boot_reads WHERE subject = ? GROUP BY ALL ORDER BY first_read""", [sess_id])


def cold_start(db: DB, sess_id: str) -> dict | None:
    """SPEC §3.3 cold start KPI at this session (only sessions booted without handoff count)."""
    row = query(db, "SELECT * FROM cold_start_kpi WHERE sess_id = ?", [sess_id])
    return None if row.empty else row.iloc[0].to_dict()


def mode(db: DB, sess_id: str) -> dict:
    """SPEC §2.7: the declared mode, its perimeter and how often sessions in it redirect."""
    row = query(db, "SELECT mode FROM metabolism_sessions WHERE sess_id = ?", [sess_id])
    declared = None if row.empty or pd.isna(row["mode"].iloc[0]) else str(row["mode"].iloc[0])
    redirections = query(db, "SELECT mode, mode_kind, sessions, redirections, "
                             "redirections_per_session FROM mode_redirections ORDER BY sessions "
                             "DESC")
    perimeter = query(db, "SELECT mode, action, refused, allowed FROM mode_perimeters")
    return {"mode": declared, "redirections": redirections, "perimeter": perimeter}


def health_steps(row: pd.Series) -> tuple[list[str], float | None]:
    """SPEC §3.2 v2 written out with the session's own numbers, and the score so computed.

    A missing input is named (and counted as 0, as the SQL does); None when no score applies.
    """
    tokens, peak = _number(row.get("tokens_used")), _number(row.get("context_peak_pct"))
    lines = []
    if tokens is None or peak is None:
        lines.append("denominator: tokens_used or context_peak_pct not recorded, so no score")
        return lines, None
    raw = tokens / 1000 * peak / 100
    denominator = max(1.0, raw)
    lines.append(f"denominator = max(1, {fmt(tokens)}/1000 * {fmt(peak)}/100) = max(1, "
                 f"{raw:.2f}) = {denominator:.2f}  (the max(1, ...) keeps a tiny session from "
                 "dividing by almost nothing)")
    terms = {"use-brain": (("todos_closed", 10), ("commits", 5)),
             "build-brain": (("kernel_files_touched", 15), ("adrs_written", 20)),
             "explore-brain": (("insights_captured", 8), ("duration_min", 0.1))}.get(
        row.get("category"))
    if terms is None:
        lines.append(f"category {row.get('category')}: no health score (SPEC §2.2: none)")
        return lines, None
    parts, missing = [], []
    for name, weight in terms:
        value = _number(row.get(name))
        if value is None:
            missing.append(name)
            continue
        parts.append((f"{name} * {weight:g}", value * weight, value))
    numerator = sum(p[1] for p in parts)
    shown = " + ".join(f"{label} ({fmt(v)} -> {fmt(points)})" for label, points, v in parts)
    lines.append(f"numerator ({row.get('category')}) = {shown or '0'} = {fmt(numerator)}")
    if missing:
        lines.append(f"not in the log: {', '.join(missing)} (SPEC §3.2: NULL when no source "
                     "gives it), counted as 0")
    lines.append(f"health_score = {fmt(numerator)} / {denominator:.2f} = "
                 f"{numerator / denominator:.3f}")
    return lines, numerator / denominator


def ratio_steps(signal: pd.Series, thresholds: Thresholds | None = None) -> list[str]:
    """SPEC §3.3 ratio at one session, with its window's counts; a zero denominator explained."""
    t = thresholds or Thresholds()
    n_use, n_build, n_explore = (int(_number(signal.get(k)) or 0)
                                 for k in ("n_use", "n_build", "n_explore"))
    denominator = n_build + t.ratio_explore_weight * n_explore
    window = f"{t.ratio_window} {t.ratio_window_unit}"
    head = (f"window ({window} up to this session): {n_use} use, {n_build} build, {n_explore} "
            f"explore -> ratio = {n_use} / ({n_build} + {t.ratio_explore_weight:g} * {n_explore})")
    if denominator == 0:
        return [head + " = undefined: no build- or explore-brain session in the window, so the "
                "division has nothing to divide by.",
                "brainlab gives no ratio and no band here (an empty value): the loop the "
                "ratio watches for (the brain working on itself) cannot be happening."]
    ratio = n_use / denominator
    band = signal.get("ratio_band") or "-"
    lines = [f"{head} = {ratio:.2f} -> {band} (>= {t.ratio_healthy:g} healthy, >= "
             f"{t.ratio_watch:g} watch, below: narcissistic loop)"]
    at_boot = _number(signal.get("ratio_at_boot"))
    if at_boot is None:
        lines.append("ratio at boot: undefined (no session before it in the window), so the "
                     "coach cannot fire by ratio")
    else:
        lines.append(f"ratio at boot {at_boot:.2f} -> coach by ratio when <= {t.coach_ratio:g}: "
                     f"{'yes' if at_boot <= t.coach_ratio else 'no'}")
    return lines


def saturating(db: DB, thresholds: Thresholds | None = None) -> pd.DataFrame:
    """SPEC §3.3 saturation: the sessions that saturate, with the inputs of the rule."""
    from brainlab import metrics

    rows = metrics.sessions(db, thresholds=thresholds)
    keep = rows[rows.saturation_flag.fillna(False).astype(bool)]
    return keep[["sess_id", "type", "category", "context_peak_pct", "todos_closed",
                 "kernel_files_touched", "health_score"]].reset_index(drop=True)


def pick_sprint(db: DB) -> str | None:
    """A recorded sprint whose expire keeps a source with its reason (the broker's outputs).

    One that also releases sources is preferred, then one with more agents.
    """
    found = query(db, """
        SELECT sprint FROM broker_block_files
        GROUP BY sprint
        HAVING count(*) FILTER (action = 'garder' AND reason IS NOT NULL) > 0
        ORDER BY count(*) FILTER (action = 'libérer') > 0 DESC,
                 count(DISTINCT agent) DESC, min(block_id) LIMIT 1""")
    return None if found.empty else str(found.sprint.iloc[0])


def sprint_map(db: DB, sprint: str) -> pd.DataFrame:
    """SPEC §4.2-§4.3 for one sprint: each file of each agent, loaded, referenced, its fate.

    Whether it was loaded at inhale, referenced during the sprint, and what the last expire
    did with it (libérer / garder, with the reason the broker wrote; a miss when not loaded).

    Files are matched by name: the broker writes a contract's file name, the sprint log a path.
    """
    return query(db, """
        WITH loaded AS (
            SELECT DISTINCT agent, path AS file FROM broker_block_files
            WHERE sprint = ? AND action = 'load'),
        last_expire AS (  -- a sprint resumed in a later session expires again: the last word
            SELECT block_id FROM broker_block_files
            WHERE sprint = ? AND action IN ('libérer', 'garder') ORDER BY line DESC LIMIT 1),
        fates AS (
            SELECT path AS file, max(action) AS fate, max(reason) AS reason
            FROM broker_block_files WHERE block_id = (SELECT block_id FROM last_expire)
              AND action IN ('libérer', 'garder')
            GROUP BY path),
        referenced AS (
            SELECT DISTINCT agent, regexp_replace(path, '^.*/', '') AS file, path
            FROM sprint_refs WHERE sprint_id = ?),
        pairs AS (
            SELECT coalesce(l.agent, r.agent) AS agent, coalesce(l.file, r.file) AS file,
                   l.file IS NOT NULL AS loaded, r.file IS NOT NULL AS referenced
            FROM loaded l FULL JOIN referenced r ON l.agent = r.agent AND l.file = r.file)
        SELECT p.agent, p.file, p.loaded, p.referenced,
               CASE WHEN NOT p.loaded THEN 'not loaded (read on demand)'
                    ELSE coalesce(f.fate, 'not in the expire block') END AS fate,
               CASE WHEN NOT p.loaded THEN 'referenced, not loaded: a miss (SPEC §4.5)'
                    WHEN f.fate = 'libérer' AND NOT p.referenced THEN 'never referenced (stale)'
                    WHEN f.fate = 'libérer' THEN 'domain stable'
                    WHEN f.fate = 'garder' THEN coalesce(f.reason, 'open TODO (no reason written)')
                    ELSE '' END AS reason
        FROM pairs p LEFT JOIN fates f ON f.file = p.file
        ORDER BY p.agent, p.file""", [sprint, sprint, sprint])


def breath(db: DB, sprint: str) -> dict | None:
    """SPEC §4.4 breath metrics the sprint's expire block recorded (None: not measured).

    Which alerts they raise is ``brainlab.sim.tuning.breath_alert_flags`` (the replay's rule).
    """
    row = query(db, "SELECT context_load, stale_ratio, breath_depth, exhale_rate FROM "
                    "broker_blocks WHERE sprint = ? AND kind = 'expire' ORDER BY ts LIMIT 1",
                [sprint])
    if row.empty:
        return None
    return {k: _number(v) for k, v in row.iloc[0].items()}


def workspace(db: DB, found: pd.DataFrame | None = None) -> dict | None:
    """SPEC §5: one workspace with decisions (its README's mode, files, log.md, reads, breaches).

    ``found``: :func:`violations` already read (the view evaluates every rule: read it once).
    """
    chosen = query(db, "SELECT w.workspace, w.project, w.sprint, w.mode, w.ttl, w.archive "
                       "FROM workspaces w JOIN decisions d USING (workspace) "
                       "GROUP BY ALL ORDER BY count(*) DESC, w.workspace LIMIT 1")
    if chosen.empty:
        return None
    name = str(chosen.workspace.iloc[0])
    files = query(db, "SELECT file_name, lines, active_lines FROM workspace_files "
                      "WHERE workspace = ? ORDER BY file_name", [name])
    log = query(db, "SELECT decided_on, decided_time, question, choice, reason, is_well_formed "
                    "FROM decisions WHERE workspace = ? ORDER BY line", [name])
    reads = query(db, "SELECT reader, workspace, section, ts FROM workspace_reads ORDER BY ts")
    found = violations(db) if found is None else found
    breaches = found[found.rule.str.startswith("WSP")].sort_values("rule").head(8)[
        ["rule", "rule_name", "subject", "message"]].reset_index(drop=True)
    return {"workspace": chosen.iloc[0].to_dict(), "files": files, "log": log, "reads": reads,
            "breaches": breaches}


def handoff_and_claim(db: DB, sess_id: str) -> dict:
    """SPEC §2.6 and §2.4: the session's claim and handoff, and the store's claims by status.

    ``stale`` counts the claims open past their TTL at the brain's clock.
    """
    claim = query(db, "SELECT type, scope, agent, status, opened_at, closed_at, ttl_hours "
                      "FROM claims WHERE sess_id = ?", [sess_id])
    handoff = query(db, "SELECT handoff, handoff_level, created_at FROM handoffs "
                        "WHERE sess_id = ?", [sess_id])
    statuses = query(db, "SELECT status, count(*) AS claims FROM claims GROUP BY 1 ORDER BY 2 "
                         "DESC")
    stale = query(db, "SELECT count(*) AS n FROM stale_claims")
    return {"claim": claim, "handoff": handoff, "statuses": statuses,
            "stale": int(stale.n.iloc[0]) if not stale.empty else 0}


def pick_ticket(db: DB) -> str | None:
    """A ticket whose circuit stopped and was decided on by a regulator (shortest such)."""
    found = query(db, """
        SELECT ticket FROM circuit_events_ordered GROUP BY ticket
        HAVING count(*) FILTER (event = 'stop') > 0
           AND count(*) FILTER (event = 'decision' AND decided_by = 'regulator') > 0
           AND count(*) FILTER (event = 'admission') > 0 AND count(*) FILTER (event = 'end') > 0
        ORDER BY count(*), ticket LIMIT 1""")
    return None if found.empty else str(found.ticket.iloc[0])


def ticket_timeline(db: DB, ticket: str) -> pd.DataFrame:
    """SPEC §6: the ticket's circuit as readable events (no paths), one row per event.

    Its label: the step, the stop by code and name, the regulator's decision with its facts.
    """
    return query(db, r"""
        SELECT e.seq, e.event_at, e.event,
               coalesce(e.step, '') AS step,
               coalesce(nullif(e.component, '.'), '') AS component,
               CASE e.event
                 WHEN 'step' THEN 'step ' || e.step || coalesce(' ' || e.agent, '')
                 WHEN 'stop' THEN coalesce(CAST(s.code AS VARCHAR) || ' ', '') || e.name
                 WHEN 'decision' THEN coalesce(e.decided_by, 'regulator') || ': ' ||
                      replace(coalesce(e.kind, ''), '_', ' --') ||
                      coalesce(' (facts: ' || nullif(regexp_replace(e.facts, '[\[\]"]', '',
                                                                   'g'), '') || ')', '')
                 WHEN 'admission' THEN CASE WHEN e.accepted THEN 'accepted' ELSE
                      'refused: ' || coalesce(e.reason, '') END
                 WHEN 'review' THEN coalesce(e.verdict, 'review')
                 WHEN 'end' THEN 'end: ' || coalesce(e.outcome, '')
                 ELSE e.event END AS label
        FROM circuit_events_ordered e LEFT JOIN stop_codes s ON s.name = e.name
        WHERE e.ticket = ? AND e.event <> 'session'
        ORDER BY e.seq""", [ticket])


def violations(db: DB) -> pd.DataFrame:
    """Every violation of brainlab check's catalogue: rule, name, severity, SPEC, subject."""
    return query(db, "SELECT rule, rule_name, severity, spec, subject, message FROM violations")


def compliance(found: pd.DataFrame, sess_id: str | None,
               top: int = 8) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rules this session broke, and the rules broken most (from :func:`violations`)."""
    mine = found[found.subject == sess_id].drop(columns="subject").sort_values(
        ["severity", "rule"]).reset_index(drop=True)
    counts = (found.groupby(["rule", "rule_name", "severity", "spec"], as_index=False)
              .size().rename(columns={"size": "violations"})
              .sort_values(["violations", "rule"], ascending=[False, True]).head(top))
    return mine, counts.reset_index(drop=True)
