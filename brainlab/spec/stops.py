"""SPEC §6.2 stop table: the circuit's stop names and their exit codes, written once.

The circuit journal parser (sources/circuits.py) validates stop names against it, the store
writes it as the ``stop_codes`` lookup table that rule CIR001 joins, and the synthetic brain
plants a wrong code with it.
"""

from __future__ import annotations

# SPEC §6.2 stop table: name -> exit code (None: the stop has no code of its own, `controles`).
STOP_CODES: dict[str, int | None] = {
    "sans-livraison": 15, "relecture-arret": 16, "integration": 17, "question": 18,
    "hors-portee": 19, "besoin": 20, "references": 23, "controles": None,
}
# SPEC §6.2: the stops that carry an exit code of their own (every stop but `controles`).
CODED_STOPS: frozenset[str] = frozenset(name for name, code in STOP_CODES.items()
                                        if code is not None)

# SPEC §6.2 "raised when", one line per stop (the glossary and the notebooks print it).
STOP_MEANINGS: dict[str, str] = {
    "sans-livraison": "a developer session changed no file of its component",
    "relecture-arret": "a review finding has no valid recipient or is about a criterion, "
                       "or a 3rd review is rendered",
    "integration": "the integration script refuses, the queue ejects the branch, or CI is red",
    "question": "an escalation (MONTE) or an unresolved questioning reaches the supervisor",
    "hors-portee": "an agent declares itself blocked without referral to the testwriter",
    "besoin": "an agent asks a question (status BESOIN), or the reviewer asks about a "
              "hard-coded word",
    "references": "declared references changed outside the plan, uncovered files, failed "
                  "command, still red",
    "controles": "a red in a package outside the title at final pass, a red nobody owns, "
                 "findings to arbitrate",
}


def stop_label(name: str) -> str:
    """``"15 sans-livraison"``: a stop as every chart and table names it (code, then name)."""
    code = STOP_CODES.get(name)
    return name if code is None else f"{code} {name}"
