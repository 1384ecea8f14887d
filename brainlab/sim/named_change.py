"""``--change-date DAY --to X``: the day a change named by the user took effect (issue 41 item 6).

Both replays' change checks (:mod:`brainlab.sim.broker_checks`, :mod:`brainlab.sim.regulator_checks`)
take the same pair of options; this reads it once, so both refuse the same way.
"""

from __future__ import annotations

import pandas as pd

from brainlab.common.errors import SimulationError


def change_day(day: str | None, to: str | None, pair: str) -> pd.Timestamp | None:
    """The day ``--change-date`` names (both options or neither), or None when neither is given.

    ``pair`` says what the two options name, for the message when one comes alone.
    """
    if day is None and to is None:
        return None
    if day is None or to is None:
        raise SimulationError(f"--change-date and --to go together: {pair}")
    try:
        return pd.Timestamp(day)
    except ValueError as exc:
        raise SimulationError(f"--change-date must be a day (YYYY-MM-DD), got {day!r}") \
            from exc
