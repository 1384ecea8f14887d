"""The protocol-compliance rule catalogue as data: id, SPEC address, seed line, check, severity.

Pure data (part of the spec layer, no other brainlab import): the store writes it into the
``rule_catalogue`` table that the ``violations`` view joins, and ``brainlab check`` reads it
(through :mod:`brainlab.rules.catalogue`) for ``--select``/``--ignore``, SARIF rule metadata
and exit codes. Each rule's SQL is the view named in ``view``
(brainlab/store/views/8*_rules*.sql); the view returns the rule's evidence, one row per
violation.
"""

from __future__ import annotations

from dataclasses import dataclass

from brainlab.spec.modes import ADR019, METABOLISM_SPEC

SEVERITIES = ("error", "warning", "info")
SUBJECT_KINDS = ("session", "sprint", "agent-sprint", "workspace", "claim", "ticket")


@dataclass(frozen=True)
class Rule:
    """One protocol rule: where it comes from, what it checks, how bad a breach is."""

    id: str  # stable id printed by `brainlab check` (SES001, BRK001, ...)
    name: str  # short kebab-case name
    spec: str  # SPEC address, e.g. "§4.2"
    seed: str  # the seed line it comes from: "seeds/<file>:<line>"
    subject_kind: str  # one of SUBJECT_KINDS
    severity: str  # one of SEVERITIES; an error makes `brainlab check` exit 1
    checks: str  # what the rule checks, one sentence
    evidence: str  # what the evidence JSON of a violation holds
    needs_transcripts: bool = False  # reads cc_* tables: judged only with `brainlab check --db`
    rows_view: str | None = None  # a view (column `rule`) holding this rule's rows and others'

    @property
    def source(self) -> str:
        """The relation ``violations`` reads this rule from (its view, or its rows_view)."""
        return self.rows_view or self.view

    @property
    def view(self) -> str:
        """The SQL view that returns this rule's violations."""
        return "rule_" + self.id.lower()


ORCH = "seeds/session-orchestrator.md.txt"
BROKER = "seeds/context-broker.md.txt"
WORKSPACE = "seeds/workspace-spec.md.txt"
CIRCUIT = "seeds/circuit-skills-redacteur-referent-regulateur.md.txt"

# the transcript rules of views/82_rules_boot_close.sql, computed together (shared sub-views)
_TRANSCRIPT_ROWS = {"needs_transcripts": True, "rows_view": "rule_rows_boot_close"}

RULES: tuple[Rule, ...] = (
    Rule("SES001", "unknown-session-type", "§2.2", f"{ORCH}:56", "session", "warning",
         "A metabolism log or claim declares a session type that SPEC §2.2 does not know.",
         "type, where (log or claim)"),
    Rule("CLO001", "close-without-metabolism-log", "§2.4", f"{ORCH}:299", "session", "warning",
         "A closed claim has no metabolism log: close step 1 (metabolism-scribe, always "
         "first) left nothing in progression/metabolism/.",
         "claim status, closed_at"),
    Rule("CLO002", "claim-not-closed", "§2.4", f"{ORCH}:364", "session", "warning",
         "A session wrote its metabolism log but its BSI claim is missing or not closed "
         "(close step 5, always last).",
         "claim status (NULL when no claim file)"),
    Rule("CLM001", "stale-claim", "§2.6", f"{ORCH}:364", "claim", "warning",
         "An open claim is past its TTL at the brain's clock (its type's TTL, default 4 h).",
         "type, opened_at, ttl_hours, expires_at, as_of"),
    Rule("MET001", "incomplete-metabolism-log", "§3.1", f"{ORCH}:301", "session", "warning",
         "A metabolism log lacks a field the scribe must write (tokens_used, context_peak, "
         "context_at_close, duration_min, commits).",
         "missing fields"),
    Rule("BRK001", "broker-too-many-sources", "§4.2", f"{BROKER}:96", "agent-sprint", "error",
         "The broker's source map gives one agent more than 2 sources (escalate to "
         "tech-lead instead).",
         "sources loaded, count"),
    Rule("BRK002", "broker-boot-file-reloaded", "§4.2", f"{BROKER}:97", "agent-sprint", "error",
         "The broker loads a file the session already has in context since boot "
         "(contexts/session-<type>.yml).",
         "path, session type, boot layer"),
    Rule("BRK003", "broker-stable-domain-kept", "§4.3", f"{BROKER}:106", "sprint", "warning",
         "The expire block keeps (GARDER) a source although no planned agent of the sprint "
         "has an open to-do: a stable domain is released.",
         "path, open to-dos of the sprint's agents"),
    Rule("BRK004", "broker-load-never-referenced", "§4.2", f"{BROKER}:95", "agent-sprint",
         "warning",
         "A source loaded for an agent that the agent never read, searched or edited in the "
         "sprint: loaded 'au cas où'.",
         "path, the agent's references"),
    Rule("WSP001", "workspace-auto-expired", "§5", f"{WORKSPACE}:80", "workspace", "warning",
         "A workspace with 'archive: auto' is past its TTL (last decision + ttl) and still "
         "present: it should be archived to handoffs/ and deleted.",
         "last decision date, ttl_days, expired_on, as_of"),
    Rule("WSP002", "workspace-keep-waiting", "§5", f"{WORKSPACE}:85", "workspace", "info",
         "A workspace with 'archive: keep' is past its TTL: it waits for a human decision.",
         "last decision date, ttl_days, expired_on, as_of"),
    Rule("WSP003", "workspace-retention-expired", "§5", f"{WORKSPACE}:82", "workspace",
         "warning",
         "A workspace with 'archive: 30d|90d' is past its TTL plus its retention and still "
         "present.",
         "last decision date, ttl_days, retention_days, expired_on, as_of"),
    Rule("WSP004", "workspace-file-not-allowed", "§5", f"{WORKSPACE}:108", "workspace", "error",
         "A workspace holds a file other than README.md, ram.md, log.md, feedback.md "
         "(custom sections are forbidden).",
         "file name"),
    Rule("WSP005", "workspace-readme-too-long", "§5", f"{WORKSPACE}:53", "workspace", "warning",
         "README.md has more than 10 lines.", "lines"),
    Rule("WSP006", "workspace-ram-too-long", "§5", f"{WORKSPACE}:54", "workspace", "warning",
         "ram.md has more than 50 active lines.", "active lines"),
    Rule("WSP007", "workspace-malformed-decision", "§5", f"{WORKSPACE}:55", "workspace",
         "warning",
         "A log.md line is not '<date time> | <question> | choisi : <choice> | raison : "
         "<reason>'.", "the line (truncated)"),
    Rule("WSP008", "workspace-lifecycle-missing", "§5", f"{WORKSPACE}:77", "workspace",
         "warning",
         "README.md has no README or no known archive value (auto, keep, 30d, 90d, "
         "permanent) under ## Lifecycle.", "archive value"),
    Rule("WSP009", "workspace-feedback-read-in-sprint", "§5", f"{WORKSPACE}:56", "workspace",
         "warning",
         "A transcript reads a workspace's feedback.md while its sprint is active (up to the "
         "last decision in log.md): feedback.md is never read during a sprint. Needs "
         "transcripts (brainlab check --db DB).",
         "reading agent, transcript time, last decision date", needs_transcripts=True),
    Rule("CIR001", "circuit-stop-code-mismatch", "§6.2", f"{CIRCUIT}:405", "ticket", "error",
         "A circuit stop's name and exit code disagree with the stop table (sans-livraison "
         "15, relecture-arret 16, integration 17, question 18, hors-portee 19, besoin 20, "
         "references 23, controles none).", "name, code, expected code"),
    Rule("CIR002", "circuit-code-before-tests", "§6.1", f"{CIRCUIT}:404", "ticket", "error",
         "A ticket reaches step 2.3 (Code, developer) for a component that had no step 2.1 "
         "(Tests, testwriter) before it: the developer works without a red test "
         "(SPEC §6.1 order, §6.5 'a developer launched before its testwriter').",
         "component, step 2.3 time"),
    # Boot layers, close sequence, read rights (issue 14, transcript rules; views in
    # brainlab/store/views/82_rules_boot_close.sql). They judge brain sessions only: a
    # transcript whose first prompt says `brain <type>` or that is matched to a metabolism log.
    Rule("BOT001", "boot-l0-not-read", "§2.3", f"{ORCH}:236", "session", "warning",
         "A brain session did not read a layer-0 file of its contexts/session-<type>.yml "
         "(KERNEL, PATHS...: always loaded) before its first productive action.",
         "session type, L0 files missing, first productive action time", **_TRANSCRIPT_ROWS),
    Rule("BOT002", "boot-project-file-outside-work", "§2.3", f"{ORCH}:245", "session",
         "warning",
         "A brain session whose type is not work, deploy or debug read a project file "
         "(projets/X, todo/X) at boot that its contexts/session-<type>.yml does not list: "
         "layer 3 is for work/deploy/debug only.",
         "session type, files read at boot", **_TRANSCRIPT_ROWS),
    Rule("BOT003", "boot-context-over-target", "§2.3", f"{ORCH}:233", "session", "info",
         "The context at a brain session's first productive action exceeds its type's "
         "context_target.total_boot (contexts/session-<type>.yml) by more than the tolerance "
         "(5 points by default; macro rule_bot003_for).",
         "context tokens and %, target %, tolerance", **_TRANSCRIPT_ROWS),
    Rule("CLO003", "close-metabolism-scribe-not-first", "§2.4", f"{ORCH}:299", "session",
         "warning",
         "In a brain session's close, another close agent (todo-scribe, scribe, coach) runs "
         "before the metabolism-scribe, or the metabolism-scribe never runs.",
         "close agents in order", **_TRANSCRIPT_ROWS),
    Rule("CLO004", "close-todo-scribe-missing", "§2.4", f"{ORCH}:316", "session", "warning",
         "A work, sprint or debug session (or a brainstorm that created to-dos) closes "
         "without the todo-scribe.",
         "session type, close agents, to-dos created", **_TRANSCRIPT_ROWS),
    Rule("CLO005", "close-scribe-missing", "§2.4", f"{ORCH}:327", "session", "warning",
         "A significant session (a commit, an agent file written, a spec changed) closes "
         "without the scribe.",
         "commits, agents written, specs changed, close agents", **_TRANSCRIPT_ROWS),
    Rule("CLO006", "close-coach-missing", "§2.4", f"{ORCH}:335", "session", "warning",
         "A brain, work, sprint, debug or coach session closes without the coach's report.",
         "session type, close agents", **_TRANSCRIPT_ROWS),
    Rule("CLO007", "close-claim-not-last", "§2.4", f"{ORCH}:364", "session", "warning",
         "A brain session's close has no BSI claim close (claims/<sess>.yml written, or "
         "bsi-claim close / 'bsi: close claim' commit) after its last close agent.",
         "last close agent and time, last claim close time", **_TRANSCRIPT_ROWS),
    Rule("WSP010", "workspace-ram-read-by-coach-scribe", "§5", f"{WORKSPACE}:65", "workspace",
         "warning",
         "The coach-scribe reads a workspace's ram.md: the read-rights table gives it log.md "
         "and feedback.md only.",
         "reader, transcript time, session", **_TRANSCRIPT_ROWS),
    Rule("WSP011", "workspace-feedback-read-before-ttl", "§5", f"{WORKSPACE}:67",
         "workspace", "warning",
         "The coach-scribe reads a workspace's feedback.md after the sprint but before the "
         "workspace's TTL expired (it reads feedback 'après TTL'; during the sprint see "
         "WSP009).",
         "reader, transcript time, last decision date, expired_on", **_TRANSCRIPT_ROWS),
)

# Modes (SPEC §2.7, ADR-019), mode budgets (SPEC §3.3) and transcript session types (SPEC
# §2.2): views/81_rules_modes.sql; modes, perimeters and budgets are data in brainlab/spec/modes.py.
# They read transcripts (brainlab check --db DB), except BUD001-002 which also read logs.
MODE_BUDGETS = METABOLISM_SPEC
RULES += (
    Rule("MOD001", "mode-declared-late", "§2.7", f"{ADR019}:78", "session", "warning",
         "A brain session declares a +mode in a later prompt instead of the first message.",
         "mode, prompt number, the first message's mode", needs_transcripts=True),
    Rule("MOD002", "unknown-mode", "§2.7", f"{ADR019}:81", "session", "warning",
         "A brain session declares a +mode that no mode file (modes/brain-<mode>.md), boot "
         "flag or metabolism working mode defines (table session_modes).", "mode, prompt number",
         needs_transcripts=True),
    Rule("MOD003", "mode-file-not-read", "§2.7", f"{ADR019}:81", "session", "warning",
         "A session declares a mode with a mode file but its main chain does not Read "
         "modes/brain-<mode>.md before its first productive action (protocol_calls: a write "
         "that is not bookkeeping, a non-BSI commit).",
         "mode, mode file, first productive action, read time", needs_transcripts=True),
    Rule("MOD004", "mode-perimeter-breached", "§2.7", f"{ADR019}:73", "session", "error",
         "Work outside the declared mode's perimeter carried out anyway (table "
         "mode_perimeters: +navigate writes a project file or commits; +kernel edits a "
         "kernel file) instead of redirecting to a dedicated session.",
         "mode, action, count, paths, perimeter source", needs_transcripts=True),
    Rule("BUD001", "mode-over-budget", "§3.3", f"{MODE_BUDGETS}:122", "session", "warning",
         "A session's context peak reaches its working mode's budget (sprint 80% unless "
         "commits > 5, conserve 40%; table mode_budgets), on the best basis.",
         "mode, context_peak_pct, commits, max_pct, basis"),
    Rule("BUD002", "mode-past-watch-line", "§3.3", f"{MODE_BUDGETS}:121", "session", "info",
         "A prod session's context peak reaches the 60% watch line (table mode_budgets).",
         "mode, context_peak_pct, watch_pct, basis"),
    Rule("SES002", "unknown-session-type-declared", "§2.2", f"{ORCH}:56", "session",
         "warning",
         "A transcript declares a session type SPEC §2.2 does not know with the explicit "
         "trigger `brain boot [mode] <type>` (SES001 covers logs and claims).",
         "type, prompt number", needs_transcripts=True),
)


BY_ID: dict[str, Rule] = {rule.id: rule for rule in RULES}
