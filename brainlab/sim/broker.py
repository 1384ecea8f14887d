"""Replay recorded sprints under context-broker policies (SPEC §4.5) and compare them.

``replay(sprints, policies)`` gives one row per sprint, agent and policy: loaded, hits,
misses, waste, tokens loaded, tokens read on demand for misses, and the breath metrics of
SPEC §4.4 with their alerts. ``load_sprints(db)`` reads the sprints from the store (sprint
records, recorded broker blocks, and Claude Code transcripts when their tables exist).
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import pandas as pd

from brainlab.common.errors import SimulationError
from brainlab.sim.output import write_frame
from brainlab.sim.policies import Policy, make_policy
from brainlab.sim.sprintset import (
    DEFAULT_FILE_BYTES,
    SprintSet,
    pair_keys,
    sorted_unique,
    sprints_from_records,
)
from brainlab.spec.thresholds import Thresholds

DEFAULT_MISS_OVERHEAD_TOKENS = 250  # SPEC §4.5 per-miss turn overhead (a tool call + result)
DEFAULT_POLICIES = ("protocol", "greedy-domain", "on-demand", "history", "recorded")
ROW_COLUMNS = [
    "sprint_id", "project", "domain", "agent", "policy", "contract_inferred", "referenced",
    "loaded", "hits", "misses", "waste", "released", "kept", "tokens_loaded", "tokens_miss",
    "tokens_total", "context_load", "stale_ratio", "breath_depth", "exhale_rate",
    "alert_overload", "alert_noise", "alert_retention", "alert_accumulation",
]

__all__ = ["ReplayResult", "load_sprints", "replay", "sprints_from_records"]


@dataclass
class ReplayResult:
    """Replay output: per agent-sprint rows, per sprint breath, per file counts, per policy."""

    rows: pd.DataFrame  # one row per sprint, agent and policy (ROW_COLUMNS + extras)
    sprints: pd.DataFrame  # one row per sprint and policy: breath metrics and alerts
    files: pd.DataFrame  # one row per policy, project and file: hits, misses, waste
    summary: pd.DataFrame  # one row per policy
    # policy -> (row, file, kept) of its source map (unique pairs), for checks on the replay
    maps: dict | None = None

    def write(self, path: str | os.PathLike) -> None:
        """Write the per-agent rows to CSV or Parquet, by the file's extension."""
        write_frame(self.rows, path)



def _summary_columns():
    from brainlab.common.tables import Column

    return [Column("policy", "policy"), Column("agent_sprints", "agent-sprints", drop_rank=2),
            Column("tokens_total", "tokens"), Column("tokens_loaded", "loaded", drop_rank=1),
            Column("tokens_miss", "missed", drop_rank=1), Column("miss_rate", "miss rate"),
            Column("waste_rate", "waste rate"), Column("alerts_fired", "alerts")]


SUMMARY_COLUMNS = _summary_columns()  # simulate broker's table (brainlab.common.tables.Column)


def replay(sprints: SprintSet | Iterable[dict], policies: Sequence[str | Policy],
           *, miss_overhead_tokens: float = DEFAULT_MISS_OVERHEAD_TOKENS,
           thresholds: Thresholds | None = None) -> ReplayResult:
    """Replay every agent-sprint under each policy (SPEC §4.5) and measure it (SPEC §4.4)."""
    if not miss_overhead_tokens >= 0:  # NaN too
        raise SimulationError(f"miss overhead must be >= 0 tokens, got {miss_overhead_tokens}")
    ss = sprints if isinstance(sprints, SprintSet) else sprints_from_records(list(sprints))
    thresholds = thresholds or Thresholds()
    policies = [make_policy(p) for p in policies]
    if not policies:
        raise SimulationError("give at least one policy")
    labels = [p.label for p in policies]
    if len(set(labels)) != len(labels):
        raise SimulationError(f"the same policy is given twice: {labels}")
    for policy in policies:
        policy.prepare(ss)
    base = _sprint_base(ss)
    shared = _shared(ss, base)
    # each policy's columns are written into the policy-major result as soon as they are
    # measured, and dropped: the next policy reuses their memory instead of fresh pages
    rows_out, sprints_out = _Stacked(len(labels), ss.n_rows), _Stacked(len(labels), base["n"])
    extras, sums, file_parts, maps = [], [], [], {}
    for i, (policy, label) in enumerate(zip(policies, labels, strict=True)):
        columns, files = _measure(ss, policy, label, miss_overhead_tokens, thresholds, maps,
                                  shared)
        sprint_columns = _sprint_breath(ss, columns, thresholds, base, shared)
        columns["alert_accumulation"] = sprint_columns["alert_accumulation"][ss.row_sprint]
        agent_alerts = columns["alert_overload"].astype(np.int64) \
            + columns["alert_noise"] + columns["alert_retention"]
        sprint_columns["agents"] = shared["sprint_agents"]
        sprint_columns["misses"] = np.bincount(ss.row_sprint, weights=columns["misses"],
                                               minlength=base["n"]).astype(np.int64)
        sprint_columns["alerts_fired"] = np.bincount(
            ss.row_sprint, weights=agent_alerts, minlength=base["n"]).astype(np.int64) \
            + sprint_columns["alert_accumulation"].astype(np.int64)
        sums.append(_policy_sums(columns, sprint_columns))
        for column in ROW_COLUMNS[6:]:
            rows_out.put(i, column, columns[column])
        extras.append({c: v for c, v in columns.items() if c not in ROW_COLUMNS})
        for column, values in sprint_columns.items():
            sprints_out.put(i, column, values)
        file_parts.append(files)
        del columns, sprint_columns, agent_alerts
    rows = _rows_frame(ss, rows_out.data, extras, labels)
    return ReplayResult(rows, _sprints_frame(sprints_out.data, labels, base),
                        pd.concat(file_parts, ignore_index=True), _summary(sums, labels), maps)


class _Stacked:
    """Policy-major columns (policy 0's n values, then policy 1's...) filled one at a time.

    Each column is allocated once for every policy; a policy whose values have another
    type promotes it as ``np.concatenate`` of the policies' arrays would.
    """

    def __init__(self, n_policies: int, n: int):
        self.n_policies, self.n, self.data = n_policies, n, {}

    def put(self, i: int, column: str, values) -> None:
        values = np.asarray(values)
        out = self.data.get(column)
        if out is None:
            out = self.data[column] = np.empty(self.n_policies * self.n, dtype=values.dtype)
        elif out.dtype != values.dtype:
            out = self.data[column] = out.astype(np.result_type(out, values))
        out[i * self.n:(i + 1) * self.n] = values


def _rows_frame(ss: SprintSet, stacked: dict, extras: list[dict],
                labels: list[str]) -> pd.DataFrame:
    """One frame for all policies from the stacked columns (labels as categoricals).

    ``extras``: per policy, the columns beyond ROW_COLUMNS (a policy's own, the boot ones).
    """
    n_policies = len(labels)
    data: dict[str, object] = {}
    for column in ("sprint_id", "project", "domain", "agent"):
        cat = ss.labels[column]
        data[column] = pd.Categorical.from_codes(np.tile(cat.codes, n_policies),
                                                 categories=cat.categories)
    data["policy"] = pd.Categorical.from_codes(
        np.repeat(np.arange(n_policies), ss.n_rows), categories=pd.Index(labels, dtype=object))
    data["contract_inferred"] = np.tile(
        ss.rows["contract_inferred"].to_numpy(dtype=bool), n_policies)
    for column in ROW_COLUMNS[6:]:
        data[column] = stacked[column]
    names = list(dict.fromkeys(c for part in extras for c in part))
    for column in names:  # a column only some policies have: missing elsewhere
        if all(column in part for part in extras):
            data[column] = np.concatenate([part[column] for part in extras])
            continue
        data[column] = _partial_column(column, extras, ss.n_rows)
    return pd.DataFrame(data, columns=ROW_COLUMNS + names, copy=False)


def _partial_column(column: str, parts: list[dict], n: int):
    """A column only some policies have, missing (NA) for the others: a nullable array."""
    first = np.asarray(next(part[column] for part in parts if column in part))
    values = np.zeros(n * len(parts), dtype=first.dtype)
    missing = np.ones(n * len(parts), dtype=bool)
    for i, part in enumerate(parts):
        if column in part:
            values[i * n:(i + 1) * n] = part[column]
            missing[i * n:(i + 1) * n] = False
    if values.dtype == bool:
        return pd.arrays.BooleanArray(values, missing)
    if np.issubdtype(values.dtype, np.integer):
        return pd.arrays.IntegerArray(values.astype(np.int64), missing)
    if np.issubdtype(values.dtype, np.floating):
        return np.where(missing, np.nan, values)
    out = values.astype(object)
    out[missing] = np.nan
    return out


_SUMMED = ("referenced", "loaded", "hits", "misses", "waste", "tokens_loaded", "tokens_miss",
           "tokens_total", "boot_files", "boot_tokens")


def _policy_sums(columns: dict, sprint_columns: dict) -> dict:
    """One policy's totals for :func:`_summary`, taken before its columns are dropped."""
    return {"agent_sprints": len(columns["referenced"]),
            **{c: columns[c].sum() for c in _SUMMED},
            **{f"alerts_{c}": int(columns[f"alert_{c}"].sum())
               for c in ("overload", "noise", "retention")},
            "alerts_accumulation": int(sprint_columns["alert_accumulation"].sum())}


def _summary(sums: list[dict], labels: list[str]) -> pd.DataFrame:
    """One row per policy: tokens, miss rate, waste rate, alerts fired."""
    frame = pd.DataFrame({
        "policy": pd.array(list(labels), dtype="str"),
        **{c: [p[c] for p in sums] for c in ("agent_sprints", *_SUMMED)},
        **{f"alerts_{c}": [p[f"alerts_{c}"] for p in sums]
           for c in ("overload", "noise", "retention")}})
    frame["miss_rate"] = frame["misses"] / frame["referenced"].where(frame["referenced"] > 0)
    frame["waste_rate"] = frame["waste"] / frame["loaded"].where(frame["loaded"] > 0)
    frame["alerts_accumulation"] = [p["alerts_accumulation"] for p in sums]
    frame["alerts_fired"] = frame[["alerts_overload", "alerts_noise", "alerts_retention",
                                   "alerts_accumulation"]].sum(axis=1)
    return frame


def _shared(ss: SprintSet, base: dict) -> dict:
    """What every policy's measure reads and no policy changes, computed once per replay.

    Per row: files referenced and their tokens (SPEC §2.5 bytes/4; a policy may register new
    files, never change a referenced one's size), the boot columns; per sprint: references
    and agents. ``ref_keys`` (the reference pairs as keys) is kept per file count.
    """
    n = ss.n_rows
    referenced = np.bincount(ss.ref_row, minlength=n)
    boot = {name: ss.rows[name].to_numpy(dtype=kind) if name in ss.rows else
            np.zeros(n, dtype=kind) for name, kind in (("boot_files", np.int64),
                                                      ("boot_tokens", float))}
    return {
        "referenced": referenced,
        "ref_tokens": np.bincount(ss.ref_row, weights=ss.file_bytes[ss.ref_file] / 4.0,
                                  minlength=n),
        "boot": boot,
        "sprint_referenced": np.bincount(ss.row_sprint, weights=referenced.astype(float),
                                         minlength=base["n"]).astype(np.int64),
        "sprint_agents": np.bincount(ss.row_sprint, minlength=base["n"]),
        "ref_keys": {},
    }


def _measure(ss: SprintSet, policy: Policy, label: str, overhead: float,
             thresholds: Thresholds, maps: dict,
             shared: dict | None = None) -> tuple[dict, pd.DataFrame]:
    """Counts, tokens and breath metrics of one policy, per row; and per-file counts."""
    inhale, row, file, hit, kept, pos = source_maps(ss, policy, shared)
    maps[label] = (row, file, kept)
    n = ss.n_rows
    ref_loaded = np.zeros(len(ss.ref_row), dtype=bool)
    ref_loaded[pos[hit]] = True  # references that were loaded (the others are misses)
    tokens = ss.file_bytes / 4.0  # SPEC §2.5
    loaded = np.bincount(row, minlength=n)
    hits = np.bincount(row[hit], minlength=n)
    referenced = shared["referenced"] if shared else np.bincount(ss.ref_row, minlength=n)
    kept_n = np.bincount(row[kept], minlength=n)
    misses = referenced - hits
    waste = loaded - hits
    released = loaded - kept_n
    tokens_loaded = np.bincount(row, weights=tokens[file], minlength=n)
    hit_tokens = np.bincount(row[hit], weights=tokens[file[hit]], minlength=n)
    ref_tokens = shared["ref_tokens"] if shared else \
        np.bincount(ss.ref_row, weights=tokens[ss.ref_file], minlength=n)
    tokens_miss = ref_tokens - hit_tokens + overhead * misses
    with np.errstate(divide="ignore", invalid="ignore"):
        context_load = np.where(referenced > 0, loaded / np.maximum(referenced, 1), np.nan)
        stale_ratio = np.where(loaded > 0, waste / np.maximum(loaded, 1), np.nan)
        exhale_rate = np.where(loaded > 0, released / np.maximum(loaded, 1), np.nan)
    out = {
        "referenced": referenced, "loaded": loaded, "hits": hits, "misses": misses,
        "waste": waste, "released": released, "kept": kept_n,
        "tokens_loaded": tokens_loaded, "tokens_miss": tokens_miss,
        "tokens_total": tokens_loaded + tokens_miss,
        # SPEC §4.4 breath metrics per agent, with their alerts (thresholds are parameters).
        "context_load": context_load, "stale_ratio": stale_ratio,
        "breath_depth": kept_n, "exhale_rate": exhale_rate,
        # loaded with nothing referenced: an infinite load ratio, the worst overload
        "alert_overload": overloaded(loaded, referenced, context_load, thresholds),
        "alert_noise": np.nan_to_num(stale_ratio, nan=0) > thresholds.stale_ratio_max,
        "alert_retention": np.nan_to_num(exhale_rate, nan=1) < thresholds.exhale_rate_min,
    }
    for name, values in (inhale.extra or {}).items():
        out[name] = np.asarray(values)
    # boot context (broker_scope): in context since boot, the same for every policy
    for name, kind in (("boot_files", np.int64), ("boot_tokens", float)):
        out[name] = shared["boot"][name] if shared else \
            ss.rows[name].to_numpy(dtype=kind) if name in ss.rows else np.zeros(n, dtype=kind)
    files = _file_counts(ss, label, file, hit, ~ref_loaded)
    return out, files


def source_maps(ss: SprintSet, policy: Policy, shared: dict | None = None):
    """One policy's inhale and expire: (inhale, row, file, hit, kept, pos into the references).

    ``row``/``file`` are the unique loaded pairs in key order, ``hit`` whether the row
    referenced the file, ``kept`` whether expire keeps it (SPEC §4.2, §4.3).
    """
    inhale = policy.inhale(ss)  # may register new files: keys use n_files from here on
    nf = ss.n_files
    cache = shared["ref_keys"] if shared else {}
    if nf not in cache:
        cache[nf] = pair_keys(ss.ref_row, ss.ref_file, nf)  # sorted (ref pairs are)
    ref_keys = cache[nf]
    keys = pair_keys(inhale.row, inhale.file, nf)
    if len(keys) and not (keys[1:] > keys[:-1]).all():  # recorded maps come sorted, unique
        keys = sorted_unique(keys)
    row, file = keys // max(nf, 1), keys % max(nf, 1)
    pos = np.minimum(np.searchsorted(ref_keys, keys), max(len(ref_keys) - 1, 0))
    hit = ref_keys[pos] == keys if len(ref_keys) else np.zeros(len(keys), dtype=bool)
    return inhale, row, file, hit, policy.expire(ss, row, file, hit), pos


def overloaded(loaded, referenced, context_load, thresholds: Thresholds) -> np.ndarray:
    """SPEC §4.4 overload: context_load > max, or files loaded and none referenced at all.

    context_load is undefined (NaN) when nothing was referenced; loading files nobody uses
    is the worst overload, not "no alert" (issue 14).
    """
    loaded, referenced = np.asarray(loaded), np.asarray(referenced)
    ratio = np.nan_to_num(np.asarray(context_load, dtype=float), nan=0)
    return ((loaded > 0) & (referenced == 0)) | (ratio > thresholds.context_load_max)


def _file_counts(ss, label, file, hit, missed) -> pd.DataFrame:
    """Per file: times loaded and referenced (hits), loaded unused (waste), missed."""
    nf = ss.n_files
    frame = pd.DataFrame({
        "hits": np.bincount(file[hit], minlength=nf),
        "waste": np.bincount(file[~hit], minlength=nf),
        "misses": np.bincount(ss.ref_file[missed], minlength=nf),
    })
    frame.insert(0, "path", ss.file_path)
    frame.insert(0, "project", [ss.projects[p] if p >= 0 else None for p in ss.file_project])
    frame.insert(0, "policy", label)
    return frame[(frame["hits"] + frame["waste"] + frame["misses"]) > 0].reset_index(drop=True)


def _sprint_base(ss: SprintSet) -> dict[str, np.ndarray]:
    """Per sprint: its id and project, and the project-then-sprint order (shared by policies)."""
    sprint = ss.row_sprint
    n = int(sprint.max()) + 1 if len(sprint) else 0
    first = np.flatnonzero(np.r_[True, sprint[1:] != sprint[:-1]]) if n else \
        np.zeros(0, dtype=np.int64)
    labels = ss.labels
    sprint_id = labels["sprint_id"].take(first) if n else labels["sprint_id"][:0]
    project = labels["project"].take(first) if n else labels["project"][:0]
    project_code = pd.factorize(np.asarray(project, dtype=object), use_na_sentinel=False)[0]
    order = np.lexsort((np.arange(n), project_code))
    same_project = np.zeros(n, dtype=bool)
    same_project[1:] = project_code[order][1:] == project_code[order][:-1]
    return {"n": n, "sprint_id": np.asarray(sprint_id, dtype=object),
            "project": np.asarray(project, dtype=object), "order": order,
            "same_project": same_project}


def _sprint_breath(ss: SprintSet, rows, thresholds: Thresholds, base: dict,
                   shared: dict | None = None) -> dict[str, np.ndarray]:
    """SPEC §4.4 per sprint, and the accumulation alert: one numpy column per figure.

    The alert fires when breath_depth rises strictly over ``breath_depth_rising_sprints``
    consecutive sprints of the same project. The columns are in the sprint frame's order
    after its labels (:func:`_sprints_frame` adds the sprint, project and policy).
    """
    sprint, n = ss.row_sprint, base["n"]
    agg: dict[str, np.ndarray] = {}
    for column in ("referenced", "loaded", "waste", "released", "kept", "tokens_loaded",
                   "tokens_miss"):
        if column == "referenced" and shared:  # the same for every policy
            agg[column] = shared["sprint_referenced"]
            continue
        total = np.bincount(sprint, weights=np.asarray(rows[column], dtype=float),
                            minlength=n)
        agg[column] = total if column.startswith("tokens") else total.astype(np.int64)
    referenced, loaded = agg["referenced"], agg["loaded"]
    with np.errstate(divide="ignore", invalid="ignore"):
        agg["context_load"] = np.where(referenced > 0, loaded / np.maximum(referenced, 1),
                                       np.nan)
        agg["stale_ratio"] = np.where(loaded > 0, agg["waste"] / np.maximum(loaded, 1), np.nan)
        agg["exhale_rate"] = np.where(loaded > 0, agg["released"] / np.maximum(loaded, 1),
                                      np.nan)
    depth = agg["loaded"] - agg["released"]
    agg["breath_depth"] = depth
    # rising: depth[t-j] < depth[t-j+1] for j = 1 .. N-1 among the project's sprints in order
    order = base["order"]
    d = depth[order]
    # inc[i]: the sprint at i has a larger depth than the project's previous sprint
    inc = np.zeros(n, dtype=bool)
    inc[1:] = base["same_project"][1:] & (d[1:] > d[:-1])
    steps = max(thresholds.breath_depth_rising_sprints - 1, 0)
    rising = np.full(n, steps > 0)
    for lag in range(steps):  # steps consecutive increases end at i
        shifted = np.zeros(n, dtype=bool)
        shifted[lag:] = inc[: n - lag]
        rising &= shifted
    alert = np.zeros(n, dtype=bool)
    alert[order] = rising
    agg["alert_accumulation"] = alert
    agg["alert_overload"] = overloaded(loaded, referenced, agg["context_load"], thresholds)
    agg["alert_noise"] = np.nan_to_num(agg["stale_ratio"], nan=0) > thresholds.stale_ratio_max
    agg["alert_retention"] = np.nan_to_num(agg["exhale_rate"], nan=1) \
        < thresholds.exhale_rate_min
    return agg


def _sprints_frame(stacked: dict, labels: list[str], base: dict) -> pd.DataFrame:
    """One frame of every policy's sprints (policy-major) from the stacked columns.

    The sprint and project labels are made pandas arrays once and repeated per policy (no
    string conversion per policy, no concatenation of per-policy frames).
    """
    n = base["n"]
    if not n:  # no sprint: the columns' types as the per-policy frames had them
        frames = [pd.DataFrame({"sprint_id": base["sprint_id"], "project": base["project"],
                                "policy": None, **stacked}) for _ in labels]
        return pd.concat(frames, ignore_index=True)
    data: dict[str, object] = {}
    for column in ("sprint_id", "project"):
        values = pd.Series(base[column], copy=False).array  # the type a frame infers
        data[column] = type(values)._concat_same_type([values] * len(labels))
    policy = [pd.Series(label, index=pd.RangeIndex(n)).array for label in labels]
    data["policy"] = type(policy[0])._concat_same_type(policy)
    data.update(stacked)
    return pd.DataFrame(data, copy=False)


def format_summary(result: ReplayResult, width: int = 80) -> str:
    """The per-policy comparison as a text table fitted into ``width`` (what the CLI prints).

    Printed through :mod:`brainlab.common.tables` like every command's table: thousands separators,
    rates as percentages, the missing marker; on a narrow terminal the loaded/missed token
    columns go first, and the table says so.
    """
    from brainlab.common import tables

    names = ["policy", "agent_sprints", "tokens_total", "tokens_loaded", "tokens_miss",
             "miss_rate", "waste_rate", "alerts_fired"]
    frame = result.summary[names].copy()
    for column in ("tokens_total", "tokens_loaded", "tokens_miss"):
        frame[column] = frame[column].round().astype("int64")
    rows = [tuple(None if pd.isna(v) else (v.item() if hasattr(v, "item") else v)
                  for v in row) for row in frame.itertuples(index=False)]
    text = tables.text_table(names, rows, width=width, columns=SUMMARY_COLUMNS,
                             see="--out FILE")
    inferred = int(result.rows.loc[result.rows["contract_inferred"], "sprint_id"].nunique())
    if inferred:
        text += f"({inferred} sprint(s) used a contract inferred from the directory layout)\n"
    return text.rstrip("\n")


def load_sprints(db: str | os.PathLike, project: str | None = None,
                 default_bytes: float = DEFAULT_FILE_BYTES,
                 contracts: str = "declared", scoped: bool = True,
                 until: datetime | None = None) -> SprintSet:
    """Replay inputs from the store: sprint records + broker blocks, and transcripts if any.

    Only the sprints the seed invokes the broker for are kept, boot context taken out
    (:func:`brainlab.sim.broker_scope.scope`); ``contracts`` (declared, inferred, all) says
    which contracts count. The SprintSet's ``scope`` lists every sprint the store knows with
    the reason it was skipped, ``printed`` the breath metrics the broker printed.
    ``scoped=False`` keeps every sprint (no skip, no boot split, ``scope`` None): for measuring
    what a broker recorded where it did run (the report's breath section, breath tuning).
    ``until``: only the sprints started before that moment (a week's end: the weekly
    report's what-if reads nothing after its week; a sprint without a start is left out).
    """
    from brainlab.sim import broker_scope
    from brainlab.sim.transcript_sprints import drop_recorded
    from brainlab.store import HeldReader

    if not default_bytes > 0:  # NaN too
        raise SimulationError(f"default file size must be > 0 bytes, got {default_bytes}")
    if contracts not in broker_scope.CONTRACT_CHOICES:
        raise SimulationError(f"contracts must be one of "
                              f"{', '.join(broker_scope.CONTRACT_CHOICES)}, got {contracts!r}")
    if isinstance(db, HeldReader):  # a render's connection: the breath section and its
        # what-if both load the sprints (all history, then up to the week): one read, each
        # call given its own copy (pickled: the lists inside the frames' cells too)
        found = pickle.loads(db.memo(("broker.load_sprints", project),
                                     lambda: pickle.dumps(_read_inputs(db, project))))
    else:
        found = _read_inputs(db, project)
    agents, refs, contract_rows, sizes, extra, info, printed, excluded = found
    if extra is not None:
        t_agents, t_refs = extra
        t_agents = drop_recorded(t_agents, agents)
        t_refs = t_refs[t_refs["sprint_id"].isin(t_agents["sprint_id"])]
        t_agents = t_agents.assign(seq=t_agents.get("seq", 0) + len(agents) + 1)
        agents = pd.concat([agents, t_agents], ignore_index=True)
        refs = pd.concat([refs, t_refs], ignore_index=True)
    if until is not None:
        started = pd.to_datetime(agents["started_at"])
        agents = agents[(started < pd.Timestamp(until)).to_numpy(dtype=bool)].reset_index(
            drop=True)
        refs = refs[refs["sprint_id"].isin(set(agents["sprint_id"]))]
    if agents.empty and project:
        others = _projects(db)
        if others:
            raise SimulationError(f"no sprints of project {project!r} in {db}; projects: "
                                  f"{', '.join(others)}")
    if agents.empty:
        raise SimulationError(f"no sprints in {db}: run `brainlab ingest sprints FILE` "
                              "(or ingest transcripts) first")
    declared = set(contract_rows.loc[~contract_rows["inferred"].astype(bool), "project"])
    scope = None
    if scoped:
        agents, refs, scope = broker_scope.scope(agents, refs, declared, info, sizes,
                                                 contracts, default_bytes)
    else:
        agents = agents[agents["project"].notna()].reset_index(drop=True)
        refs = refs[refs["sprint_id"].isin(set(agents["sprint_id"]))]
    if agents.empty and scope is not None:
        raise SimulationError(f"no sprint in {db} is one the context broker runs on "
                              f"({scope.describe_skipped()}){broker_scope.hint(scope)}")
    ss = SprintSet.build(agents, refs, contract_rows, sizes, default_bytes)
    ss.scope = scope
    kept = set(agents["sprint_id"])
    ss.printed = printed[printed["sprint_id"].isin(kept)].reset_index(drop=True)
    ss.exclusions = excluded[excluded["sprint_id"].isin(kept)].reset_index(drop=True)
    return ss


def _read_inputs(db: str | os.PathLike, project: str | None) -> tuple:
    """What :func:`load_sprints` reads from the store, before any filter (one connection)."""
    from brainlab.sim import broker_scope
    from brainlab.sim.transcript_sprints import transcript_inputs
    from brainlab.store import reader

    where = "WHERE project = ?" if project else ""
    params = [project] if project else []
    with reader(db) as con:
        # every read in a stated order: DuckDB's parallel scans return rows in any order, and
        # the replay's rows (``--out``) follow its inputs' (the same run twice, the same file)
        agents = con.execute(f"SELECT * FROM sprint_agent_inputs {where} ORDER BY seq",
                             params).df()
        refs = con.execute(
            "SELECT r.sprint_id, r.agent, r.path, r.kind FROM sprint_refs r "
            "JOIN (SELECT DISTINCT sprint_id, project FROM sprints) s USING (sprint_id) "
            + (" WHERE s.project = ?" if project else "")
            + " ORDER BY r.sprint_id, r.agent, r.path, r.kind", params).df()
        contract_rows = con.execute(
            f"SELECT project, domain, path, position, inferred FROM project_contract_files "
            f"{where} ORDER BY project, domain, position, path", params).df()
        sizes = con.execute(f"SELECT DISTINCT project, path, bytes FROM file_sizes {where} "
                            "ORDER BY project, path, bytes", params).df()
        extra = transcript_inputs(con, project, unknown_project=True)
        info = broker_scope.session_info(con)
        printed = broker_scope.printed_metrics(con)
        excluded = broker_scope.exclusions(con)
    return agents, refs, contract_rows, sizes, extra, info, printed, excluded


def _projects(db: str | os.PathLike) -> list[str]:
    """Projects that have sprints (records or transcripts): what ``--project`` can name."""
    from brainlab.sim.transcript_sprints import transcript_inputs
    from brainlab.store import reader

    with reader(db) as con:
        names = set(con.execute("SELECT DISTINCT project FROM sprint_agent_inputs")
                    .df()["project"].dropna())
        extra = transcript_inputs(con)
    if extra is not None:
        names |= set(extra[0]["project"].dropna())
    return sorted(map(str, names))
