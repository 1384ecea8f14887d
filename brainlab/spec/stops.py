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
