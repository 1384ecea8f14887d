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

    @cached_property
    def labels(self) -> dict[str, pd.Categorical]:
        """sprint_id, project, domain, agent per row as categoricals (cheap to copy)."""
        out = {}
        for column in ("sprint_id", "project", "domain", "agent"):
            codes, uniques = pd.factorize(self.rows[column].to_numpy(dtype=object),
                                          sort=True, use_na_sentinel=True)
            out[column] = pd.Categorical.from_codes(codes, categories=pd.Index(uniques,
                                                                               dtype=object))
        return out

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


def _order(agents: pd.DataFrame) -> pd.DataFrame:
    """Sprint order and the start/end keys used for 'ended before' (history look-ahead rule)."""
    first = agents.groupby("sprint_id", sort=False).agg(
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
        first["end_key"] = ((ended.loc[first.index] - epoch) / second).to_numpy()
    else:  # no timestamps: sprints ran one after another, in file order
        first["start_key"] = first["sprint_idx"].astype(float)
        first["end_key"] = first["sprint_idx"] + 0.5
    return first[["sprint_idx", "start_key", "end_key"]]


def _strings(series: pd.Series) -> np.ndarray:
    """A column as a numpy object array (fast to iterate, unlike Arrow-backed strings)."""
    return series.astype(object).to_numpy(dtype=object)


def _lookup(keys: pd.DataFrame | list, wanted: pd.DataFrame | list) -> np.ndarray:
    """Positions of ``wanted`` tuples in ``keys`` (-1 when absent), vectorised."""
    index = pd.MultiIndex.from_arrays(keys) if isinstance(keys, list) else \
        pd.MultiIndex.from_frame(keys)
    query = pd.MultiIndex.from_arrays(wanted) if isinstance(wanted, list) else \
        pd.MultiIndex.from_frame(wanted)
    return index.get_indexer(query)


def _explode(agents: pd.DataFrame, column: str) -> pd.DataFrame:
    """(row, value) for every entry of a list column (unknown lists skipped)."""
    values = agents[column].to_numpy(dtype=object)
    if not len(values) or all(v is None for v in values[:1]) and agents[column].isna().all():
        return pd.DataFrame({"row": np.zeros(0, dtype=np.int64),
                             "value": np.array([], dtype=object)})
    lengths = np.fromiter((len(v) if _known(v) else 0 for v in values), dtype=np.int64,
                          count=len(values))
    rows = np.repeat(np.arange(len(values)), lengths)
    flat = [x for v in values if _known(v) for x in v]
    return pd.DataFrame({"row": rows, "value": np.array(flat, dtype=object)})


def _build(agents, refs, contracts, sizes, default_bytes) -> SprintSet:
    agents = agents.copy()
    for column in AGENT_COLUMNS:
        if column not in agents:
            agents[column] = None
    if "seq" not in agents:
        agents["seq"] = np.arange(len(agents))
    for column in ("sprint_id", "project", "domain", "agent", "session_id"):
        agents[column] = _strings(agents[column])
    agents = agents.drop_duplicates(["sprint_id", "agent"], keep="first")
    refs = pd.DataFrame({c: _strings(refs[c]) for c in ("sprint_id", "agent", "path", "kind")})
    contracts = contracts.copy()
    if "inferred" not in contracts:
        contracts["inferred"] = False
    sizes = sizes if sizes is not None else pd.DataFrame(columns=["project", "path", "bytes"])
    # Sprint order; rows in replay order (row number = index).
    agents = agents.join(_order(agents), on="sprint_id")
    agents = agents.sort_values(["sprint_idx", "seq"], kind="stable").reset_index(drop=True)
    project_of = agents.drop_duplicates("sprint_id").set_index("sprint_id")["project"]
    refs["project"] = _strings(refs["sprint_id"].map(project_of))
    refs["row"] = _lookup([agents["sprint_id"], agents["agent"]],
                          [refs["sprint_id"], refs["agent"]])
    refs = refs[refs["row"] >= 0]
    # Contracts: declared, else inferred from the directory layout of referenced paths (§4.1).
    declared = set(pd.unique(contracts["project"].to_numpy(dtype=object)))
    agent_projects = set(pd.unique(agents["project"].dropna().to_numpy(dtype=object)))
    missing = sorted(agent_projects - declared)
    inferred_rows = []
    for project in missing:
        layout = infer_contract(set(refs.loc[refs["project"] == project, "path"]))
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
    # Every (project, path) named anywhere, and its canonical contract name.
    recorded = _explode(agents, "loaded")
    released = _explode(agents, "released")
    named = pd.concat([
        refs[["project", "path"]],
        pd.DataFrame({"project": agents["project"].to_numpy()[recorded["row"].to_numpy()],
                      "path": recorded["value"].to_numpy()}),
        pd.DataFrame({"project": agents["project"].to_numpy()[released["row"].to_numpy()],
                      "path": released["value"].to_numpy()}),
        pd.DataFrame({"project": _strings(sizes["project"]), "path": _strings(sizes["path"])}),
    ], ignore_index=True).drop_duplicates()
    by_project: dict[str, set[str]] = {}
    for project, path in zip(named["project"], named["path"], strict=True):
        by_project.setdefault(project, set()).add(path)
    canon = _canonical(by_project, contracts)
    named["canonical"] = [canon.get((p, x), x) for p, x in zip(named["project"], named["path"],
                                                               strict=True)]
    # Files: ids in (project, canonical path) order.
    files = pd.concat([contracts[["project", "path"]],
                       named[["project", "canonical"]].rename(columns={"canonical": "path"})],
                      ignore_index=True).drop_duplicates().sort_values(["project", "path"])
    files = files.reset_index(drop=True)
    n_files = len(files)
    projects = sorted(agent_projects
                      | set(pd.unique(contracts["project"].to_numpy(dtype=object))))
    file_project = _lookup([pd.Index(projects)], [files["project"]])
    file_path = _strings(files["path"])
    named["fid"] = _lookup([files["project"], files["path"]],
                           [named["project"], named["canonical"]])

    def file_ids(project_values, path_values) -> np.ndarray:
        at = _lookup([named["project"], named["path"]], [project_values, path_values])
        return named["fid"].to_numpy()[at]

    file_bytes = np.full(n_files, float(default_bytes))
    known_size = sizes.dropna(subset=["bytes"]) if len(sizes) else sizes
    if len(known_size):
        ids = file_ids(_strings(known_size["project"]), _strings(known_size["path"]))
        file_bytes[ids] = known_size["bytes"].to_numpy(dtype=float)
    # Domains (global ids over (project, domain)) and their files in contract order.
    dom_frame = contracts[["project", "domain"]].drop_duplicates()
    dom_keys = list(zip(dom_frame["project"], dom_frame["domain"], strict=True))
    c_dom = _lookup([dom_frame["project"], dom_frame["domain"]],
                    [contracts["project"], contracts["domain"]])
    c_file = _lookup([files["project"], files["path"]], [contracts["project"], contracts["path"]])
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
    agents["domain_id"] = _lookup([dom_frame["project"], dom_frame["domain"]],
                                  [agents["project"], agents["domain"]])
    n_dom = max(len(dom_keys), 1)
    # References (unique pairs) and touched pairs.
    ref_rows = refs["row"].to_numpy(dtype=np.int64)
    ref_files = file_ids(refs["project"].to_numpy(), refs["path"].to_numpy())
    edits = refs["kind"].isin(["edit", "write"]).to_numpy()
    ref_row, ref_file = _unique_pairs(ref_rows, ref_files, n_files)
    touched_row, touched_file = _unique_pairs(ref_rows[edits], ref_files[edits], n_files)
    _fill_domains(agents, ref_row, ref_file, file_domain, dom_keys)
    domain_id = agents["domain_id"].to_numpy()
    agents["contract_inferred"] = np.where(
        domain_id >= 0, dom_inferred[np.maximum(domain_id, 0)] if len(dom_keys) else False,
        agents["project"].isin(missing).to_numpy())
    # Open TODOs (sprint level): a domain name of the project, else the line's own domain.
    todos = _explode(agents, "open_todos")
    t_rows = todos["row"].to_numpy()
    named_dom = _lookup([dom_frame["project"], dom_frame["domain"]],
                        [agents["project"].to_numpy()[t_rows], todos["value"].to_numpy()])
    t_dom = np.where(named_dom >= 0, named_dom, domain_id[t_rows])
    sprint_idx = agents["sprint_idx"].to_numpy()
    todo_keys = np.unique(sprint_idx[t_rows][t_dom >= 0] * n_dom + t_dom[t_dom >= 0])
    # Recorded broker loads (per row) and releases (per sprint).
    r_rows = recorded["row"].to_numpy()
    rec_row, rec_file = _unique_pairs(
        r_rows, file_ids(agents["project"].to_numpy()[r_rows], recorded["value"].to_numpy()),
        n_files)
    l_rows = released["row"].to_numpy()
    rel_sprint, rel_file = _unique_pairs(
        sprint_idx[l_rows],
        file_ids(agents["project"].to_numpy()[l_rows], released["value"].to_numpy()), n_files)
    agents["has_recorded"] = _known_mask(agents["loaded"])
    known_release = _known_mask(agents["released"])
    agents["has_recorded_expire"] = agents["sprint_idx"].isin(np.unique(sprint_idx[known_release]))
    return SprintSet(
        rows=agents, file_project=file_project.astype(np.int64), file_path=file_path,
        file_bytes=file_bytes, file_domain=file_domain, file_ndomains=file_ndomains,
        domain_names=dom_keys, domain_inferred=dom_inferred, dom_ptr=dom_ptr,
        dom_files=dom_files, ref_row=ref_row, ref_file=ref_file, touched_row=touched_row,
        touched_file=touched_file, todo_keys=todo_keys.astype(np.int64), rec_row=rec_row,
        rec_file=rec_file, rel_sprint=rel_sprint, rel_file=rel_file, projects=projects,
        default_bytes=default_bytes)


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


def _known_mask(column: pd.Series) -> np.ndarray:
    """Which rows hold a recorded list (vectorised shortcut when the column is all NULL)."""
    if column.isna().all():
        return np.zeros(len(column), dtype=bool)
    values = column.to_numpy(dtype=object)
    return np.fromiter((_known(v) for v in values), dtype=bool, count=len(values))


def _known(value) -> bool:
    """A recorded list (possibly empty), as opposed to NULL/NA/NaN (unknown)."""
    return isinstance(value, (list, tuple, np.ndarray))


def _as_list(value) -> list:
    return list(value) if _known(value) else []


def _cols(pairs: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    if not pairs:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    array = np.asarray(pairs, dtype=np.int64)
    return array[:, 0], array[:, 1]


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
