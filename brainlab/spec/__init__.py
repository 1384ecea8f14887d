"""The spec layer: every protocol fact written once, each citing its SPEC address.

It imports nothing else of brainlab, and every other package may import it: the vocabulary
(``vocabulary``: session types, categories, claim TTLs, workspace files), session modes
(``modes``) and how a context peak reads against a mode budget (``budget_rule``), the
compliance rule catalogue (``rules``), the SPEC §6.2 stop table (``stops``),
the session-type sets of SPEC §2.3/§2.4 (``session_types``), the metabolism and breath
thresholds (``thresholds``), the regulator rule sets (``regulator``), the one typed
``key=value`` validator (``values``) and the exceptions they raise (``errors``). The store
writes the tabular facts as lookup tables that the SQL views join.
"""
