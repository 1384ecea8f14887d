"""A null store for checking tuning: outcomes that carry no information about the signals.

:func:`shuffle_figures` moves each metabolism log's figures (tokens, peak, close, duration,
commits, todos, the v2 inputs, the logged health and saturation, handoff and cold start), as
one block, to another session of the same category (SPEC §2.2), chosen by a seeded
permutation. Dates, types, modes and projects stay, so the ratio and its category mix stay
what they were; what a session's figures say about the next session's health is gone. On
such a store ``brainlab tune sessions`` must keep the defaults (tests/test_tune_sessions.py,
benchmarks/bench_tuning_null.py measures the rate over many seeds).

The figures moved are the logged ones: use a store of brain files only (``brainlab ingest
brain``); transcripts would keep their own measured figures in place.
"""

from __future__ import annotations

import numpy as np

from brainlab.sim.tuning.scoring import DB
from brainlab.spec.vocabulary import category_of

FIGURES = ("tokens_used", "context_peak_pct", "context_at_close", "duration_min", "commits",
           "todos_closed", "saturation_flag", "health_score", "kernel_files_touched",
           "adrs_written", "insights_captured", "handoff_level", "cold_start_kpi_pass",
           "is_incomplete", "missing_fields")


def shuffle_figures(db: DB, seed: int) -> int:
    """Permute the logs' figures within each category, in place; return the logs moved."""
    from brainlab.store import open_writer

    rng = np.random.default_rng(seed)
    con = open_writer(db, describe=False)
    try:
        logs = con.execute(f"SELECT source_file, type, {', '.join(FIGURES)} "
                           "FROM raw_metabolism_logs ORDER BY source_file").df()
        # a log without a type (NULL: a planted or hand-written breach) is "unknown"
        logs["category"] = [category_of(t if isinstance(t, str) else None) for t in logs["type"]]
        donor = np.arange(len(logs))
        for _category, rows in sorted(logs.groupby("category").indices.items()):
            donor[rows] = rng.permutation(rows)
        moved = logs[list(FIGURES)].iloc[donor].reset_index(drop=True)
        moved.insert(0, "source_file", logs["source_file"].to_numpy())
        con.register("moved_figures", moved[["source_file", *FIGURES]])
        assignments = ", ".join(f"{c} = m.{c}" for c in FIGURES)
        con.execute(f"UPDATE raw_metabolism_logs r SET {assignments} FROM moved_figures m "
                    "WHERE r.source_file = m.source_file")
        con.unregister("moved_figures")
        return len(logs)
    finally:
        con.close()
