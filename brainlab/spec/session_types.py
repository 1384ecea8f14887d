"""Sets of session types the protocol names in its boot (SPEC §2.3) and close (SPEC §2.4) rules.

Each set is written once here. The store writes them as the ``session_type_sets`` lookup
table (one row per set and type) that the boot/close rules join
(store/models/rules/rule_rows_boot_close.sql); the synthetic brain's boot/close plants read the same tuples.
"""

from __future__ import annotations

# SPEC §2.3 layer 3 (projets/X + todo/X) is loaded at boot for these types only.
PROJECT_LAYER_TYPES: tuple[str, ...] = ("work", "deploy", "debug")
# SPEC §2.4 close step 2: the todo-scribe runs for these types (and a brainstorm that
# created to-dos).
TODO_SCRIBE_TYPES: tuple[str, ...] = ("work", "sprint", "debug")
# SPEC §2.4 close step 4: the coach's report (blocking) for these types.
COACH_TYPES: tuple[str, ...] = ("brain", "work", "sprint", "debug", "coach")

# seeds/context-broker.md.txt:32-37: the broker is never invoked in these modes (session
# types or declared modes; one list, brainlab.spec.broker.FORBIDDEN_MODES).
from brainlab.spec.broker import FORBIDDEN_MODES as BROKER_FORBIDDEN  # noqa: E402

# set name (the `set_name` column of session_type_sets) -> (SPEC address, types)
SESSION_TYPE_SETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "project-layer": ("§2.3", PROJECT_LAYER_TYPES),
    "todo-scribe": ("§2.4", TODO_SCRIBE_TYPES),
    "coach": ("§2.4", COACH_TYPES),
    "broker-forbidden": ("§4.2", BROKER_FORBIDDEN),
}
