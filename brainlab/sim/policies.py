"""Context-broker policies: small frozen dataclasses in a registry (SPEC §4.2, §4.3, §4.5).

A policy answers one question per agent-sprint: which files to load before the sprint. The
simple way to write one is :meth:`Policy.choose` (one agent at a time, a few lines in a
notebook); built-in policies also override :meth:`Policy.inhale` with a vectorised version.
A policy never sees what the agent will reference: only the plan (domain, contract, the
files the agent is planned to touch) and, for learning policies, earlier sprints.

Add one::

    @register
    @dataclass(frozen=True)
    class Twice(Policy):
        name: ClassVar[str] = "domain-head"
        n: int = 1
        def choose(self, agent):
            return agent.domain_files[: self.n]
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import MISSING, dataclass, fields
from typing import ClassVar

import numpy as np
import pandas as pd

from brainlab.common.errors import ConfigError, SimulationError
from brainlab.sim.encoding import member
from brainlab.sim.sprintset import SprintSet, expand_domains, pair_keys
from brainlab.spec.values import parse_overrides, typed_value

REGISTRY: dict[str, type[Policy]] = {}


@dataclass(frozen=True)
class AgentView:
    """What a policy may know about one planned agent at inhale time (no look-ahead)."""

    sprint_id: str
    project: str
    domain: str | None
    agent: str
    session_id: str | None
    contract: Mapping[str, tuple[str, ...]]  # domain -> files (inferred or declared)
    contract_inferred: bool
    domain_files: tuple[str, ...]  # the contract files of this agent's domain
    touched: frozenset[str]  # files the agent is planned to touch (SPEC §4.2 priority 1)
    sprint_touched: Mapping[str, int]  # path -> planned agents of the sprint touching it
    history: Mapping[str, int]  # path -> earlier sprints (ended before this one) of this
    #   agent role and domain that referenced it
    recorded: tuple[str, ...] | None  # what the broker recorded loading, when known
    domain_new_to_session: bool


@dataclass
class Inhale:
    """A policy's source maps: loaded (row, file) pairs and optional per-row extra columns."""

    row: np.ndarray
    file: np.ndarray
    extra: dict[str, np.ndarray] | None = None


@dataclass(frozen=True)
class Policy:
    """Base class: subclasses set ``name`` and override :meth:`choose` (or :meth:`inhale`)."""

    name: ClassVar[str] = ""
    needs_history: ClassVar[bool] = True  # build AgentView.history for choose()

    @property
    def label(self) -> str:
        """The policy and its non-default parameters, e.g. ``history:k=3``."""
        params = [f"{f.name}={getattr(self, f.name)}" for f in fields(self)
                  if getattr(self, f.name) != f.default]
        return self.name + (":" + ",".join(params) if params else "")

    def prepare(self, ss: SprintSet) -> None:
        """Hook run once before :meth:`inhale` (e.g. to register extra files)."""

    def choose(self, agent: AgentView) -> Iterable[str]:
        """The files to load for one agent (paths as in the contract)."""
        raise NotImplementedError(f"policy {self.name!r} defines neither choose() nor inhale()")

    def inhale(self, ss: SprintSet) -> Inhale:
        """Source maps for every row; the default calls :meth:`choose` row by row."""
        rows, files = [], []
        for row, view in iter_views(ss, with_history=self.needs_history):
            project = view.project
            for path in dict.fromkeys(self.choose(view)):
                rows.append(row)
                files.append(ss.file_id(project, path))
        return Inhale(np.asarray(rows, dtype=np.int64), np.asarray(files, dtype=np.int64))

    def expire(self, ss: SprintSet, row: np.ndarray, file: np.ndarray,
               hit: np.ndarray) -> np.ndarray:
        """SPEC §4.3 release map: True where a loaded source is kept (garder).

        Kept = the source's domain still has open TODOs at sprint end AND it was referenced
        (an unreferenced source is released as stale even in a domain with open TODOs;
        ``stale_overrides_todo=False`` on a policy keeps it instead). A stable domain (no
        open TODO) releases everything.
        """
        n_dom = max(len(ss.domain_names), 1)
        domain = ss.file_domain[file]
        domain = np.where(domain >= 0, domain, ss.row_domain[row])
        todo = member(ss.todo_keys, ss.row_sprint[row] * n_dom + domain) & (domain >= 0)
        if getattr(self, "stale_overrides_todo", True):
            return todo & hit
        return todo


def register(cls: type[Policy]) -> type[Policy]:
    """Class decorator: make a policy available by its ``name`` (CLI ``--policy NAME:k=v``)."""
    if not cls.name:
        raise SimulationError(f"policy class {cls.__name__} has no name")
    REGISTRY[cls.name] = cls
    return cls


def _typed(policy: str, key: str, default, value):
    """A policy parameter as its default's type; a number must not be negative."""
    try:
        value = typed_value(f"policy {policy!r} parameter {key}", default, value)
    except ConfigError as exc:
        raise SimulationError(str(exc)) from exc
    if isinstance(default, str):
        return str(value)
    if not isinstance(value, bool) and value < 0:
        raise SimulationError(f"policy {policy!r} parameter {key} must be >= 0, got {value}")
    return value


def make_policy(spec: str | Policy) -> Policy:
    """A policy from ``"name"`` or ``"name:key=value,key=value"`` (or a Policy, returned as is)."""
    if isinstance(spec, Policy):
        return spec
    name, _, raw = spec.partition(":")
    cls = REGISTRY.get(name.strip())
    if cls is None:
        raise SimulationError(f"unknown policy {name!r}; known: {', '.join(sorted(REGISTRY))}")
    params = parse_overrides([p for p in raw.split(",") if p.strip()]) if raw else {}
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise SimulationError(f"policy {name!r} has no parameter {', '.join(unknown)}; "
                              f"parameters: {', '.join(known) or 'none'}")
    for key, value in params.items():
        if known[key].type in ("tuple[str, ...]",) and isinstance(value, str):
            params[key] = tuple(v for v in value.split("+") if v)
        elif known[key].default is not MISSING:
            params[key] = _typed(name, key, known[key].default, value)
    try:
        return cls(**params)
    except (TypeError, ValueError) as exc:
        raise SimulationError(f"policy {spec!r}: {exc}") from exc


@register
@dataclass(frozen=True)
class OnDemand(Policy):
    """Nothing preloaded: every referenced file is a miss read on demand."""

    name: ClassVar[str] = "on-demand"

    def choose(self, agent: AgentView) -> Iterable[str]:
        """Nothing."""
        return ()

    def inhale(self, ss: SprintSet) -> Inhale:
        """No pairs."""
        empty = np.zeros(0, dtype=np.int64)
        return Inhale(empty, empty)


@register
@dataclass(frozen=True)
class GreedyDomain(Policy):
    """Every contract file of the agent's domain."""

    name: ClassVar[str] = "greedy-domain"

    def choose(self, agent: AgentView) -> Iterable[str]:
        """The whole domain."""
        return agent.domain_files

    def inhale(self, ss: SprintSet) -> Inhale:
        """Expand each row's domain."""
        row, file, _ = expand_domains(ss, np.arange(ss.n_rows))
        return Inhale(row, file)


@register
@dataclass(frozen=True)
class Protocol(Policy):
    """SPEC §4.2 inhale: at most ``max_sources`` domain files per agent, by priority.

    Priorities: (1) a domain file the agent is planned to touch; (2) a shared entity or
    interface: a domain file touched by at least ``shared_min_agents`` planned agents of the
    sprint, or listed in several domains of the contract; (3) the ``toolkit`` pattern file when
    the domain is new to the session. Within a priority, contract order. Files in
    ``boot`` (already in context since boot) are never loaded. A row whose candidates exceed
    ``max_sources`` is flagged ``escalated`` (goes to tech-lead).
    """

    name: ClassVar[str] = "protocol"
    needs_history: ClassVar[bool] = False
    max_sources: int = 2
    shared_min_agents: int = 2
    toolkit: str = ""
    boot: tuple[str, ...] = ()
    stale_overrides_todo: bool = True

    def choose(self, agent: AgentView) -> Iterable[str]:
        """Per-agent reading of §4.2 (the reference for the vectorised :meth:`inhale`)."""
        multi = {p for files in agent.contract.values() for p in files}
        ranked = []
        for position, path in enumerate(agent.domain_files):
            if path in self.boot:
                continue
            in_domains = sum(path in files for files in agent.contract.values())
            if path in agent.touched:
                ranked.append((1, position, path))
            elif agent.sprint_touched.get(path, 0) >= self.shared_min_agents or \
                    (in_domains >= 2 and path in multi):
                ranked.append((2, position, path))
        if self.toolkit and agent.domain_new_to_session and self.toolkit not in self.boot:
            ranked.append((3, 0, self.toolkit))
        return [path for _, _, path in sorted(ranked)[: self.max_sources]]

    def prepare(self, ss: SprintSet) -> None:
        """Register the toolkit pattern file in every project."""
        if self.toolkit:
            for project in ss.projects:
                ss.file_id(project, self.toolkit)

    def inhale(self, ss: SprintSet) -> Inhale:
        """Vectorised §4.2: rank candidates per row, keep the first ``max_sources``."""
        row, file, position = expand_domains(ss, np.arange(ss.n_rows))
        nf = ss.n_files
        touched = pair_keys(ss.touched_row, ss.touched_file, nf)
        prio1 = member(touched, pair_keys(row, file, nf))
        sprint_file = pair_keys(ss.row_sprint[ss.touched_row], ss.touched_file, nf)
        values, counts = np.unique(sprint_file, return_counts=True)
        shared_keys = values[counts >= self.shared_min_agents]
        shared = member(shared_keys, pair_keys(ss.row_sprint[row], file, nf)) | \
            (ss.file_ndomains[file] >= 2)
        priority = np.where(prio1, 1, np.where(shared, 2, 0))
        if self.toolkit:
            rows_new = np.flatnonzero(_domain_new_to_session(ss))
            tool = np.array([ss.file_id(ss.rows.at[r, "project"], self.toolkit)
                             for r in rows_new], dtype=np.int64)
            row = np.concatenate([row, rows_new])
            file = np.concatenate([file, tool])
            position = np.concatenate([position, np.zeros(len(rows_new), dtype=position.dtype)])
            priority = np.concatenate([priority, np.full(len(rows_new), 3)])
        if self.boot:
            priority[np.isin(ss.file_path[file], np.array(self.boot, dtype=object))] = 0
        keep = priority > 0
        row, file, position, priority = row[keep], file[keep], position[keep], priority[keep]
        order = np.lexsort((position, priority, row))
        row, file = row[order], file[order]
        rank = _rank_within(row)
        needed = np.bincount(row, minlength=ss.n_rows)
        chosen = rank < self.max_sources
        return Inhale(row[chosen], file[chosen],
                      {"escalated": needed > self.max_sources})


@register
@dataclass(frozen=True)
class History(Policy):
    """The ``k`` files this agent role referenced in most earlier sprints of the domain.

    Earlier = ended before the replayed sprint started (no look-ahead). Ties: path order.
    """

    name: ClassVar[str] = "history"
    k: int = 4

    def choose(self, agent: AgentView) -> Iterable[str]:
        """Top-k of the agent's history counts."""
        best = sorted(agent.history.items(), key=lambda kv: (-kv[1], kv[0]))
        return [path for path, _ in best[: self.k]]

    def inhale(self, ss: SprintSet) -> Inhale:
        """Vectorised history: top k files by earlier references.

        Per (project, domain, agent) group, rows are ranked by end time; ``seen[t, f]`` counts
        the group's first t rows (in end order) that referenced f, a cumulative sum per file.
        A row reads ``seen`` at t = the number of group rows that ended before it started,
        for every file its group ever referenced, and keeps the k largest counts.
        """
        if ss.n_rows == 0 or len(ss.ref_row) == 0:
            empty = np.zeros(0, dtype=np.int64)
            return Inhale(empty, empty)
        return Inhale(*_history_top_k(ss, self.k))


@register
@dataclass(frozen=True)
class Recorded(Policy):
    """What the broker actually loaded (inhale blocks or a record's ``loaded``), when known.

    Expire uses the recorded release map (LIBÉRER) when the sprint has one, else SPEC §4.3.
    """

    name: ClassVar[str] = "recorded"
    needs_history: ClassVar[bool] = False

    def choose(self, agent: AgentView) -> Iterable[str]:
        """The recorded source map (empty when unknown)."""
        return agent.recorded or ()

    def inhale(self, ss: SprintSet) -> Inhale:
        """The recorded pairs; ``known`` says which rows had a recorded source map."""
        return Inhale(ss.rec_row, ss.rec_file,
                      {"known": ss.rows["has_recorded"].to_numpy()})

    def expire(self, ss, row, file, hit):
        """Kept = not in the recorded LIBÉRER list, for sprints with a recorded expire."""
        default = super().expire(ss, row, file, hit)
        recorded = ss.rows["has_recorded_expire"].to_numpy()[row]
        released = member(pair_keys(ss.rel_sprint, ss.rel_file, ss.n_files),
                          pair_keys(ss.row_sprint[row], file, ss.n_files))
        return np.where(recorded, ~released, default)


def _rank_within(sorted_groups: np.ndarray) -> np.ndarray:
    """0, 1, 2... within runs of equal values of a sorted array."""
    if len(sorted_groups) == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.r_[True, sorted_groups[1:] != sorted_groups[:-1]]
    first = np.maximum.accumulate(np.where(starts, np.arange(len(sorted_groups)), 0))
    return np.arange(len(sorted_groups)) - first


def _domain_new_to_session(ss: SprintSet) -> np.ndarray:
    """Row -> no earlier sprint of the same session worked on this domain (SPEC §4.2 (3))."""
    rows = ss.rows
    session = rows["session_id"].where(rows["session_id"].notna(), rows["sprint_id"])
    key = session.astype(str) + "\x00" + rows["domain"].astype(str)
    first = rows.groupby(key, sort=False)["sprint_idx"].transform("min")
    return (first == rows["sprint_idx"]).to_numpy()


def _history_groups(ss: SprintSet) -> np.ndarray:
    """Row -> id of its (project, domain, agent) group (missing values form their own group)."""
    labels = ss.labels
    key = np.zeros(ss.n_rows, dtype=np.int64)
    for column in ("project", "domain", "agent"):
        codes = labels[column].codes.astype(np.int64) + 1
        key = key * (len(labels[column].categories) + 1) + codes
    return np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)


def _history_top_k(ss: SprintSet, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, file) pairs of History.inhale (see there); linear passes and one sort."""
    n = ss.n_rows
    group = _history_groups(ss)
    n_groups = int(group.max()) + 1
    # time ranks, per sprint (rows of a sprint share its start and end)
    sprint = ss.row_sprint
    first = np.flatnonzero(np.r_[True, sprint[1:] != sprint[:-1]])
    start, end = ss.rows["start_key"].to_numpy()[first], ss.rows["end_key"].to_numpy()[first]
    times, inverse = np.unique(np.concatenate([end, start]), return_inverse=True)
    inverse = inverse.reshape(-1).astype(np.int64)
    end_rank, start_rank = inverse[: len(first)][sprint], inverse[len(first):][sprint]
    span = len(times) + 1
    # rows of each group in end order: position q of each row, group sizes m
    by_end = np.argsort(group * span + end_rank, kind="stable")
    end_keys = (group * span + end_rank)[by_end]
    m = np.bincount(group, minlength=n_groups)
    group_first = np.concatenate(([0], np.cumsum(m)[:-1]))
    q = np.empty(n, dtype=np.int64)
    q[by_end] = np.arange(n) - np.repeat(group_first, m)
    # t: rows of the group that ended before (or when) this row started
    t = np.searchsorted(end_keys, group * span + start_rank, side="right") - group_first[group]
    # files each group referenced: pair = (group, file), local index j within the group
    ev_key = group[ss.ref_row] * ss.n_files + ss.ref_file
    if n_groups * ss.n_files <= 1 << 26:  # small key space: a presence table, no sort
        present = np.zeros(n_groups * ss.n_files, dtype=bool)
        present[ev_key] = True
        pair_keys_all = np.flatnonzero(present)
        ev_pair = (np.cumsum(present) - 1)[ev_key]
    else:
        pair_keys_all, ev_pair = np.unique(ev_key, return_inverse=True)
        ev_pair = ev_pair.reshape(-1)
    pair_group = pair_keys_all // ss.n_files
    n_files_g = np.bincount(pair_group, minlength=n_groups)
    pair_first = np.concatenate(([0], np.cumsum(n_files_g)[:-1]))
    # seen: per group a block of n_files_g columns of (m + 1) cumulative counts
    height = m + 1
    block = height * n_files_g
    base = np.concatenate(([0], np.cumsum(block)[:-1]))
    ev_group = pair_group[ev_pair]
    ev_cell = base[ev_group] + (ev_pair - pair_first[ev_group]) * height[ev_group] + \
        q[ss.ref_row] + 1
    seen = np.cumsum(np.bincount(ev_cell, minlength=int(block.sum())))
    column_start = np.repeat(base, n_files_g) + \
        (np.arange(len(pair_keys_all)) - np.repeat(pair_first, n_files_g)) * \
        np.repeat(height, n_files_g)
    before = np.concatenate(([0], seen))[column_start]  # cumulative total before each column
    # candidates: every row x every file of its group, row-major, files in path order
    counts = n_files_g[group]
    row = np.repeat(np.arange(n), counts)
    row_group = group[row]
    j = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    value = seen[base[row_group] + j * height[row_group] + t[row]] - \
        before[pair_first[row_group] + j]
    keep = value > 0
    row, row_group, j, value = row[keep], row_group[keep], j[keep], value[keep]
    chosen = _top_k_per_row(row, value, j, k)
    file = pair_keys_all[pair_first[row_group[chosen]] + j[chosen]] % ss.n_files
    return row[chosen], file


def _top_k_per_row(row: np.ndarray, value: np.ndarray, tie: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k best entries of each row: largest value, then smallest tie.

    ``row`` is sorted and ``tie`` distinct within a row. Small k: k passes of a per-row
    maximum (np.maximum.reduceat); large k: one sort.
    """
    if len(row) == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64)
    width = int(tie.max()) + 1
    score = value.astype(np.int64) * width + (width - 1 - tie)  # larger is better
    if k > 8:
        order = np.lexsort((-score, row))
        return np.sort(order[_rank_within(row[order]) < k])
    starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
    lengths = np.diff(np.r_[starts, len(row)])
    chosen = np.zeros(len(row), dtype=bool)
    score = score.copy()
    for _ in range(min(k, int(lengths.max()))):
        best = np.repeat(np.maximum.reduceat(score, starts), lengths)
        pick = (score == best) & (best >= 0)
        chosen |= pick
        score[pick] = -1
    return np.flatnonzero(chosen)



def iter_history(ss: SprintSet) -> Iterator[tuple[int, dict[int, int]]]:
    """(row, counts) pairs: earlier references of the row's (project, domain, agent) group.

    counts maps file id -> earlier sprints of the group that referenced it, counting only
    sprints ended before this row's sprint started.

    The dict is live (reused for the group): read it before advancing the iterator.
    """
    rows = ss.rows
    start = rows["start_key"].to_numpy()
    end = rows["end_key"].to_numpy()
    group = pd.Series(_history_groups(ss))
    order = np.lexsort((np.arange(ss.n_rows), start, group.to_numpy()))
    ptr = np.searchsorted(ss.ref_row, np.arange(ss.n_rows + 1))
    ref_file = ss.ref_file.tolist()
    groups = group.to_numpy()[order].tolist()
    starts, ends = start[order].tolist(), end[order].tolist()
    ptr_list = ptr.tolist()
    current, counts, pending = None, {}, []
    for i, row in enumerate(order.tolist()):
        if groups[i] != current:
            current, counts, pending = groups[i], {}, []
        while pending and pending[0][0] <= starts[i]:
            _, done = heapq.heappop(pending)
            for f in ref_file[ptr_list[done]:ptr_list[done + 1]]:
                counts[f] = counts.get(f, 0) + 1
        yield row, counts
        heapq.heappush(pending, (ends[i], row))


def iter_views(ss: SprintSet, with_history: bool = True) -> Iterator[tuple[int, AgentView]]:
    """(row, AgentView) for every row, for per-agent policies (slow path, any size)."""
    rows = ss.rows
    contracts: dict[str, dict[str, tuple[str, ...]]] = {}
    for d, (project, domain) in enumerate(ss.domain_names):
        files = ss.dom_files[ss.dom_ptr[d]:ss.dom_ptr[d + 1]]
        contracts.setdefault(project, {})[domain] = tuple(ss.file_path[files])
    touched: dict[int, set[str]] = {}
    for r, f in zip(ss.touched_row.tolist(), ss.touched_file.tolist(), strict=True):
        touched.setdefault(r, set()).add(ss.file_path[f])
    per_sprint: dict[int, dict[str, int]] = {}
    for r, paths in touched.items():
        bucket = per_sprint.setdefault(int(ss.row_sprint[r]), {})
        for p in paths:
            bucket[p] = bucket.get(p, 0) + 1
    recorded: dict[int, list[str]] = {}
    for r, f in zip(ss.rec_row.tolist(), ss.rec_file.tolist(), strict=True):
        recorded.setdefault(r, []).append(ss.file_path[f])
    history = ({r: {ss.file_path[f]: n for f, n in c.items()} for r, c in iter_history(ss)}
               if with_history else {})
    new = _domain_new_to_session(ss)
    has_rec = rows["has_recorded"].to_numpy()
    for r, rec in enumerate(rows.itertuples(index=False)):
        contract = contracts.get(rec.project, {})
        yield r, AgentView(
            sprint_id=rec.sprint_id, project=rec.project, domain=rec.domain, agent=rec.agent,
            session_id=rec.session_id, contract=contract,
            contract_inferred=bool(rec.contract_inferred),
            domain_files=contract.get(rec.domain, ()), touched=frozenset(touched.get(r, ())),
            sprint_touched=per_sprint.get(int(rec.sprint_idx), {}),
            history=history.get(r, {}),
            recorded=tuple(recorded.get(r, ())) if has_rec[r] else None,
            domain_new_to_session=bool(new[r]))
