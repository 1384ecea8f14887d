"""Replayable sprints (SPEC §4.5): agent-sprints, their references and contracts, as arrays.

A :class:`SprintSet` is built from plain frames (one row per sprint and agent, one per reference,
the project contracts, file sizes) by :meth:`SprintSet.build`; :func:`sprints_from_records`
builds one from JSONL-shaped dicts and :func:`brainlab.sim.broker.load_sprints` from the store.
Files become integer ids so policies and metrics run as numpy set operations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from brainlab.sim.encoding import categorical, encode, explode_lists, index_in
from brainlab.sources.contracts import infer_contract

DEFAULT_FILE_BYTES = 8_000  # size assumed for a file no record gave a size for (2,000 tokens)
AGENT_COLUMNS = ["sprint_id", "project", "domain", "agent", "session_id", "started_at",
                 "ended_at", "open_todos", "loaded", "released"]


@dataclass
class SprintSet:
    """Agent-sprints in replay order with integer-coded files, domains and references."""

    rows: pd.DataFrame  # one per agent-sprint, in sprint order then agent
    file_project: np.ndarray  # file id -> project code
    file_path: np.ndarray  # file id -> canonical path (object array)
    file_bytes: np.ndarray  # file id -> bytes (float)
    file_domain: np.ndarray  # file id -> global domain id of its first contract domain, or -1
    file_ndomains: np.ndarray  # file id -> number of contract domains listing it
    domain_names: list[tuple[str, str]]  # global domain id -> (project, domain)
    domain_inferred: np.ndarray  # global domain id -> the contract was inferred
    dom_ptr: np.ndarray  # CSR: files of domain d are dom_files[dom_ptr[d]:dom_ptr[d + 1]]
    dom_files: np.ndarray
    ref_row: np.ndarray  # unique (row, file) referenced pairs, sorted
    ref_file: np.ndarray
    touched_row: np.ndarray  # (row, file) pairs edited or written
    touched_file: np.ndarray
    todo_keys: np.ndarray  # sorted sprint * n_domains + domain for open TODOs at sprint end
    rec_row: np.ndarray  # recorded broker loads (row, file)
    rec_file: np.ndarray
    rel_sprint: np.ndarray  # recorded releases (sprint, file)
    rel_file: np.ndarray
    projects: list[str] = field(default_factory=list)
    default_bytes: float = DEFAULT_FILE_BYTES
    label_cache: dict[str, pd.Categorical] | None = field(default=None, repr=False)
    # which sprints of the store were replayed and why the others were not (load_sprints)
    scope: object | None = field(default=None, repr=False)  # brainlab.sim.broker_scope.Scope
    # the breath metrics the broker printed in its expire blocks, per sprint (SPEC §4.4)
    printed: pd.DataFrame | None = field(default=None, repr=False)
    # the files the broker excluded explicitly, per sprint (seed "Exclusions explicites")
    exclusions: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def n_rows(self) -> int:
        """Number of agent-sprints."""
        return len(self.rows)

    @property
    def n_files(self) -> int:
        """Number of distinct (project, path) files."""
        return len(self.file_path)

    @cached_property
    def row_sprint(self) -> np.ndarray:
        """Row -> sprint index (sprints numbered in replay order)."""
        return self.rows["sprint_idx"].to_numpy()

    @cached_property
    def row_domain(self) -> np.ndarray:
        """Row -> global domain id, or -1 when the domain is not in the contract."""
        return self.rows["domain_id"].to_numpy()

    @property
    def labels(self) -> dict[str, pd.Categorical]:
        """sprint_id, project, domain, agent per row as categoricals (cheap to copy)."""
        if self.label_cache is None:
            out = {}
            for column in ("sprint_id", "project", "domain", "agent"):
                codes, uniques = encode(self.rows[column])
                out[column] = categorical(codes, uniques)
            self.label_cache = out
        return self.label_cache

    def file_id(self, project: str, path: str) -> int:
        """The id of a file, adding it (default size, no domain) when new."""
        key = (project, path)
        index = self._file_index
        if key not in index:
            code = self.projects.index(project) if project in self.projects else -1
            index[key] = self.n_files
            self.file_project = np.append(self.file_project, code)
            self.file_path = np.append(self.file_path, np.array([path], dtype=object))
            self.file_bytes = np.append(self.file_bytes, float(self.default_bytes))
            self.file_domain = np.append(self.file_domain, -1)
            self.file_ndomains = np.append(self.file_ndomains, 0)
        return index[key]

    @cached_property
    def _file_index(self) -> dict[tuple[str, str], int]:
        return {(self.projects[p] if p >= 0 else "", path): i for i, (p, path)
                in enumerate(zip(self.file_project, self.file_path, strict=True))}

    def paths(self, ids) -> list[str]:
        """Canonical paths of file ids."""
        return [self.file_path[i] for i in ids]

    @staticmethod
    def build(agents: pd.DataFrame, refs: pd.DataFrame, contracts: pd.DataFrame,
              sizes: pd.DataFrame | None = None,
              default_bytes: float = DEFAULT_FILE_BYTES) -> SprintSet:
        """Encode plain frames into a SprintSet.

        agents (AGENT_COLUMNS), refs (sprint_id, agent, path, kind), contracts (project,
        domain, path, position, inferred), sizes (project, path, bytes).
        """
        return _build(agents, refs, contracts, sizes, default_bytes)


def sprints_from_records(records: list[dict], contracts: dict[str, dict[str, list[str]]]
                         | None = None, default_bytes: float = DEFAULT_FILE_BYTES) -> SprintSet:
    """A SprintSet from JSONL-shaped sprint records (docs/broker.md) and declared contracts."""
    agent_rows, ref_rows, size_rows = [], [], []
    for seq, rec in enumerate(records):
        agent_rows.append({
            "sprint_id": rec["sprint"], "project": rec["project"], "domain": rec.get("domain"),
            "agent": rec["agent"], "session_id": rec.get("session"),
            "started_at": rec.get("started_at"), "ended_at": rec.get("ended_at"),
            "open_todos": list(rec.get("open_todos") or []), "loaded": rec.get("loaded"),
            "released": rec.get("released"), "seq": seq,
        })
        for entry in rec.get("referenced") or []:
            path, kind = (entry, "read") if isinstance(entry, str) else \
                (entry["path"], entry.get("kind", "read"))
            ref_rows.append((rec["sprint"], rec["agent"], path, kind))
            if isinstance(entry, dict) and entry.get("bytes") is not None:
                size_rows.append((rec["project"], path, entry["bytes"]))
        for path in rec.get("touched") or []:
            ref_rows.append((rec["sprint"], rec["agent"], path, "edit"))
        for path, size in (rec.get("bytes") or {}).items():
            size_rows.append((rec["project"], path, size))
    contract_rows = [(p, d, f, i, False) for p, domains in (contracts or {}).items()
                     for d, files in domains.items() for i, f in enumerate(files)]
    return SprintSet.build(
        pd.DataFrame(agent_rows),
        pd.DataFrame(ref_rows, columns=["sprint_id", "agent", "path", "kind"]),
        pd.DataFrame(contract_rows, columns=["project", "domain", "path", "position",
                                             "inferred"]),
        pd.DataFrame(size_rows, columns=["project", "path", "bytes"]), default_bytes)


def _canonical(paths_by_project: dict[str, set[str]], contracts: pd.DataFrame) -> dict:
    """(project, path) -> contract entry when the path ends with it (``/src/a.ts`` ~ ``a.ts``)."""
    entries: dict[str, dict[str, list[str]]] = {}
    for project, path in zip(contracts["project"], contracts["path"], strict=True):
        entries.setdefault(project, {}).setdefault(path.rsplit("/", 1)[-1], []).append(path)
    out = {}
    for project, paths in paths_by_project.items():
        known = entries.get(project, {})
        for path in paths:
            for entry in known.get(path.rsplit("/", 1)[-1], ()):
                if path == entry or path.endswith("/" + entry):
                    out[(project, path)] = entry
                    break
    return out


def _order(agents: pd.DataFrame, sprint_code: np.ndarray) -> pd.DataFrame:
    """Sprint order and the start/end keys used for 'ended before' (history look-ahead rule).

    One row per sprint code (codes number sprints in order of first appearance).
    """
    frame = pd.DataFrame({"started_at": agents["started_at"].to_numpy(),
                          "ended_at": agents["ended_at"].to_numpy(),
                          "seq": agents["seq"].to_numpy()})
    first = frame.groupby(sprint_code, sort=True).agg(
        started_at=("started_at", "min"), ended_at=("ended_at", "max"), seq=("seq", "min"))
    started = pd.to_datetime(first["started_at"], errors="coerce", utc=True)
    ended = pd.to_datetime(first["ended_at"], errors="coerce", utc=True)
    ended = ended.fillna(started)
    timed = started.notna().all()
    first = first.assign(_start=started, _seq=first["seq"])
    first = first.sort_values(["_start", "_seq"] if timed else ["_seq"], kind="stable")
    first["sprint_idx"] = np.arange(len(first))
    if timed:
        epoch = pd.Timestamp(0, tz="UTC")
        second = pd.Timedelta(seconds=1)
        first["start_key"] = ((started.loc[first.index] - epoch) / second).to_numpy()
        # a sprint ends after it starts: without an end (or with end <= start) it lasts 1 ms,
        # so "ended before this one started" never counts the sprint itself (no look-ahead)
        first["end_key"] = np.maximum(((ended.loc[first.index] - epoch) / second).to_numpy(),
                                      first["start_key"].to_numpy() + 0.001)
    else:  # no timestamps: sprints ran one after another, in file order
        first["start_key"] = first["sprint_idx"].astype(float)
        first["end_key"] = first["sprint_idx"] + 0.5
    return first[["sprint_idx", "start_key", "end_key"]].sort_index()


def _lookup(keys: pd.DataFrame | list, wanted: pd.DataFrame | list) -> np.ndarray:
    """Positions of ``wanted`` tuples in ``keys`` (-1 when absent), vectorised (small frames)."""
    index = pd.MultiIndex.from_arrays(keys) if isinstance(keys, list) else \
        pd.MultiIndex.from_frame(keys)
    query = pd.MultiIndex.from_arrays(wanted) if isinstance(wanted, list) else \
        pd.MultiIndex.from_frame(wanted)
    return index.get_indexer(query)


class _Names:
    """A growing name -> id table; only distinct values pass through Python."""

    def __init__(self) -> None:
        self.ids: dict = {}
        self.names: list = []

    def add(self, names) -> np.ndarray:
        """Ids of distinct ``names`` (None/NaN count as one missing name), adding new ones."""
        out = np.empty(len(names), dtype=np.int64)
        for i, name in enumerate(names):
            key = None if _missing(name) else name
            if key not in self.ids:
                self.ids[key] = len(self.names)
                self.names.append(key)
            out[i] = self.ids[key]
        return out

    def codes(self, values) -> np.ndarray:
        """Ids of every value of a column (encoded first, so Python sees distinct values)."""
        if isinstance(values, np.ndarray) and values.dtype == object:
            codes, uniques = pd.factorize(values, use_na_sentinel=False)
        else:
            codes, uniques = encode(values)
        return self.add(uniques)[codes] if len(codes) else np.zeros(0, dtype=np.int64)


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _pair_index(a: np.ndarray, b: np.ndarray, table: dict, names_a: list,
                names_b: list) -> np.ndarray:
    """table[(names_a[a], names_b[b])] for every (a, b) pair, -1 when absent."""
    if len(a) == 0:
        return np.zeros(0, dtype=np.int64)
    wide = max(len(names_b), 1)
    key = a * wide + b
    if len(names_a) * wide <= 1 << 24:  # small key space: a presence table, no sort
        present = np.zeros(len(names_a) * wide, dtype=bool)
        present[key] = True
        keys = np.flatnonzero(present)
        inverse = (np.cumsum(present) - 1)[key]
    else:
        keys, inverse = np.unique(key, return_inverse=True)
    found = np.array([table.get((names_a[k // wide], names_b[k % wide]), -1) for k in keys],
                     dtype=np.int64)
    return found[inverse.reshape(-1)]


def _build(agents, refs, contracts, sizes, default_bytes) -> SprintSet:
    agents = agents.reset_index(drop=True)
    for column in AGENT_COLUMNS:
        if column not in agents:
            agents[column] = None
    if "seq" not in agents:
        agents["seq"] = np.arange(len(agents))
    # Rows: one per (sprint, agent), the first line kept; strings as integer codes.
    s_code, s_names = encode(agents["sprint_id"])
    a_code, a_names = encode(agents["agent"])
    wide = max(len(a_names), 1)
    row_key = s_code * wide + a_code
    sorted_row_keys = np.sort(row_key)
    if len(row_key) and (sorted_row_keys[1:] == sorted_row_keys[:-1]).any():
        keep = np.sort(np.unique(row_key, return_index=True)[1])
        agents = agents.iloc[keep].reset_index(drop=True)
        s_code, a_code, row_key = s_code[keep], a_code[keep], row_key[keep]
    # Sprint order; rows in replay order (row number = index).
    order_of = _order(agents, s_code)
    sprint_of_code = order_of["sprint_idx"].to_numpy()
    seq = agents["seq"].to_numpy()
    if np.issubdtype(seq.dtype, np.number):
        order = np.lexsort((seq, sprint_of_code[s_code]))
    else:
        order = pd.DataFrame({"i": sprint_of_code[s_code], "s": seq}).sort_values(
            ["i", "s"], kind="stable").index.to_numpy()
    agents = agents.take(order).reset_index(drop=True)
    s_code, a_code, row_key = s_code[order], a_code[order], row_key[order]
    sprint_idx = sprint_of_code[s_code]
    agents["sprint_idx"] = sprint_idx
    agents["start_key"] = order_of["start_key"].to_numpy()[s_code]
    agents["end_key"] = order_of["end_key"].to_numpy()[s_code]
    p_code, p_names = encode(agents["project"])
    # References -> rows (by sprint and agent); a reference's project is its sprint's.
    row_sorter = np.argsort(row_key, kind="stable")
    sorted_keys = row_key[row_sorter]
    r_s, r_a = index_in(refs["sprint_id"], s_names), index_in(refs["agent"], a_names)
    r_key = np.where((r_s >= 0) & (r_a >= 0), r_s * wide + r_a, -1)
    pos = np.minimum(np.searchsorted(sorted_keys, r_key), max(len(sorted_keys) - 1, 0))
    valid = (r_key >= 0) & (sorted_keys[pos] == r_key) if len(sorted_keys) else \
        np.zeros(len(r_key), dtype=bool)
    ref_rows = row_sorter[pos[valid]] if len(sorted_keys) else np.zeros(0, dtype=np.int64)
    first_row = np.searchsorted(sprint_idx, np.arange(len(s_names)))
    projects_t, paths_t = _Names(), _Names()
    project_id = projects_t.add(p_names)  # agent project code -> project table id
    ref_proj = project_id[p_code[first_row[sprint_idx[ref_rows]]]] if len(ref_rows) else \
        np.zeros(0, dtype=np.int64)
    ref_path = paths_t.codes(refs["path"])[valid]
    k_code, k_names = encode(refs["kind"])
    edits = np.isin(k_names, ["edit", "write"])[k_code][valid] if len(k_code) else \
        np.zeros(0, dtype=bool)
    # Contracts: declared, else inferred from the directory layout of referenced paths (§4.1).
    contracts = contracts.copy()
    if "inferred" not in contracts:
        contracts["inferred"] = False
    declared = set(pd.unique(contracts["project"].to_numpy(dtype=object)))
    agent_projects = {p for p in p_names if not _missing(p)}
    missing = sorted(agent_projects - declared)
    inferred_rows = []
    if missing:
        wide_p = max(len(paths_t.names), 1)
        pairs = np.unique(ref_proj * wide_p + ref_path)
        by_proj: dict[str, set[str]] = {}
        for k in pairs.tolist():
            by_proj.setdefault(projects_t.names[k // wide_p], set()).add(
                paths_t.names[k % wide_p])
        for project in missing:
            layout = infer_contract(by_proj.get(project, set()))
            inferred_rows += [(project, d, f, i, True) for d, files in layout.items()
                              for i, f in enumerate(files)]
    if inferred_rows:
        contracts = pd.concat([contracts, pd.DataFrame(
            inferred_rows, columns=["project", "domain", "path", "position", "inferred"])],
            ignore_index=True)
    contracts = contracts.sort_values(["project", "domain", "position"], kind="stable")
    contracts = pd.DataFrame({
        "project": _strings(contracts["project"]), "domain": _strings(contracts["domain"]),
        "path": _strings(contracts["path"]), "inferred": contracts["inferred"].to_numpy(bool)})
    c_proj, c_path = projects_t.codes(contracts["project"]), paths_t.codes(contracts["path"])
    # Every (project, path) named anywhere, and its canonical contract name.
    rec_rows, rec_vals, rec_known = explode_lists(agents["loaded"])
    rel_rows, rel_vals, rel_known = explode_lists(agents["released"])
    rec_proj, rec_path = project_id[p_code[rec_rows]], paths_t.codes(rec_vals)
    rel_proj, rel_path = project_id[p_code[rel_rows]], paths_t.codes(rel_vals)
    sizes = sizes if sizes is not None else pd.DataFrame(columns=["project", "path", "bytes"])
    z_proj, z_path = projects_t.codes(_strings(sizes["project"])), \
        paths_t.codes(_strings(sizes["path"]))
    n_paths = max(len(paths_t.names), 1)
    named = sorted_unique(np.concatenate([
        ref_proj * n_paths + ref_path, rec_proj * n_paths + rec_path,
        rel_proj * n_paths + rel_path, z_proj * n_paths + z_path]))
    by_project: dict[str, set[str]] = {}
    for k in named.tolist():
        by_project.setdefault(projects_t.names[k // n_paths], set()).add(
            paths_t.names[k % n_paths])
    canon = _canonical(by_project, contracts)
    canonical = np.array([paths_t.ids[canon.get((projects_t.names[k // n_paths],
                                                 paths_t.names[k % n_paths]),
                                                paths_t.names[k % n_paths])]
                          for k in named.tolist()], dtype=np.int64)
    canonical = named // n_paths * n_paths + canonical if len(named) else named
    # Files: ids in (project, canonical path) order.
    file_keys = sorted_unique(np.concatenate([c_proj * n_paths + c_path, canonical]))
    file_keys = np.array(sorted(file_keys.tolist(), key=lambda k: _sort_key(
        projects_t.names[k // n_paths], paths_t.names[k % n_paths])), dtype=np.int64)
    n_files = len(file_keys)
    key_order = np.argsort(file_keys)
    sorted_file_keys = file_keys[key_order]
    named_fid = key_order[np.searchsorted(sorted_file_keys, canonical)] if n_files else \
        np.zeros(0, dtype=np.int64)

    def file_ids(proj: np.ndarray, path: np.ndarray) -> np.ndarray:
        if len(proj) == 0:
            return np.zeros(0, dtype=np.int64)
        return named_fid[np.searchsorted(named, proj * n_paths + path)]

    projects = sorted(agent_projects | declared, key=str)
    project_pos = {name: i for i, name in enumerate(projects)}
    file_project = np.array([project_pos.get(projects_t.names[k // n_paths], -1)
                             for k in file_keys.tolist()], dtype=np.int64)
    file_path = np.array([paths_t.names[k % n_paths] for k in file_keys.tolist()] + [None],
                         dtype=object)[:-1]
    file_bytes = np.full(n_files, float(default_bytes))
    if len(sizes):
        known_size = sizes["bytes"].notna().to_numpy()
        ids = file_ids(z_proj[known_size], z_path[known_size])
        file_bytes[ids] = sizes["bytes"].to_numpy(dtype=float)[known_size]
    # Domains (global ids over (project, domain)) and their files in contract order.
    dom_frame = contracts[["project", "domain"]].drop_duplicates()
    dom_keys = list(zip(dom_frame["project"], dom_frame["domain"], strict=True))
    dom_index = {key: i for i, key in enumerate(dom_keys)}
    c_dom = _lookup([dom_frame["project"], dom_frame["domain"]],
                    [contracts["project"], contracts["domain"]])
    c_file = key_order[np.searchsorted(sorted_file_keys, c_proj * n_paths + c_path)] \
        if len(c_proj) else np.zeros(0, dtype=np.int64)
    pairs = pd.DataFrame({"d": c_dom, "f": c_file}).drop_duplicates()
    dom_inferred = np.zeros(len(dom_keys), dtype=bool)
    dom_inferred[c_dom] = contracts["inferred"].to_numpy()
    file_domain = np.full(n_files, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(file_domain, pairs["f"].to_numpy(), pairs["d"].to_numpy())
    file_domain[file_domain == np.iinfo(np.int64).max] = -1
    file_ndomains = np.bincount(pairs["f"].to_numpy(), minlength=n_files).astype(np.int64)
    dom_ptr = np.zeros(len(dom_keys) + 1, dtype=np.int64)
    dom_ptr[1:] = np.cumsum(np.bincount(pairs["d"].to_numpy(), minlength=len(dom_keys)))
    dom_files = pairs.sort_values("d", kind="stable")["f"].to_numpy(dtype=np.int64)
    d_code, d_names = encode(agents["domain"])
    agents["domain_id"] = _pair_index(p_code, d_code, dom_index, list(p_names), list(d_names))
    n_dom = max(len(dom_keys), 1)
    # References (unique pairs) and touched pairs.
    ref_files = file_ids(ref_proj, ref_path)
    ref_row, ref_file = _unique_pairs(ref_rows, ref_files, n_files)
    touched_row, touched_file = _unique_pairs(ref_rows[edits], ref_files[edits], n_files)
    _fill_domains(agents, ref_row, ref_file, file_domain, dom_keys)
    domain_id = agents["domain_id"].to_numpy()
    missing_codes = [i for i, p in enumerate(p_names) if p in set(missing)]
    agents["contract_inferred"] = np.where(
        domain_id >= 0, dom_inferred[np.maximum(domain_id, 0)] if len(dom_keys) else False,
        np.isin(p_code, missing_codes))
    # Open TODOs (sprint level): a domain name of the project, else the line's own domain.
    t_rows, t_vals, _ = explode_lists(agents["open_todos"])
    v_code, v_names = pd.factorize(t_vals, use_na_sentinel=False)
    named_dom = _pair_index(p_code[t_rows], v_code.astype(np.int64), dom_index, list(p_names),
                            list(v_names))
    t_dom = np.where(named_dom >= 0, named_dom, domain_id[t_rows])
    todo_keys = np.unique(sprint_idx[t_rows][t_dom >= 0] * n_dom + t_dom[t_dom >= 0])
    # Recorded broker loads (per row) and releases (per sprint).
    rec_row, rec_file = _unique_pairs(rec_rows, file_ids(rec_proj, rec_path), n_files)
    rel_sprint, rel_file = _unique_pairs(sprint_idx[rel_rows], file_ids(rel_proj, rel_path),
                                         n_files)
    agents["has_recorded"] = rec_known
    agents["has_recorded_expire"] = np.isin(sprint_idx, np.unique(sprint_idx[rel_known]))
    d_code, d_names = encode(agents["domain"])
    labels = {"sprint_id": categorical(s_code, s_names), "project": categorical(p_code, p_names),
              "domain": categorical(d_code, d_names), "agent": categorical(a_code, a_names)}
    return SprintSet(
        rows=agents, file_project=file_project, file_path=file_path,
        file_bytes=file_bytes, file_domain=file_domain, file_ndomains=file_ndomains,
        domain_names=dom_keys, domain_inferred=dom_inferred, dom_ptr=dom_ptr,
        dom_files=dom_files, ref_row=ref_row, ref_file=ref_file, touched_row=touched_row,
        touched_file=touched_file, todo_keys=todo_keys.astype(np.int64), rec_row=rec_row,
        rec_file=rec_file, rel_sprint=rel_sprint, rel_file=rel_file, projects=projects,
        default_bytes=default_bytes, label_cache=labels)


def _sort_key(project, path) -> tuple:
    """(project, path) order of file ids, missing values last (as pandas sorts them)."""
    return (_missing(project), "" if _missing(project) else project,
            _missing(path), "" if _missing(path) else path)


def _strings(series: pd.Series) -> np.ndarray:
    """A (small) column as a numpy object array."""
    return series.astype(object).to_numpy(dtype=object)


def _fill_domains(agents, ref_row, ref_file, file_domain, dom_keys) -> None:
    """A row without a domain (transcripts) takes the contract domain most of its files are in."""
    unknown = agents["domain"].isna().to_numpy()
    if not unknown.any():
        return
    picks = pd.DataFrame({"row": ref_row, "dom": file_domain[ref_file]})
    picks = picks[(picks["dom"] >= 0) & unknown[picks["row"].to_numpy()]]
    best = picks.groupby(["row", "dom"]).size().reset_index(name="n") \
        .sort_values(["row", "n", "dom"], ascending=[True, False, True]).drop_duplicates("row")
    for r, d in zip(best["row"], best["dom"], strict=True):
        agents.at[r, "domain"] = dom_keys[d][1]
        agents.at[r, "domain_id"] = d


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """np.unique for int64 keys by sort + mask (faster than numpy's hash path here)."""
    values = np.sort(values)
    if len(values) == 0:
        return values
    keep = np.empty(len(values), dtype=bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def _unique_pairs(rows: np.ndarray, files: np.ndarray, n_files: int):
    """Sorted unique (row, file) pairs."""
    keys = sorted_unique(rows.astype(np.int64) * max(n_files, 1) + files)
    return keys // max(n_files, 1), keys % max(n_files, 1)


def pair_keys(rows: np.ndarray, files: np.ndarray, n_files: int) -> np.ndarray:
    """One int64 key per (row, file) pair, for set operations."""
    return rows.astype(np.int64) * max(n_files, 1) + files


def expand_domains(ss: SprintSet, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, file, position) for every contract file of each row's domain."""
    domains = ss.row_domain[rows]
    valid = domains >= 0
    rows, domains = rows[valid], domains[valid]
    starts = ss.dom_ptr[domains]
    counts = ss.dom_ptr[domains + 1] - starts
    total = int(counts.sum())
    out_rows = np.repeat(rows, counts)
    offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
    index = offsets + np.arange(total)
    position = index - np.repeat(starts, counts)
    return out_rows, ss.dom_files[index], position
