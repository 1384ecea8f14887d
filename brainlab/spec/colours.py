"""One colour per meaning, for every chart of the notebooks and the report (issue 44 item 5).

A good outcome is green, a bad one red, a state that waits for a human amber, what was not
judged grey, wherever it is drawn: ``integrated`` was red in notebook 03 and green in 04
before this table. :mod:`brainlab.viz` builds its altair scales from here
(:func:`brainlab.viz.theme.scale`); a chart never writes a colour of a meaning itself.
"""

from __future__ import annotations

GOOD = "#2e8b57"  # green: the outcome the protocol wants
BAD = "#c44e52"  # red: the outcome it exists to prevent
WATCH = "#e0a100"  # amber: between the two, or waiting for a human
NEUTRAL = "#8c8c8c"  # grey: not judged, open, no data

# SPEC §6.1/§6.6: how a ticket's circuit ends (sources/circuits.OUTCOMES), and "open".
OUTCOME = {"integrated": GOOD, "escalated": WATCH, "ended": BAD, "open": NEUTRAL}

# brainlab's session label (store/models/marts/session_outcomes.sql): bad, good, unlabelled.
SESSION_LABEL = {"good": GOOD, "bad": BAD, "unlabelled": NEUTRAL}

# SPEC §3.3 ratio bands.
RATIO_BAND = {"healthy": GOOD, "watch": WATCH, "narcissistic-loop": BAD}

# Compliance severities (rules catalogue): error breaks a rule, warning, info waits for a human.
SEVERITY = {"error": BAD, "warning": WATCH, "info": "#8172b2"}

# Logged against measured (docs/measured.md): the audit's verdict per field.
AUDIT_FLAG = {"within tolerance": GOOD, "disagrees": BAD, "not compared": NEUTRAL}

# SPEC §2.2 metabolism categories: three kinds of work, none good or bad, so no green/red.
CATEGORY = {"use-brain": "#2f7ed8", "build-brain": "#d9822b", "explore-brain": "#7b5ea7",
            "none": NEUTRAL, "unknown": "#b0b0b0"}

# SPEC §4.3 expire: what the broker does with a loaded source after a sprint.
EXPIRE_ACTION = {"libérer": GOOD, "garder": WATCH, "never referenced": BAD}

MEANINGS = {"outcome": OUTCOME, "session_label": SESSION_LABEL, "ratio_band": RATIO_BAND,
            "severity": SEVERITY, "audit_flag": AUDIT_FLAG, "category": CATEGORY,
            "expire_action": EXPIRE_ACTION}
