"""Regulator rule sets as data: every limit of SPEC §6.5 and the stop-table policy of SPEC §6.3.

A rule set is a frozen :class:`RegulatorRules`; ``default`` holds the SPEC values. A rule
specification string names a variant and/or ``key=value`` overrides, comma-separated and
applied left to right on top of ``default``: ``"max_relance_same_stop=2"``,
``"lenient,max_reviews=4"``. Part of the spec layer: the replays (brainlab.sim), the
synthetic circuits and the tuning notebooks read it from here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from brainlab.spec.errors import ConfigError
from brainlab.spec.values import parse_overrides, replace_fields

# SPEC §6.5 admission rules: the reason a refused decision carries in its `admission` event.
ADMISSION_REASONS: tuple[str, ...] = (
    "hors-titre",  # a component is outside the title
    "developpeur-avant-testwriter",  # a developer is launched before its testwriter
    "critere-sans-depuis-testwriter",  # description gained a criterion, not RELANCE --depuis tw
    "fait-faux",  # a listed fact is false
    "repetition-sans-fait-nouveau",  # repeats the previous RELANCE on the same stop, no new fact
)
# SPEC §6.5 "a missing or malformed decision is asked for again once": the admission reason
# brainlab's journal uses for that case (not a refusal: it has its own limit).
FICHE_REASON = "fiche-absente"

# SPEC §6.3 stop-table policy: the stop kinds (`kind` field of a `stop` event) the circuit
# decides itself, and the decision it applies. Anything else goes to a fresh regulator.
DEFAULT_TABLE_POLICY: tuple[tuple[str, str], ...] = (
    ("a-repasser", "RELANCE_REPRENDRE"),  # "to replay" is replayed at rest
    ("rouge-autre-composant", "RELANCE_DEPUIS"),  # to that component's developer
    ("renvoi-testwriter", "RELANCE_DEPUIS"),  # referral to the testwriter
    ("composant-ajoute", "RELANCE_DEPUIS"),  # a component added to the title
)


@dataclass(frozen=True)
class RegulatorRules:
    """One regulator rule set: SPEC §6.5 limits and admission rules, SPEC §6.3 table policy."""

    # SPEC §6.5: three RELANCE in a row on the same stop; when it comes back, the circuit ends.
    max_relance_same_stop: int = 3
    # SPEC §6.5: after a refusal the regulator is resumed once; the next refusal goes up.
    max_refusals: int = 1
    # SPEC §6.5: a missing or malformed decision is asked for again once.
    max_fiche_reasks: int = 1
    # SPEC §6.5: the questioner reviews a decision for up to 4 rounds; a 4th round still
    # questioned becomes a question to the supervisor (18).
    max_question_rounds: int = 4
    # SPEC §6.5: a 3rd rendered review stops the circuit (16).
    max_reviews: int = 3
    # SPEC §6.5: the regulator rules on at most three stops per arbitration (same step and
    # component); the next one goes to the supervisor.
    max_regulator_stops: int = 3
    # SPEC §6.3 / §6.5: a stop back with no new fact goes up (it ends the relaunch chain).
    escalate_without_new_fact: bool = True
    # SPEC §6.5 admission rules, each one switchable.
    refuse_hors_titre: bool = True
    refuse_developpeur_avant_testwriter: bool = True
    refuse_critere_sans_depuis_testwriter: bool = True
    refuse_fait_faux: bool = True
    refuse_repetition_sans_fait_nouveau: bool = True
    # SPEC §6.3 table policy: the stop kinds the circuit decides without a regulator, joined
    # by "+" (so it fits in a comma-separated rule specification); "none" for an empty table.
    table_policy: str = "+".join(kind for kind, _ in DEFAULT_TABLE_POLICY)

    def enabled_refusal_reasons(self) -> frozenset[str]:
        """The admission reasons (SPEC §6.5) this rule set enforces."""
        return frozenset(
            reason for reason in ADMISSION_REASONS
            if getattr(self, "refuse_" + reason.replace("-", "_"))
        )

    def table_kinds(self) -> frozenset[str]:
        """The stop kinds the circuit's own table decides (SPEC §6.3)."""
        return frozenset(k.strip() for k in self.table_policy.split("+")
                         if k.strip() and k.strip() != "none")

    def replace(self, **changes) -> RegulatorRules:
        """Return a copy with some fields changed; unknown names or bad types raise ConfigError."""
        return replace_fields(self, "regulator rule", changes, non_negative=True)

    def changes(self) -> dict:
        """The fields that differ from the SPEC defaults."""
        base = RegulatorRules()
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) != getattr(base, f.name)}


# Named variants: small, documented departures from the SPEC defaults.
VARIANTS: dict[str, dict] = {
    "default": {},
    # Cut loops earlier: two relaunches on a stop, no retry after a refusal, 3 questioning rounds.
    "strict": {"max_relance_same_stop": 2, "max_refusals": 0, "max_question_rounds": 3},
    # Let loops run longer before waking the supervisor.
    "lenient": {"max_relance_same_stop": 4, "max_refusals": 2, "max_question_rounds": 5,
                "max_reviews": 4, "max_regulator_stops": 4},
}


def parse_rules(spec: str, base: RegulatorRules | None = None) -> RegulatorRules:
    """Build a rule set from ``"variant,key=value,..."`` (items applied left to right).

    ``base``: the rule set the items apply to (default: the SPEC values; the CLI passes the
    ``[regulator]`` table of the user's settings file).
    """
    rules = base or RegulatorRules()
    items = [item.strip() for item in spec.split(",") if item.strip()] if spec else []
    for item in items:
        if "=" in item:
            rules = rules.replace(**parse_overrides([item]))
        elif item in VARIANTS:
            rules = rules.replace(**VARIANTS[item])
        else:
            raise ConfigError(
                f"unknown regulator rule set {item!r}; variants: {sorted(VARIANTS)},"
                " or key=value"
            )
    return rules


def named_rule_sets(specs: list[str] | tuple[str, ...],
                    base: RegulatorRules | None = None) -> dict[str, RegulatorRules]:
    """Parse several specifications into ``{label: rules}`` (label = the spec as given)."""
    out: dict[str, RegulatorRules] = {}
    for spec in specs or ["default"]:
        label = spec.strip() or "default"
        if label in out:
            raise ConfigError(f"rule set {label!r} given twice")
        out[label] = parse_rules(label, base)
    return out
