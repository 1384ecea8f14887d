"""Which sprints the context broker runs on, and which files are boot context (seed context-broker).

The seed invokes the broker for multi-agent sprints of use-brain / build-brain sessions with an
identified project and a declared contract, never in coach, toolkit-only or audit mode nor for a
solo single-file session (``seeds/context-broker.md.txt``:32-37, 76, 241-247). :func:`scope`
labels every sprint the store knows with the first reason it is skipped (``SKIP_REASONS`` of
:mod:`brainlab.spec.broker`), or none, and takes the skipped ones out of the replay inputs.

Files already in context since boot (SPEC §2.3 layers of the session's type, and the planned
agents' own ``agents/<name>.md``) are never the broker's to load (SPEC §4.2 "Interdit"): their
references are taken out too and counted per agent-sprint as ``boot_files`` / ``boot_tokens``,
the same for every policy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePath

import numpy as np
import pandas as pd

from brainlab.spec.broker import (
    AGENT_DEFINITION_DIR,
    BOOT_LAYER0,
    FORBIDDEN_MODES,
    ORCHESTRATOR_AGENT,
    PROJECT_SIGNALS,
    SKIP_REASONS,
)
from brainlab.spec.vocabulary import category_of

CONTRACT_CHOICES = ("declared", "inferred", "all")
_AGENT_DEF = re.compile(rf"(?:^|/){AGENT_DEFINITION_DIR}/([^/]+)\.md$")


@dataclass
class SessionInfo:
    """What the store says about sessions and boot layers (all optional)."""

    sessions: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        columns=["session_id", "type", "mode"]))  # one row per session id
    contexts: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        columns=["session_type", "path"]))  # boot files per session type (all layers)
    blocks: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        columns=["sprint_id", "mode", "project"]))  # the broker's inhale blocks per sprint
    known: set[str] = field(default_factory=set)  # projects the brain names (contracts, records)
    focus: Focus | None = None  # helloWorld's focus.md; None: no focus file in the store


@dataclass(frozen=True)
class Focus:
    """The focus file of helloWorld (seed lines 56-61, third signal), as the store holds it.

    The file keeps only its current state: it tells the project of the sessions booted at or
    after ``modified_at`` (they read this very text), and nothing of older ones.
    """

    source_file: str
    modified_at: pd.Timestamp | None  # the file's mtime when read; None: dated to no session
    projects: tuple[str, ...]  # the known projects its text names, first named first

    @property
    def brain_folder(self) -> str:
        """The brain's own folder name (the focus file's): a session run there names no repo."""
        return PurePath(self.source_file).parent.name

    @property
    def project(self) -> str | None:
        """The project it names when it names exactly one (more: ambiguous, no decision)."""
        return self.projects[0] if len(self.projects) == 1 else None

    def applies(self, started_at) -> bool:
        """Whether a session started at ``started_at`` booted with this text."""
        if self.project is None or self.modified_at is None:
            return False
        started = pd.Timestamp(started_at) if started_at is not None else pd.NaT
        return bool(pd.notna(started) and started >= self.modified_at)


@dataclass
class Scope:
    """Every sprint the store knows, labelled replayed or skipped (with the reason)."""

    sprints: pd.DataFrame  # one row per sprint: see SPRINT_COLUMNS
    contracts: str = "declared"  # which contracts the replay took (CONTRACT_CHOICES)
    focus: Focus | None = None  # helloWorld's focus file, if the store holds one

    @property
    def project_signals(self) -> dict[str, int]:
        """Sprints by the signal that decided their project (PROJECT_SIGNALS order, zeros kept)."""
        counts = self.sprints["project_signal"].value_counts()
        return {s: int(counts.get(s, 0)) for s in PROJECT_SIGNALS}

    @property
    def total(self) -> int:
        """All sprints the store knows (records and transcripts, however built)."""
        return len(self.sprints)

    @property
    def replayed(self) -> int:
        """Sprints replayed."""
        return int(self.sprints["skip_reason"].isna().sum())

    @property
    def skipped(self) -> dict[str, int]:
        """Skipped sprints by reason (reasons in SKIP_REASONS order; absent ones left out)."""
        counts = self.sprints["skip_reason"].value_counts()
        return {r: int(counts[r]) for r in SKIP_REASONS if r in counts.index}

    @property
    def contract_counts(self) -> dict[str, int]:
        """Sprints the broker would run on (no mode/agent reason), by contract kind."""
        eligible = self.sprints[self.sprints["skip_reason"].isna()
                                | self.sprints["skip_reason"].isin(
                                    ["no declared contract", "declared contract"])]
        counts = eligible["contract"].value_counts()
        return {k: int(counts.get(k, 0)) for k in ("declared", "inferred")}

    def describe_skipped(self) -> str:
        """One line: how many sprints were skipped, by reason."""
        parts = [f"{n} {reason}" for reason, n in self.skipped.items()]
        return (f"{self.replayed} of {self.total} sprint(s) replayed"
                + (f"; skipped: {', '.join(parts)}" if parts else ""))


SPRINT_COLUMNS = ["sprint_id", "project", "session_id", "session_type", "mode",
                  "project_signal", "contract", "agents", "files", "skip_reason"]


def scope(agents: pd.DataFrame, refs: pd.DataFrame, declared: set[str], info: SessionInfo,
          sizes: pd.DataFrame | None = None, contracts: str = "declared",
          default_bytes: float = 8_000) -> tuple[pd.DataFrame, pd.DataFrame, Scope]:
    """(agents, refs) of the sprints the broker runs on, boot references taken out; the Scope.

    ``agents``/``refs``: the frames :meth:`SprintSet.build` takes (sprints of every origin,
    project NULL allowed); ``declared``: projects with a declared contract. The returned
    agents frame gains ``boot_files`` and ``boot_tokens`` (per agent-sprint).
    """
    if contracts not in CONTRACT_CHOICES:
        from brainlab.common.errors import SimulationError

        raise SimulationError(f"--contracts must be one of {', '.join(CONTRACT_CHOICES)}, "
                              f"got {contracts!r}")
    agents = agents.reset_index(drop=True)
    # The orchestrator's chain is not a planned agent where the sprint has sub-agents.
    has_sub = agents.groupby("sprint_id")["agent"].transform(
        lambda a: (a != ORCHESTRATOR_AGENT).any())
    agents = agents[(agents["agent"] != ORCHESTRATOR_AGENT) | ~has_sub].reset_index(drop=True)
    refs = refs.merge(agents[["sprint_id", "agent"]], on=["sprint_id", "agent"])
    sessions = _session_table(info.sessions)
    if "started_at" not in agents:
        agents = agents.assign(started_at=pd.NaT)
    sprint = agents.groupby("sprint_id", sort=False).agg(
        project=("project", "first"), session_id=("session_id", "first"),
        started_at=("started_at", "min"), agents=("agent", "nunique")).reset_index()
    sprint = sprint.merge(sessions, on="session_id", how="left")
    blocks = info.blocks.dropna(subset=["sprint_id"]).drop_duplicates("sprint_id")
    sprint = sprint.merge(blocks.rename(columns={"mode": "block_mode",
                                                 "project": "block_project"}),
                          on="sprint_id", how="left")
    # The seed's project detection (lines 56-61): the deciding signal may name the project.
    sprint["project"], sprint["project_signal"] = _detect(sprint, info)
    decided = sprint.set_index("sprint_id")["project"]
    agents = agents.assign(project=agents["sprint_id"].map(decided).to_numpy(dtype=object))
    # Boot context: per reference, is it in context since boot for its sprint's session type?
    refs = refs.merge(sprint[["sprint_id", "project", "session_type"]], on="sprint_id",
                      how="left")
    boot = _is_boot(refs, info.contexts, agents)
    boot_refs = refs[boot].drop_duplicates(["sprint_id", "agent", "path"])
    refs = refs[~boot][["sprint_id", "agent", "path", "kind"]]
    files = refs.groupby("sprint_id")["path"].nunique()
    sprint["files"] = sprint["sprint_id"].map(files).fillna(0).astype(np.int64)
    sprint["contract"] = np.where(sprint["project"].isna(), None,
                                  np.where(sprint["project"].isin(declared), "declared",
                                           "inferred"))
    sprint["skip_reason"] = _skip_reasons(sprint, contracts)
    keep = set(sprint.loc[sprint["skip_reason"].isna(), "sprint_id"])
    agents = agents[agents["sprint_id"].isin(keep)].reset_index(drop=True)
    refs = refs[refs["sprint_id"].isin(keep)].reset_index(drop=True)
    agents = _boot_columns(agents, boot_refs, sizes, default_bytes)
    out = Scope(sprint[SPRINT_COLUMNS].reset_index(drop=True), contracts, info.focus)
    return agents, refs, out


def _session_table(sessions: pd.DataFrame) -> pd.DataFrame:
    frame = sessions.dropna(subset=["session_id"]).drop_duplicates("session_id")
    return frame.rename(columns={"type": "session_type", "mode": "mode"})[
        ["session_id", "session_type", "mode"]]


def _is_boot(refs: pd.DataFrame, contexts: pd.DataFrame, agents: pd.DataFrame) -> np.ndarray:
    """True for a reference to a file in context since boot (SPEC §2.3, §4.2)."""
    if refs.empty:
        return np.zeros(0, dtype=bool)
    path = refs["path"].astype(str)
    tail1 = path.str.rsplit("/", n=1).str[-1]
    tail2 = path.str.split("/").str[-2:].str.join("/")
    # layer 0 always; a known type's own layers; an unknown type: what any boot loads
    layers = contexts.dropna(subset=["path"])
    by_type: dict[str, set[str]] = {}
    for kind, entry in zip(layers["session_type"], layers["path"], strict=True):
        by_type.setdefault(kind, set()).add(str(entry))
    any_boot = {p for paths in by_type.values() for p in paths if "{" not in p}
    boot = tail1.isin(BOOT_LAYER0).to_numpy().copy()
    types = refs["session_type"].to_numpy(dtype=object)
    projects = refs["project"].to_numpy(dtype=object)
    t1, t2 = tail1.to_numpy(dtype=object), tail2.to_numpy(dtype=object)
    keys = pd.Series(list(zip(types, projects, strict=True)))
    for (kind, project), index in keys.groupby(keys).groups.items():
        entries = by_type.get(kind) if isinstance(kind, str) else None
        if entries is None:
            entries = any_boot
        entries = {e.replace("{project}", str(project)) for e in entries}
        idx = np.asarray(index)
        boot[idx] |= np.isin(t1[idx], list(entries)) | np.isin(t2[idx], list(entries))
    # the planned agents' own definitions: agents/<name>.md of any agent of the sprint
    named = path.str.extract(_AGENT_DEF, expand=False)
    has_def = named.notna().to_numpy()
    if has_def.any():
        members = set(zip(agents["sprint_id"], agents["agent"], strict=True))
        sprint_ids = refs["sprint_id"].to_numpy(dtype=object)
        for i in np.flatnonzero(has_def):
            boot[i] |= (sprint_ids[i], named.iat[i]) in members
    return boot


def _boot_columns(agents: pd.DataFrame, boot_refs: pd.DataFrame, sizes: pd.DataFrame | None,
                  default_bytes: float) -> pd.DataFrame:
    """boot_files and boot_tokens (bytes/4, SPEC §2.5) per agent-sprint."""
    agents = agents.copy()
    if boot_refs.empty:
        agents["boot_files"] = 0
        agents["boot_tokens"] = 0.0
        return agents
    known = {} if sizes is None or sizes.empty else {
        (p, f): b for p, f, b in zip(sizes["project"], sizes["path"], sizes["bytes"],
                                     strict=True) if b == b and b is not None}
    size = np.array([known.get((p, f), default_bytes) for p, f in
                     zip(boot_refs["project"], boot_refs["path"], strict=True)], dtype=float)
    per = boot_refs.assign(tokens=size / 4.0).groupby(["sprint_id", "agent"]).agg(
        boot_files=("path", "size"), boot_tokens=("tokens", "sum")).reset_index()
    agents = agents.merge(per, on=["sprint_id", "agent"], how="left")
    agents["boot_files"] = agents["boot_files"].fillna(0).astype(np.int64)
    agents["boot_tokens"] = agents["boot_tokens"].fillna(0.0)
    return agents


def _detect(sprint: pd.DataFrame, info: SessionInfo) -> tuple[list, list]:
    """Each sprint's project and the signal that decided it (seed lines 56-61).

    The seed lists three signals, any of which detects a project, and says nothing of a
    conflict; they are tried in its order, the most specific first: ``repo file`` (the
    repository a sprint record names, or a transcript's working directory, unless that is the
    brain's own folder), ``claim slug`` (the session id contains the name of a project the
    brain knows: a declared contract or a sprint record), ``focus`` (helloWorld's focus.md
    names exactly one known project and the session booted after the file was last written).
    Before them, ``broker block``: the broker itself printed that project (``Projet
    détecté``). After them, ``brain folder``: a session in the brain's own folder that no
    signal decided keeps that folder as its project, as before. None: no project.
    """
    by_name = sorted({str(p) for p in info.known}, key=lambda p: (-len(p), p))
    focus = info.focus
    brain = focus.brain_folder if focus is not None else None
    projects: list = []
    signals: list = []
    for project, session, block, started in zip(sprint["project"], sprint["session_id"],
                                                sprint["block_project"], sprint["started_at"],
                                                strict=True):
        named = project if isinstance(project, str) else None
        if named is not None and isinstance(block, str) and block == named:
            projects.append(named)
            signals.append("broker block")
            continue
        if named is not None and named != brain:
            projects.append(named)
            signals.append("repo file")
            continue
        slug = (next((p for p in by_name if p.lower() in session.lower()), None)
                if isinstance(session, str) else None)
        if slug is not None:
            projects.append(slug)
            signals.append("claim slug")
        elif focus is not None and focus.applies(started):
            projects.append(focus.project)
            signals.append("focus")
        else:
            projects.append(named)
            signals.append("brain folder" if named is not None else None)
    return projects, signals


def _skip_reasons(sprint: pd.DataFrame, contracts: str) -> list[str | None]:
    out: list[str | None] = []
    for row in sprint.itertuples(index=False):
        words = {str(w).strip().lower() for w in (row.session_type, row.mode, row.block_mode)
                 if isinstance(w, str)}
        forbidden = next((m for m in FORBIDDEN_MODES if m in words), None)
        category = category_of(row.session_type) if isinstance(row.session_type, str) \
            else None
        if forbidden:
            out.append(forbidden)
        elif category in ("explore-brain", "none"):
            out.append("not use-brain/build-brain")
        elif not isinstance(row.project, str):
            out.append("no identified project")
        elif row.agents <= 1 and row.files <= 1:
            out.append("solo single-file")
        elif row.agents <= 1:
            out.append("single agent")
        elif contracts == "declared" and row.contract != "declared":
            out.append("no declared contract")
        elif contracts == "inferred" and row.contract == "declared":
            out.append("declared contract")
        else:
            out.append(None)
    return out


def session_info(con) -> SessionInfo:
    """Session types and modes, boot layers and the broker's inhale blocks, from the store.

    Types and modes come from the metabolism logs and claims (``sessions``) and from the
    keywords of a transcript's first prompt (``cc_marks``); boot files per type from
    ``context_files`` (contexts/session-<type>.yml); a relation that does not exist is empty.
    """
    from brainlab.sim.transcript_sprints import has_tables

    info = SessionInfo()
    parts = []
    if has_tables(con, "sessions"):
        parts.append(con.execute("SELECT sess_id AS session_id, type, NULL AS mode FROM sessions"
                                 " WHERE sess_id IS NOT NULL AND type IS NOT NULL").df())
    if has_tables(con, "cc_marks"):
        parts.append(con.execute(
            "SELECT session_id, keyword_type AS type, keyword_mode AS mode FROM cc_marks"
            " WHERE kind = 'prompt' AND (keyword_type IS NOT NULL OR keyword_mode IS NOT NULL)"
            " QUALIFY row_number() OVER (PARTITION BY session_id ORDER BY ts, line) = 1").df())
    if parts:
        frame = pd.concat(parts, ignore_index=True)
        info.sessions = frame.drop_duplicates("session_id")[["session_id", "type", "mode"]]
    if has_tables(con, "context_files"):
        info.contexts = con.execute("SELECT DISTINCT session_type, path FROM context_files"
                                    " WHERE path IS NOT NULL").df()
    if has_tables(con, "broker_blocks"):
        # per sprint: the last block's project, and a forbidden mode if any block printed one
        info.blocks = con.execute(
            "SELECT sprint AS sprint_id, coalesce(max(lower(trim(mode))) FILTER (WHERE"
            " list_contains(?, lower(trim(mode)))),"
            " arg_max(mode, coalesce(ts, TIMESTAMP '1970-01-01'))) AS mode,"
            " arg_max(project, coalesce(ts, TIMESTAMP '1970-01-01')) AS project"
            " FROM broker_blocks WHERE kind = 'inhale' GROUP BY sprint",
            [list(FORBIDDEN_MODES)]).df()
    known: set[str] = set()
    if has_tables(con, "project_contracts"):
        known |= {r[0] for r in con.execute("SELECT DISTINCT project FROM project_contracts"
                                            " WHERE project IS NOT NULL").fetchall()}
    if has_tables(con, "sprints"):
        known |= {r[0] for r in con.execute("SELECT DISTINCT project FROM sprints"
                                            " WHERE project IS NOT NULL").fetchall()}
    info.known = known
    info.focus = read_focus(con)
    return info


def read_focus(con) -> Focus | None:
    """The newest focus file in the store and the known projects it names; None: none stored.

    Several brains ingested into one store: the focus written last speaks for the sessions
    booted after it (a focus with no modification time is taken last).
    """
    from brainlab.sim.transcript_sprints import has_tables

    if not has_tables(con, "focus_files", "focus_projects"):
        return None
    row = con.execute("SELECT source_file, modified_at FROM focus_files"
                      " ORDER BY modified_at DESC NULLS LAST, source_file LIMIT 1").fetchone()
    if row is None:
        return None
    named = [r[0] for r in con.execute(
        "SELECT project FROM focus_projects WHERE source_file = ?"
        " ORDER BY first_line, project", [row[0]]).fetchall()]
    return Focus(row[0], pd.Timestamp(row[1]) if row[1] is not None else None, tuple(named))


def describe_focus(focus: Focus | None) -> str:
    """One line: what helloWorld's focus tells the replay (or that it is absent)."""
    if focus is None:
        return ("focus: no focus.md in the store, the third project signal is absent"
                " (`brainlab ingest brain BRAIN` reads it)")
    when = (f"sessions booted since {focus.modified_at:%Y-%m-%d %H:%M}"
            if focus.modified_at is not None else "no session (no modification time)")
    if focus.project is not None:
        return f"focus: {focus.project} for {when}; older sessions: unknown (no history)"
    if focus.projects:
        return (f"focus: names {len(focus.projects)} projects ({', '.join(focus.projects)}):"
                " ambiguous, decides no sprint")
    return "focus: names no known project, decides no sprint"


PRINTED_COLUMNS = ["sprint_id", "context_load", "stale_ratio", "breath_depth", "exhale_rate"]


def printed_metrics(con) -> pd.DataFrame:
    """The breath metrics the broker printed at each sprint's last expire block (SPEC §4.4).

    Ratios as fractions (the block's ``X%`` over 100); one row per sprint with a block.
    """
    from brainlab.sim.transcript_sprints import has_tables

    if not has_tables(con, "broker_blocks"):
        return pd.DataFrame(columns=PRINTED_COLUMNS)
    return con.execute(
        "SELECT sprint AS sprint_id, context_load, stale_ratio, breath_depth, exhale_rate"
        " FROM broker_blocks WHERE kind = 'expire'"
        " QUALIFY row_number() OVER (PARTITION BY sprint ORDER BY ts DESC NULLS LAST,"
        " source_file DESC, line DESC) = 1").df()


def hint(scope: Scope) -> str:
    """What would make skipped sprints replayable, or ''."""
    skipped = scope.skipped
    if skipped.get("no declared contract"):
        return (f": {skipped['no declared contract']} sprint(s) have only a contract inferred"
                " from the directory layout: add projets/<project>.md (SPEC §4.1) and"
                " `brainlab ingest sprints BRAIN`, or replay them with --contracts inferred")
    if skipped.get("declared contract"):
        return ": replay the declared contracts with --contracts declared"
    return (": the broker runs for multi-agent sprints of use-brain/build-brain sessions with a"
            " project (seeds/context-broker.md.txt:241-242)")


def exclusions(con) -> pd.DataFrame:
    """The files the broker's inhale blocks excluded explicitly (seed "Exclusions explicites").

    One row per sprint and file: sprint_id, file, reason.
    """
    from brainlab.sim.transcript_sprints import has_tables

    if not has_tables(con, "broker_block_files"):
        return pd.DataFrame(columns=["sprint_id", "file", "reason"])
    return con.execute(
        "SELECT sprint AS sprint_id, path AS file, any_value(reason) AS reason"
        " FROM broker_block_files WHERE action = 'exclude' AND path IS NOT NULL"
        " GROUP BY sprint, path ORDER BY sprint, path").df()
