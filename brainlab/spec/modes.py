"""Session modes as data: ADR-019 soft locks, their perimeters, redirections and SPEC §3.3 budgets.

Two vocabularies share the word "mode" in the protocol and both are declared as ``+<mode>``
in a first message: the ADR-019 soft locks (``+navigate``, ``+kernel``: a mode file
``modes/brain-<mode>.md`` loaded at boot, a perimeter the session refuses to leave) and the
metabolism's working modes (``prod``, ``sprint``, ``conserve``...: a context budget, SPEC §3.3).
Both are listed here once (spec layer; was ``brainlab/modes.py``), each row citing the file
and line it comes from; the store writes them as lookup tables (``session_modes``,
``mode_perimeters``, ``mode_budgets``) that the mode rules (store/models/rules/rule_mod*.sql) join,
and :mod:`brainlab.transcripts.marks` reads the redirection phrases. Paths ``ref:`` are
under ``reference/cortex-template/``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from brainlab.spec import budget_rule

ADR019 = "seeds/ADR-019-session-modes.md.txt"
TEMPLATE = "ref:Tetardtek__Cortex-Template"
NAVIGATE_FILE = f"{TEMPLATE}/modes/brain-navigate.md"
KERNEL_FILE = f"{TEMPLATE}/modes/brain-kernel.md"
METABOLISM_SPEC = f"{TEMPLATE}/profil/metabolism-spec.md"


@dataclass(frozen=True)
class Mode:
    """One declarable ``+<mode>``: what kind it is and the file the boot loads for it."""

    name: str
    kind: str  # soft-lock (ADR-019, mode file) | flag (boot flag) | working (metabolism mode)
    mode_file: str | None  # path in the brain the boot must read, e.g. modes/brain-navigate.md
    source: str  # file:line that defines it


MODES: tuple[Mode, ...] = (
    Mode("navigate", "soft-lock", "modes/brain-navigate.md", f"{NAVIGATE_FILE}:5"),
    Mode("kernel", "soft-lock", "modes/brain-kernel.md", f"{KERNEL_FILE}:17"),
    Mode("coach", "flag", None, f"{TEMPLATE}/agents/coach.md:179"),
    Mode("deploy", "flag", None, f"{TEMPLATE}/agents/session-orchestrator.md:161"),
    Mode("debug", "flag", None, f"{TEMPLATE}/agents/session-orchestrator.md:161"),
    *(Mode(name, "working", None, f"{METABOLISM_SPEC}:{line}") for name, line in (
        ("prod", 15), ("dev", 15), ("sprint", 15), ("brainstorm", 15), ("conserve", 123),
        ("review", 125))),
)
MODE_NAMES = frozenset(m.name for m in MODES)
SOFT_LOCK_MODES = frozenset(m.name for m in MODES if m.kind == "soft-lock")

# Brain files (as opposed to project files): what +navigate may still write
# (brain-navigate.md:37-42: agents, ADRs, lexique, decisions, modes, todo, handoff, bilan).
BRAIN_PATHS = (r"(^|/)(agents|profil|modes|decisions|adrs?|todo|handoffs|progression|claims"
               r"|contexts|wiki|workspace|intentions)/|(^|/)(KERNEL|PATHS|focus|now"
               r"|BRAIN-INDEX|lexique)\.md$")
# brain-kernel.md:34-44: files a +kernel session must not modify.
KERNEL_PATHS = (r"(^|/)(KERNEL\.md|PATHS\.md|brain-compose(\.local)?\.ya?ml|\.claude/CLAUDE\.md"
                r"|agents/(coach|coach-boot|secrets-guardian|helloWorld)\.md)$")


@dataclass(frozen=True)
class Perimeter:
    """One thing a mode refuses: an action on paths matching ``refused`` but not ``allowed``."""

    mode: str
    action: str  # write (Edit/Write/MultiEdit/NotebookEdit) | commit (Bash git commit)
    refused: str | None  # regex on the tool call's file path; None = every call
    allowed: str | None  # regex of paths the mode still allows; None = no exception
    source: str


PERIMETERS: tuple[Perimeter, ...] = (
    Perimeter("navigate", "write", None, BRAIN_PATHS, f"{NAVIGATE_FILE}:27"),
    Perimeter("navigate", "commit", None, None, f"{TEMPLATE}/agents/helloWorld.md:556"),
    Perimeter("kernel", "write", KERNEL_PATHS, None, f"{KERNEL_FILE}:23"),
)


@dataclass(frozen=True)
class Budget:
    """SPEC §3.3 mode budget: the context peak a working mode accepts (NULL = free)."""

    mode: str
    watch_pct: float | None  # above it: watch (info)
    max_pct: float | None  # at or above it: over budget (warning)
    min_commits: int | None  # the max is acceptable when commits exceed this
    source: str


BUDGETS: tuple[Budget, ...] = (
    Budget("prod", 60, None, None, f"{METABOLISM_SPEC}:121"),
    Budget("sprint", None, 80, 5, f"{METABOLISM_SPEC}:122"),
    Budget("conserve", None, 40, None, f"{METABOLISM_SPEC}:123"),
    Budget("brainstorm", None, None, None, f"{METABOLISM_SPEC}:124"),
)

def budget_tone(pct: float, budget: Budget, commits: int | None) -> str:
    """``over``, ``watch`` or ``ok`` against ``budget`` (:mod:`brainlab.spec.budget_rule`)."""
    return budget_rule.budget_tone(pct, budget.watch_pct, budget.max_pct, budget.min_commits,
                                   commits)


def budget_of_mode(mode: str | None) -> Budget | None:
    """The SPEC §3.3 budget of a declared working mode (any case); None without one."""
    if not mode:
        return None
    return next((b for b in BUDGETS if b.mode == mode.lower()), None)


# Redirections (ADR-019 "soft lock": refuse and redirect to a dedicated session), French as
# the mode files word them and English; id -> regexes on the assistant's LOWERCASED text (the
# text is not kept). Each regex starts with a literal, so re scans for it at C speed.
REDIRECTIONS: dict[str, tuple[str, ...]] = {
    "adr019-autre-session": (r"ouvr\w{0,6} une (?:autre|nouvelle) session",),  # ADR-019 :84
    "navigate-fenetre-dediee": (r"ouvr\w{0,6} une fen[êe]tre d[ée]di[ée]e",  # navigate.md:33
                                r"appartient [àa] une session projet"),
    "scope-escalade": (r"dépasse le (?:scope|périmètre)",  # helloWorld.md:583
                       r"depasse le (?:scope|perimetre)"),
    "kernel-sudo": (r"pour l'[ée]diter\s{0,3}:\s{0,3}`?brain boot sudo",),  # kernel.md:26
    "en-open-another-session": (r"open (?:another|a new|a separate|a dedicated) "
                                r"(?:claude )?(?:session|window|conversation)",),
    "en-belongs-elsewhere": (
        r"belongs (?:in|to) a (?:dedicated|separate|project|different) session",
        r"outside the (?:scope|perimeter) of (?:the |this )?\+?\w{1,20} (?:mode|session)",
        r"beyond the (?:scope|perimeter) of (?:the |this )?\+?\w{1,20} (?:mode|session)"),
}
REDIRECTION_PATTERNS: tuple[tuple[str, re.Pattern], ...] = tuple(
    (key, re.compile(rx)) for key, regexes in REDIRECTIONS.items() for rx in regexes)
# cheap substring prefilter: a text holding none of these cannot match (case-sensitive `in`
# tests, no lowercase copy: a phrase in capitals only is missed, a price paid knowingly)
REDIRECTION_HINTS = ("ession", "cope", "enêtre", "enetre", "érim", "erim", "sudo", "indow",
                     "onversation")
