"""What a weekly report computes once per store instead of once per query or per week.

Measured (issue 28 item 8, docs/report.md §4): a render's CPU went to opening a connection per
query (~60 per week) and to the ``violations`` view (the union of every rule's view),
evaluated by three queries per week for ~1.2 CPU-s each on the demo store, though it holds
50 rows. Here:

- :func:`store` gives the render ONE read-only connection (``HeldReader``), closed by
  ``sections.finish``; on opening, :func:`materialize` computes the views that the week's
  ~140 queries expand again and again (:data:`MATERIALIZED`) once, as TEMP tables of that
  connection: DuckDB resolves a name to the temp schema first, so every later query and
  view reads those rows instead of re-planning and re-running the staging stack beneath
  (the SQL of a demo week: 3.6 CPU-s before, 1.1 + 0.25 to materialize after);
- :func:`once` memoizes a store-wide figure (every violation, the rule catalogue, the sprint
  replay, which tables hold rows) per store *state*: the database file and its WAL by path,
  size and modification time. ``report weekly --all`` renders its weeks in one kernel, so the
  second week on reuses them; any write to the store gives new figures.
- :func:`compliance_week` runs ``metrics.compliance.weekly``'s own SQL over the cached
  violations (registered as a relation), so the metric keeps one definition;

``BRAINLAB_REPORT_CACHE=0`` turns all of it off (every query opens its own connection): the
benchmark's baseline, and a way to rule the caches out when a figure looks wrong;
``BRAINLAB_REPORT_MATERIALIZE=0`` turns the temp tables alone off. (Computing the violations
in a thread beside the sections was tried at stop 16 and removed: on a quiet machine it gave
no wall time and cost 0.45-1.18 CPU-s, its connection materializing the views again.)

(Opening the store and evaluating the violations in a kernel thread beside its imports was
tried at stop 17 and removed too: on a quiet machine it gained no wall time, demo week
-0.10 s, corpus +0.01 s, for +0.07-0.20 CPU-s, and lost 0.25 s at load 3-6.)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from brainlab.store import HeldReader, query

if TYPE_CHECKING:  # the report kernel imports pandas in its warm-up; annotations only here
    import pandas as pd

T = TypeVar("T")
_MEMO: dict[tuple, object] = {}
MAX_STORES = 4  # states remembered; older ones are dropped
# DuckDB worker threads of a render's connection. A report's queries are small and spend
# their time planning: on the demo store one thread ran the sections in as much wall time as
# two, for less CPU (docs/report.md §4). BRAINLAB_REPORT_THREADS=0: DuckDB's default (all cores).
THREADS_ENV = "BRAINLAB_REPORT_THREADS"


def enabled() -> bool:
    """False when ``BRAINLAB_REPORT_CACHE=0`` (the benchmark's baseline)."""
    return os.environ.get("BRAINLAB_REPORT_CACHE", "1") != "0"


# Views a week's queries expand many times over (counted over the report's statements on
# the demo store and timed one by one: docs/report.md §4), each deterministic for a given
# store: no clock, and the session variables they read (cc_usage_keys, cc_measure_sessions)
# are never set on a render's connection. Created in the models' load order, so each one
# reads the ones before it already materialized.
MATERIALIZED = frozenset({
    "stg_metabolism_sessions", "cc_request_dedup", "cc_model_prices", "cc_agents",
    "cc_tool_calls", "otel_api_requests", "otel_metric_intervals", "otel_only_calls",
    "cc_requests", "cc_sessions", "measured_sessions", "session_matches", "sessions",
    "transcript_sessions", "usage_sessions", "metabolism_agent_loads",
})


def materialize(con) -> list[str]:
    """Create each view of :data:`MATERIALIZED` the store holds as a TEMP table of ``con``.

    The rows are the view's own (``SELECT *``), so every figure is unchanged. A view that
    fails to evaluate (a store of another schema) is left a view: the section that reads it
    then fails with the store's usual one-line error. Returns the names materialized.
    """
    from brainlab.store.connection import engine
    from brainlab.store.graph import ordered

    catalog = con.execute("SELECT current_database()").fetchone()[0].replace('"', '""')
    views = {name for (name,) in con.execute(
        "SELECT view_name FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal"
    ).fetchall()}
    done = []
    for model in ordered():
        if model.name in MATERIALIZED and model.name in views:
            try:
                con.execute(f'CREATE TEMP TABLE "{model.name}" AS '
                            f'SELECT * FROM "{catalog}".main."{model.name}"')
            except engine().Error:
                continue
            done.append(model.name)
    return done


def store(db: str | os.PathLike) -> os.PathLike:
    """The path a render passes to every query: a ``HeldReader`` (one connection) or a Path.

    The held connection materializes :data:`MATERIALIZED` when it opens (not with
    ``BRAINLAB_REPORT_MATERIALIZE=0``: the benchmark's baseline of that cut), on
    ``BRAINLAB_REPORT_THREADS`` DuckDB threads (1 unless told).
    """
    if not enabled():
        return Path(db)
    wanted = os.environ.get("BRAINLAB_REPORT_MATERIALIZE", "1") != "0"
    threads = int(os.environ.get(THREADS_ENV, "1") or 0) or None
    return HeldReader(db, setup=materialize if wanted else None, threads=threads)


def close(db: os.PathLike) -> None:
    """Close the render's connection: this process holds the file no more, a writer may open it."""
    if isinstance(db, HeldReader):
        db.close()


def state(db: str | os.PathLike) -> tuple:
    """The store's identity and state (:func:`brainlab.store.connection.store_state`)."""
    from brainlab.store.connection import store_state

    return store_state(db)


def once(db: str | os.PathLike, name: str, compute: Callable[[], T]) -> T:
    """``compute()`` once per store state and ``name`` (every call when caching is off)."""
    if not enabled():
        return compute()
    key = (*state(db), name)
    if key not in _MEMO:
        found = compute()
        current = {k for k in _MEMO if k[:-1] == key[:-1]}
        stale = [k for k in _MEMO if k not in current]
        if len({k[:-1] for k in stale}) >= MAX_STORES:
            for k in stale:
                del _MEMO[k]
        _MEMO[key] = found
    return _MEMO[key]  # type: ignore[return-value]


def violations(db: str | os.PathLike) -> pd.DataFrame:
    """Every violation with its ISO week (``metrics.compliance.violations``), once per store."""
    from brainlab.metrics import compliance

    return once(db, "violations", lambda: compliance.violations(db))


def shape(db: str | os.PathLike, basis: str = "best"):
    """Which sides the store holds (``measured_week.store_shape``), once per store and basis."""
    from brainlab.report import measured_week

    return once(db, f"shape:{basis}", lambda: measured_week.store_shape(db, basis))


def compliance_week(db: str | os.PathLike, start_at: datetime, end_at: datetime,
                    history_start_at: datetime, first_day: str = "monday"
                    ) -> dict[str, pd.DataFrame]:
    """``metrics.compliance.weekly``'s own SQL, run over one evaluation of ``violations``.

    The cached frames stand in for the two relations the SQL reads (DuckDB scans a
    registered DataFrame), so the figures come from the one definition of the metric.
    """
    from brainlab.metrics import compliance
    from brainlab.spec.weeks import MACROS
    from brainlab.store.connection import StoreConfig, connect

    every = violations(db).drop(columns=["iso_week"])
    catalogue = once(db, "rule_catalogue", lambda: query(
        db, "SELECT rule, name, severity, spec FROM rule_catalogue"))
    if isinstance(db, HeldReader):  # a cursor of the render's connection: a context of its
        # own (its temp objects and registered frames go with it), no second database opened
        con, temp = db.connection().cursor(), " TEMP"
    else:
        con, temp = connect(StoreConfig(path=Path(":memory:"), read_only=False)), ""
    try:
        con.register("violations", every)
        con.register("rule_catalogue", catalogue)
        for statement in MACROS.values():  # the week's rule, as the store has it
            con.execute(statement.replace("CREATE OR REPLACE MACRO",
                                          f"CREATE OR REPLACE{temp} MACRO", 1))
        return compliance.weekly_on(lambda sql, params: con.execute(sql, params).df(),
                                    start_at, end_at, history_start_at, first_day)
    finally:
        con.close()
