"""The broker replay's one output object (``simulate broker --json``) and its text rendering.

:func:`broker_report` runs the replay with its intervals, back-test and change check and
returns one JSON-ready dict; the CLI prints it as JSON or through :func:`format_report`, and
notebook 02 reads the same dict. Keys (docs/broker.md, "Output"): ``policies``, ``total``,
``replayed``, ``skipped``, ``contracts``, ``boot_tokens``, ``project_signals``, ``focus``,
``missed_files``, ``escalations``,
``backtest``, ``change_check`` (when a change was found or named), ``interval``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import pandas as pd

from brainlab.common.errors import SimulationError
from brainlab.sim import broker_checks
from brainlab.sim.intervals import triple
from brainlab.sim.policies import make_policy
from brainlab.sim.sprintset import SprintSet
from brainlab.spec.broker import SEED

BASELINE = "recorded"


def broker_report(ss: SprintSet, policies: Sequence[str], *, draws: int =
                  broker_checks.DEFAULT_DRAWS, seed: int = 0, level: float = broker_checks.LEVEL,
                  backtest: bool = True, change: broker_checks.Change | None = None,
                  find_change: bool = True, miss_overhead_tokens: float | None = None,
                  thresholds=None) -> tuple[dict, object]:
    """(the report dict, the ReplayResult) of ``policies`` (``recorded`` added as baseline)."""
    from brainlab.sim.broker import DEFAULT_MISS_OVERHEAD_TOKENS, replay

    labels = [make_policy(p) for p in policies]
    if BASELINE not in [p.label for p in labels]:
        labels.append(make_policy(BASELINE))
    overhead = DEFAULT_MISS_OVERHEAD_TOKENS if miss_overhead_tokens is None \
        else miss_overhead_tokens
    result = replay(ss, labels, miss_overhead_tokens=overhead, thresholds=thresholds)
    iv = broker_checks.intervals(result, BASELINE, draws=draws, seed=seed, level=level)
    summary = result.summary.set_index("policy")
    rows = []
    for row in iv.rows():
        row["agent_sprints"] = int(summary.loc[row["policy"], "agent_sprints"])
        rows.append(row)
    sc = ss.scope
    n_sprints = int(ss.rows["sprint_id"].nunique())
    report: dict = {
        "policies": rows,
        "total": sc.total if sc is not None else n_sprints,
        "replayed": sc.replayed if sc is not None else n_sprints,
        "skipped": sc.skipped if sc is not None else {},
        "contracts": sc.contract_counts if sc is not None else _contract_counts(ss),
        "contracts_replayed": sc.contracts if sc is not None else "all",
        "boot_tokens": float(summary["boot_tokens"].iloc[0]) if len(summary) else 0.0,
        "project_signals": sc.project_signals if sc is not None else {},
        "focus": focus_summary(sc),
        "missed_files": missed_files(result),
        "escalations": escalations(result),
        "exclusions": exclusion_rows(ss),
        "domain_confidence": domain_confidence(ss),
        "todo_scribe_signals": todo_scribe_signals(ss, result),
        "interval": {"level": level, "draws": draws, "seed": seed,
                     "method": "percentile bootstrap over sprints, paired across policies"},
    }
    if backtest:
        bt = broker_checks.backtest(ss, draws=draws, seed=seed, level=level, result=result)
        report["backtest"] = [
            {"figure": r["figure"], "replayed": triple(r["replayed"], r["low"], r["high"]),
             "recorded": r["recorded"], "covered": bool(r["covered"]),
             "sprints": int(r["sprints"])} for r in bt.to_dict("records")]
    if change is None and find_change:
        change = broker_checks.find_change(ss)
    if change is not None:
        report["change"] = {"day": f"{change.day:%Y-%m-%d}", "to": change.to,
                            "before": change.before, "found": change.found}
        try:
            check = broker_checks.change_check(ss, change, draws=draws, seed=seed,
                                               level=level, miss_overhead_tokens=overhead)
        except SimulationError as exc:
            if not change.found:  # named: the user asked for it
                raise
            report["change"]["note"] = str(exc)
            check = pd.DataFrame(columns=["figure"])
        report["change_check"] = [
            {"figure": r["figure"], "predicted": triple(r["predicted"], r["low"], r["high"]),
             "actual": None if r["actual"] != r["actual"] else r["actual"],
             "covered": None if r["covered"] is None else bool(r["covered"]),
             "before_sprints": int(r["before_sprints"]),
             "after_sprints": int(r["after_sprints"])} for r in check.to_dict("records")]
    return report, result


def focus_summary(scope) -> dict:
    """The focus (helloWorld) as the replay used it (seed lines 56-61, third signal).

    ``file`` None: no focus.md in the store (the signal is absent); ``project`` None: it names
    no known project, or several (``projects``); ``decided``: sprints whose project it decided.
    """
    focus = getattr(scope, "focus", None)
    if focus is None:
        return {"file": None, "modified_at": None, "projects": [], "project": None,
                "decided": 0}
    return {"file": focus.source_file,
            "modified_at": None if focus.modified_at is None
            else f"{focus.modified_at:%Y-%m-%dT%H:%M:%S}",
            "projects": list(focus.projects), "project": focus.project,
            "decided": int(scope.project_signals.get("focus", 0))}


def _contract_counts(ss: SprintSet) -> dict[str, int]:
    per = ss.rows.groupby("sprint_id", observed=True)["contract_inferred"].any()
    return {"declared": int((~per).sum()), "inferred": int(per.sum())}


def missed_files(result) -> list[dict]:
    """Rows of policy, file, misses: every file a policy missed, most-missed first."""
    files = result.files[result.files["misses"] > 0]
    files = files.sort_values(["misses", "policy", "path"], ascending=[False, True, True])
    return [{"policy": p, "file": f, "misses": int(m)}
            for p, f, m in zip(files["policy"], files["path"], files["misses"], strict=True)]


def escalations(result) -> list[dict]:
    """Per policy that flags them: agent-sprints escalated to tech-lead, and their cost.

    An agent-sprint needing more than 2 sources escalates (SPEC §4.2, seed line 221); its
    cost is the tokens its missed files were read for on demand.
    """
    rows = result.rows
    if "escalated" not in rows:
        return []
    out = []
    for policy, group in rows.groupby("policy", observed=True, sort=False):
        flagged = group["escalated"].fillna(False).astype(bool)
        if group["escalated"].isna().all():
            continue
        out.append({"policy": str(policy), "agent_sprints": int(flagged.sum()),
                    "tokens_miss": float(group.loc[flagged, "tokens_miss"].sum())})
    return out


def exclusion_rows(ss: SprintSet) -> list[dict]:
    """The files the broker's inhale blocks excluded explicitly, per replayed sprint."""
    frame = ss.exclusions if ss.exclusions is not None else pd.DataFrame()
    return [{"sprint": s, "file": f, "reason": r if isinstance(r, str) else None}
            for s, f, r in zip(frame.get("sprint_id", []), frame.get("file", []),
                               frame.get("reason", []), strict=True)]


def domain_confidence(ss: SprintSet) -> dict:
    """How sure each agent-sprint's domain is (seed line 222, "niveau de confiance explicite").

    Per agent-sprint: the share of the contract files it referenced that belong to its domain
    (1.0 when they all do; below 1 the domain is ambiguous). ``agent_sprints``: those with a
    referenced contract file; ``ambiguous``: below 1; ``mean``: their mean confidence.
    """
    import numpy as np

    dom = ss.file_domain[ss.ref_file]
    known = dom >= 0
    same = known & (dom == ss.row_domain[ss.ref_row])
    n_in = np.bincount(ss.ref_row[known], minlength=ss.n_rows)
    n_same = np.bincount(ss.ref_row[same], minlength=ss.n_rows)
    rated = n_in > 0
    conf = n_same[rated] / n_in[rated]
    return {"agent_sprints": int(rated.sum()), "ambiguous": int((conf < 1).sum()),
            "mean": float(conf.mean()) if len(conf) else None}


def todo_scribe_signals(ss: SprintSet, result) -> list[dict]:
    """Per policy: stale releases, and the files whose stale release recurs (seed line 213).

    A source released as stale (loaded, never referenced, not kept) in two or more sprints
    is a recurring stale release: the broker signals it to the todo-scribe.
    """
    import numpy as np

    from brainlab.sim.encoding import member
    from brainlab.sim.sprintset import pair_keys, sorted_unique

    nf = max(ss.n_files, 1)
    ref_keys = pair_keys(ss.ref_row, ss.ref_file, nf)
    sprint = ss.row_sprint
    n_sprints = int(sprint.max()) + 1 if len(sprint) else 1
    out = []
    for label, (row, file, kept) in (result.maps or {}).items():
        stale = ~member(ref_keys, pair_keys(row, file, nf)) & ~kept
        pairs = sorted_unique(file[stale] * n_sprints + sprint[row[stale]])
        per_file = np.bincount(pairs // n_sprints, minlength=nf)
        out.append({"policy": label, "stale_releases": int(len(pairs)),
                    "recurring_files": int((per_file >= 2).sum())})
    return out


# --- text ----------------------------------------------------------------------------------

def _range(low, high, kind: str) -> str:
    if low is None or high is None:
        return "—"
    if kind == "share":
        return f"{low * 100:.1f}–{high * 100:.1f}%"
    if kind == "int":
        if min(abs(low), abs(high)) >= 10_000:  # thousands: the interval fits a column
            return f"{low / 1000:,.0f}k–{high / 1000:,.0f}k"
        return f"{low:,.0f}–{high:,.0f}"
    if min(abs(low), abs(high)) >= 1_000:
        return f"{low:,.0f}–{high:,.0f}"
    return f"{low:.2f}–{high:.2f}"


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, width=width, break_long_words=False,
                                   break_on_hyphens=False))


def format_report(report: dict, width: int = 80) -> str:
    """The report as the CLI prints it: scope, back-test first, then the policies, the change."""
    from brainlab.common import tables

    level = int(round(report["interval"]["level"] * 100))
    skipped = ", ".join(f"{n} {r}" for r, n in report["skipped"].items())
    lines = [_wrap(f"{report['total']:,} sprint(s) in the store, {report['replayed']:,} replayed"
                   + (f"; skipped: {skipped}" if skipped else "")
                   + f" (where the broker runs: {SEED}:32-37, 241-247)", width)]
    c = report["contracts"]
    other = {"declared": "inferred", "inferred": "declared"}.get(report["contracts_replayed"])
    note = f"{c['declared']:,} sprint(s) with a declared contract, {c['inferred']:,} with one" \
           " inferred from the directory layout"
    if other:
        note += f" ({other} not replayed: --contracts {other} or all)"
    lines.append(_wrap(note, width))
    if report.get("project_signals"):
        lines.append(_wrap(_signals_text(report), width))
    lines.append(_wrap(f"boot context: {report['boot_tokens']:,.0f} tokens already in context "
                       "since boot (SPEC §2.3), the same under every policy, not counted below",
                       width))
    if report.get("backtest") is not None:
        lines += ["", _backtest_text(report, level, width)]
    names = ["policy", "tokens", "tokens_range", "miss_rate", "miss_range", "waste_rate",
             "alerts", "vs_recorded"]
    columns = [tables.Column("policy", "policy", "text"),
               tables.Column("tokens", "tokens", "int"),
               tables.Column("tokens_range", f"{level}%", "text", drop_rank=2),
               tables.Column("miss_rate", "miss rate", "share"),
               tables.Column("miss_range", f"{level}%", "text", drop_rank=1),
               tables.Column("waste_rate", "waste rate", "share", drop_rank=3),
               tables.Column("alerts", "alerts", "int", drop_rank=4),
               tables.Column("vs_recorded", "vs recorded", "text")]
    rows = []
    for row in report["policies"]:
        tok, miss, waste, alerts = (row[f] for f in broker_checks.FIGURES)
        versus = "baseline" if row["policy"] == BASELINE else (
            "differs" if row["distinguishable_from_recorded"] else "indistinguishable")
        rows.append((row["policy"], tok[0], _range(tok[1], tok[2], "int"), miss[0],
                     _range(miss[1], miss[2], "share"), waste[0], alerts[0], versus))
    lines += ["", tables.text_table(names, rows, width=width, columns=columns,
                                    see="--json").rstrip("\n")]
    lines.append(_wrap(
        f"{level}% intervals: percentile bootstrap over the {report['replayed']:,} sprints "
        f"({report['interval']['draws']:,} draws, the same resamples for every policy). "
        "'indistinguishable': every difference from recorded (tokens, miss rate, waste rate)"
        " lies within its interval.", width))
    groups = _indistinguishable_groups(report["policies"])
    if groups:
        lines.append(_wrap("Not ranked, indistinguishable from each other: "
                           + "; ".join(", ".join(g) for g in groups), width))
    for esc in report["escalations"]:
        if esc["agent_sprints"]:
            lines.append(_wrap(
                f"{esc['policy']}: {esc['agent_sprints']:,} agent-sprint(s) needed more than "
                f"2 sources: escalated to tech-lead (SPEC §4.2), {esc['tokens_miss']:,.0f} "
                "tokens read on demand", width))
    lines += _extras_text(report, width)
    if report.get("change_check") is not None:
        lines += ["", _change_text(report, level, width)]
    return "\n".join(lines)


def _signals_text(report: dict) -> str:
    """Which signal decided the sprints' projects, and what the focus told."""
    from brainlab.sim.broker_scope import describe_focus

    counts = ", ".join(f"{n:,} {s}" for s, n in report["project_signals"].items() if n)
    focus = report.get("focus") or {}
    if not focus.get("file"):
        said = describe_focus(None)
    elif focus.get("project"):
        said = (f"focus: {focus['project']} for sessions booted since "
                f"{focus['modified_at'][:16].replace('T', ' ')}, {focus['decided']:,} sprint(s)"
                " decided by it; older sessions: unknown (the file keeps no history)")
    elif focus.get("projects"):
        said = (f"focus: names {len(focus['projects'])} projects ({', '.join(focus['projects'])}):"
                " ambiguous, decides no sprint")
    else:
        said = "focus: names no known project, decides no sprint"
    return (f"project detected by (first signal that holds, {SEED}:56-61): "
            f"{counts or 'none'}; {said}")


def _extras_text(report: dict, width: int) -> list[str]:
    """Exclusions, domain confidence and todo-scribe signals, one line each."""
    lines = []
    excl = report.get("exclusions") or []
    if excl:
        lines.append(_wrap(f"{len(excl):,} explicit exclusion(s) in the recorded inhale blocks"
                           f" (e.g. {excl[0]['file']}: {excl[0]['reason'] or 'no reason'})",
                           width))
    conf = report.get("domain_confidence") or {}
    if conf.get("agent_sprints"):
        lines.append(_wrap(f"domain confidence: {conf['ambiguous']:,} of"
                           f" {conf['agent_sprints']:,} agent-sprints referenced contract files"
                           f" outside their domain (ambiguous; mean confidence"
                           f" {conf['mean']:.0%})", width))
    for sig in report.get("todo_scribe_signals") or []:
        if sig["policy"] == BASELINE and sig["stale_releases"]:
            lines.append(_wrap(f"todo-scribe: {sig['stale_releases']:,} stale release(s) under"
                               f" {BASELINE}, {sig['recurring_files']:,} file(s) released stale"
                               " in two or more sprints (seed line 213)", width))
    return lines


def _indistinguishable_groups(rows: list[dict]) -> list[list[str]]:
    seen, groups = set(), []
    for row in rows:
        if row["policy"] in seen or not row["indistinguishable_from"]:
            continue
        group = [row["policy"], *[p for p in row["indistinguishable_from"] if p not in seen]]
        seen |= set(group)
        groups.append(group)
    return groups


def _backtest_text(report: dict, level: int, width: int) -> str:
    from brainlab.common import tables

    rows = report["backtest"]
    if not rows:
        return _wrap("back-test: no replayed sprint has both a recorded source map and an "
                     "expire block with printed breath metrics: nothing to check the replay "
                     "against", width)
    names = ["figure", "replayed", "interval", "recorded", "covered"]
    body = [(r["figure"], r["replayed"][0], _range(r["replayed"][1], r["replayed"][2], "float"),
             r["recorded"], "yes" if r["covered"] else "NO") for r in rows]
    columns = [tables.Column("figure", "figure", "text"),
               tables.Column("replayed", "replayed", "float"),
               tables.Column("interval", f"{level}% interval", "text"),
               tables.Column("recorded", "printed", "float"),
               tables.Column("covered", "covered", "text")]
    head = _wrap(f"back-test: the recorded policy replayed on {rows[0]['sprints']:,} sprint(s) "
                 "against the breath metrics the broker printed (mean per sprint)", width)
    text = head + "\n" + tables.text_table(names, body, width=width, columns=columns,
                                           see="--json").rstrip("\n")
    missed = [r["figure"] for r in rows if not r["covered"]]
    if missed:
        text += "\n" + _wrap(f"The replay does not reproduce the recorded {', '.join(missed)}:"
                             " read the what-ifs below with care.", width)
    return text


def _change_text(report: dict, level: int, width: int) -> str:
    from brainlab.common import tables

    ch, rows = report["change"], report["change_check"]
    if not rows:
        return _wrap(f"change check: policy {ch['to']} from {ch['day']} found in the recorded"
                     f" source maps, not checked: {ch.get('note', '')}", width)
    how = f"found in the recorded source maps (before: {ch['before']})" if ch["found"] \
        else "named with --change-date/--to"
    head = _wrap(f"change check: policy {ch['to']} from {ch['day']}, {how}. The "
                 f"{rows[0]['before_sprints']:,} sprint(s) before, replayed under {ch['to']},"
                 f" against the {rows[0]['after_sprints']:,} after, as recorded", width)
    names = ["figure", "predicted", "interval", "actual", "covered"]
    body = [(r["figure"], r["predicted"][0], _range(r["predicted"][1], r["predicted"][2],
                                                    "float"), r["actual"],
             "—" if r["covered"] is None else "yes" if r["covered"] else "NO") for r in rows]
    columns = [tables.Column("figure", "figure", "text"),
               tables.Column("predicted", "predicted", "float"),
               tables.Column("interval", f"{level}% interval", "text"),
               tables.Column("actual", "actual", "float"),
               tables.Column("covered", "covered", "text")]
    return head + "\n" + tables.text_table(names, body, width=width, columns=columns,
                                           see="--json").rstrip("\n")


def as_frame(rows: list[dict]) -> pd.DataFrame:
    """A report's list of rows as a DataFrame (``[value, low, high]`` split into 3 columns)."""
    flat = []
    for row in rows:
        out = {}
        for key, value in row.items():
            if isinstance(value, list) and len(value) == 3 and not isinstance(value[0], str):
                out[key], out[f"{key}_low"], out[f"{key}_high"] = value
            elif not isinstance(value, dict | list):
                out[key] = value
        flat.append(out)
    return pd.DataFrame(flat)


def load_for_notebook(db, contracts: str = "declared", **kwargs):
    """(SprintSet or None, a sentence for the reader or None, missing: no sprints at all).

    Sprints with a declared contract first; when a store has none but has sprints whose
    contract is inferred from the directory layout, those (every figure then marked
    inferred). ``missing``: the store holds no sprint at all (the notebook shows its
    "not in this database" note).
    """
    from brainlab.sim.broker import load_sprints

    try:
        return load_sprints(db, contracts=contracts, **kwargs), None, False
    except SimulationError as exc:
        text = str(exc)
        if text.startswith("no sprints in"):
            return None, None, True
        if contracts == "declared" and "--contracts inferred" in text:
            ss = load_sprints(db, contracts="inferred", **kwargs)
            return ss, ("No sprint has a declared contract (projets/<project>.md, SPEC §4.1):"
                        " every figure below is for the sprints whose contract is INFERRED"
                        " from the directory layout, which the broker itself would refuse to"
                        " route."), False
        return None, text, False
