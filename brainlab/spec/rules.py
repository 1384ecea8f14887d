"""The shape of a protocol-compliance rule: id, SPEC address, seed line, check, severity.

Pure data (part of the spec layer, no other brainlab import). The rules themselves are data
files: each one's entry is the ``rule:`` block of ``brainlab/store/models/rules/rule_<id>.yml``
beside its view ``rule_<id>.sql`` (one row per violation), loaded into these :class:`Rule`
tuples by :mod:`brainlab.store.rulebook`. The store writes them into the ``rule_catalogue``
table that the ``violations`` view joins; ``brainlab check`` reads them (through
:mod:`brainlab.rules.catalogue`) for ``--select``/``--ignore``, SARIF rule metadata and exit
codes. Nothing below the store needs the rule list, so the spec layer holds no copy of it.
"""

from __future__ import annotations

from dataclasses import dataclass

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
