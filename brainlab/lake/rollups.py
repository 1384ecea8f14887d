"""Usage roll-ups written beside the lake's raw tables: daily, weekly, per user, per model.

The SPEC §7 deduplication (the store's cc_request_dedup: one call per message.id and
requestId in the main chain, issue 45 rules 2 and 3, :func:`rank`) is global across users
and machines: a transcript copied to a second machine counts once. Its result, the kept
calls with their day, price row and cost, is kept in ``rollup_calls`` (partitioned by
day), and the four roll-ups are computed
from it: Spark the daily rows and each user's and model's distinct values, the driver the
daily, weekly, user and model sums of those small daily rows with the store's ``usage_by``
macro, the one place usage is summed (fewer Spark jobs, :func:`finish`).
The rules are those of the store's views (cc_request_dedup, cc_requests,
usage_daily_models); tests check both give the same figures.

A run re-ranks only what it can change: the calls whose key (message.id, else file:line) is
among its new lines, read from the days of its new lines widened by ``WINDOW_DAYS`` on each
side; the other days' kept calls and roll-up rows stay as they are. Copies of one call are
replays of the same line (a resumed session, a transcript copied to another machine) with
the line's own timestamp: on the public corpus every duplicated message.id has all its
copies within one second, so on one UTC day or two adjacent ones; the window of 3 days is
that with margin (docs/lake.md). A copy further apart than the window counts twice.
A run that drops rows (a reset file, ``--prune``) or changes prices re-ranks the whole lake.
"""

from __future__ import annotations

import datetime as dt

from brainlab.common.errors import LakeError
from brainlab.lake import layout, staging
from brainlab.lake.spark_io import delete_path, hadoop_path, path_exists, read_table

MEASURES = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")
SUMS = (*MEASURES, "total_tokens", "cost_usd", "requests", "unpriced_requests")
CALLS = "rollup_calls"  # the kept calls, partitioned by day (written by this module only)
# what rollup_calls keeps of a kept call: its key (a re-rank's anti join) and what the
# roll-ups read. Not the request line's other columns (request_id, ts, cwd, git_branch...):
# writing them cost ~20% of a cold run's JVM task time for nothing (docs/scale.md)
CALL_COLUMNS = ("message_id", "source_file", "line", "user", "machine", "session_id", "model",
                *MEASURES)
WINDOW_DAYS = 3  # how far apart (UTC days) two copies of one call may be and still count once


PENDING = "_rollups.pending"  # at the lake's root while the raw tables are ahead of the roll-ups


def pending(lake: str) -> bool:
    """True when a run committed its raw tables but not its roll-ups (it failed there)."""
    return staging.exists(*staging.arrow_filesystem(f"{layout.normalize(lake)}/{PENDING}"))


def mark_pending(lake: str, on: bool) -> None:
    """Set or clear the mark that the roll-ups must be recomputed in full."""
    fs, path = staging.arrow_filesystem(f"{layout.normalize(lake)}/{PENDING}")
    if on:
        with fs.open_output_stream(path) as out:
            out.write(b"the raw tables were committed; the roll-ups were not yet written\n")
    elif staging.exists(fs, path):
        fs.delete_file(path)


def call_key():
    """The lines re-ranked together: a message.id's, else one line (its file and line).

    A message's calls (:func:`call_keys`) all fall in its group, so a run re-ranks whole
    groups and keeps the others' calls as they are.
    """
    from pyspark.sql import functions as F

    return F.coalesce(F.col("message_id"),
                      F.concat(F.col("source_file"), F.lit(":"), F.col("line").cast("string")))


def call_keys(lines):
    """``lines`` with ``_call``: the call of each line, as the store's cc_request_dedup says.

    Issue 45 rules 2 and 3 (docs/transcripts.md): a main-chain line's call is its (message.id,
    requestId), so one message.id under two requestIds in the main chain is two calls; a
    sidechain or subagent line joins the main-chain call of its message.id with the same
    requestId, else the first other one (a /btw replay), else its own message.id; a line
    without message.id is its own call.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    sep, none = "\x1f", "\x1e"
    mains = (lines.filter(F.col("agent_id").isNull() & F.col("message_id").isNotNull())
             .select("message_id", F.col("request_id").alias("_main_request")).distinct())
    side = (lines.filter(F.col("agent_id").isNotNull() & F.col("message_id").isNotNull())
            .select("message_id", "request_id").distinct().join(mains, "message_id"))
    prefer = Window.partitionBy("message_id", "request_id").orderBy(
        (~F.col("_main_request").eqNullSafe(F.col("request_id"))).asc(),
        F.coalesce(F.col("_main_request"), F.lit("")).asc())
    side = (side.withColumn("_n", F.row_number().over(prefer)).filter(F.col("_n") == 1)
            .select(F.col("message_id").alias("_side_message"),
                    F.col("request_id").alias("_side_request"),
                    F.concat(F.col("message_id"), F.lit(sep),
                             F.coalesce(F.col("_main_request"), F.lit(""))).alias("_side_key")))
    joined = lines.join(side,
                        F.col("agent_id").isNotNull()
                        & (F.col("_side_message") == F.col("message_id"))
                        & F.col("_side_request").eqNullSafe(F.col("request_id")), "left")
    key = (F.when(F.col("message_id").isNull(),
                  F.concat(F.col("source_file"), F.lit(":"), F.col("line").cast("string")))
           .when(F.col("agent_id").isNull(),
                 F.concat(F.col("message_id"), F.lit(sep),
                          F.coalesce(F.col("request_id"), F.lit(""))))
           .otherwise(F.coalesce(F.col("_side_key"),
                                 F.concat(F.col("message_id"), F.lit(sep + none)))))
    return joined.withColumn("_call", key).drop("_side_message", "_side_request", "_side_key")


def rank(lines, prices, spans=None):
    """SPEC §7 over ``lines``: one row per call (:data:`CALL_COLUMNS`), day, price row, cost.

    The survivor of a call's copies and the session it belongs to are the store's
    (cc_request_dedup, issue 45 rules 2 and 3): the main chain's copy, then the larger token
    total, then the larger reported cost, then the latest, then file and line; the session
    of its earliest copy (main-chain copies first; equal times: the session whose main-chain
    spans end first, from ``spans``, the lake's cc_spans) when its copies lie in several.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    keyed = call_keys(lines)
    total = sum((F.coalesce(F.col(c), F.lit(0)) for c in MEASURES[1:]),
                F.coalesce(F.col(MEASURES[0]), F.lit(0)))
    window = Window.partitionBy("_call").orderBy(
        F.col("agent_id").isNull().desc(), total.desc(),
        F.col("reported_cost_usd").desc_nulls_last(), F.col("ts").desc_nulls_last(),
        F.col("source_file").desc(), F.col("line").desc())
    far = F.lit("9999-12-31 00:00:00").cast("timestamp_ntz")
    if spans is not None:
        ends = (spans.filter(F.col("agent_id").isNull()).groupBy("session_id")
                .agg(F.max("last_ts").alias("_session_end"))
                .withColumnRenamed("session_id", "_end_session"))
        keyed = keyed.join(ends, keyed["session_id"].eqNullSafe(ends["_end_session"]), "left")
    else:
        keyed = keyed.withColumn("_session_end", F.lit(None).cast("timestamp_ntz"))
    earliest = Window.partitionBy("_call").orderBy(
        F.col("agent_id").isNotNull().asc(), F.coalesce(F.col("ts"), far).asc(),
        F.coalesce(F.col("_session_end"), far).asc(), F.col("source_file").asc(),
        F.col("line").asc())
    whole = Window.partitionBy("_call")
    kept = (keyed.withColumn("_rank", F.row_number().over(window))
            .withColumn("_first_session", F.first("session_id").over(
                earliest.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)))
            .withColumn("_sessions", F.size(F.collect_set(
                F.when(F.col("message_id").isNotNull(), F.col("session_id"))).over(whole)))
            .filter(F.col("_rank") == 1)
            .withColumn("session_id", F.when(F.col("_sessions") > 1, F.col("_first_session"))
                        .otherwise(F.col("session_id")))
            .drop("_rank", "_first_session", "_sessions", "_session_end", "_end_session",
                  "_call"))
    seen = prices.select("model", "price_version").collect()
    versions = [r["price_version"] for r in seen if r["price_version"] is not None]
    top = max(versions) if versions else None
    names = sorted({r["model"] for r in seen if r["price_version"] == top})  # cc_model_prices
    latest = F.lit(top).cast("bigint")
    priced_as = F.when(F.col("model").isin(names), F.col("model")).otherwise(
        F.regexp_replace(F.col("model"), "-[0-9]{8}$", ""))
    p = F.broadcast(prices.select(*[F.col(c).alias(f"p_{c}") for c in prices.columns]))
    day = F.coalesce(F.to_date("ts"), F.lit("9999-12-30").cast("date"))  # the row in force
    # the price table in force at the line's run (issue 45; NULL: the latest), as cc_requests
    version = F.col("p_price_version").eqNullSafe(F.coalesce(F.col("price_version"), latest))
    in_force = (version & (F.col("_priced_as") == F.col("p_model"))
                & (day >= F.coalesce(F.col("p_valid_from"), F.lit("0001-01-01").cast("date")))
                & (day < F.coalesce(F.col("p_valid_until"), F.lit("9999-12-31").cast("date"))))
    d = (kept.withColumn("_priced_as", priced_as)
         .join(p, in_force, "left")
         .withColumn("context_tokens", F.col("input_tokens") + F.col("cache_creation_tokens")
                     + F.col("cache_read_tokens")))
    long_ctx = (F.col("p_long_context_threshold").isNotNull()
                & (F.col("context_tokens") > F.col("p_long_context_threshold")))
    in_mult = F.when(long_ctx, F.col("p_long_input_multiplier")).otherwise(F.lit(1.0))
    out_mult = F.when(long_ctx, F.col("p_long_output_multiplier")).otherwise(F.lit(1.0))
    cw5m = F.coalesce(F.col("cache_creation_5m_tokens"), F.col("cache_creation_tokens")
                      - F.coalesce(F.col("cache_creation_1h_tokens"), F.lit(0)))
    cw1h = F.coalesce(F.col("cache_creation_1h_tokens"), F.lit(0))
    cost = (F.col("input_tokens") * F.col("p_input_usd_mtok") * in_mult
            + F.col("output_tokens") * F.col("p_output_usd_mtok") * out_mult
            + cw5m * F.col("p_cache_write_5m_usd_mtok") * in_mult
            + cw1h * F.col("p_cache_write_1h_usd_mtok") * in_mult
            + F.col("cache_read_tokens") * F.col("p_cache_read_usd_mtok") * in_mult
            ) * F.when(F.col("speed") == "fast", F.coalesce(F.col("p_fast_multiplier"),
                                                            F.lit(1.0))).otherwise(1.0) / 1e6
    return d.select(*CALL_COLUMNS, F.col("p_model").alias("priced_as"),
                    cost.alias("cost_usd"), F.to_date("ts").alias("day"))


def dedup_requests(spark, lake: str, columns: dict):
    """SPEC §7 over the whole lake: one row per API call, with its day, price row and cost."""
    lines = read_table(spark, lake, "cc_request_lines", columns)
    if lines is None:
        return None
    return rank(lines, read_table(spark, lake, "cc_prices", columns),
                read_table(spark, lake, "cc_spans", columns))


def _measures():
    from pyspark.sql import functions as F

    sums = [F.sum(c).cast("bigint").alias(c) for c in MEASURES]
    total = F.sum(sum((F.col(c) for c in MEASURES[1:]), F.col(MEASURES[0]))).cast("bigint")
    return [*sums, total.alias("total_tokens"), F.sum("cost_usd").alias("cost_usd"),
            F.count(F.lit(1)).alias("requests"),
            F.count(F.when(F.col("cost_usd").isNull(), 1)).alias("unpriced_requests")]


def _read_calls(spark, lake: str, days: set | None = None):
    """``rollup_calls`` (all of it, or only ``days``: partition pruning), day typed as date."""
    from pyspark.sql import functions as F

    uri = layout.table_uri(lake, CALLS)
    if not path_exists(spark, uri):
        return None
    calls = spark.read.option("basePath", uri).parquet(uri).withColumn(
        "day", F.col("day").cast("date"))
    if days is not None:
        dated = sorted(d for d in days if d is not None)
        cond = F.col("day").isin(dated) if dated else F.lit(False)
        if None in days:
            cond = cond | F.col("day").isNull()
        calls = calls.filter(cond)
    return calls


def _outside(column: str, days: set):
    """True for the rows of ``column`` not among ``days`` (a None among them: the undated)."""
    from pyspark.sql import functions as F

    dated = sorted(d for d in days if d is not None)
    inside = F.col(column).isin(dated) if dated else F.lit(False)
    return F.when(F.col(column).isNull(), F.lit(None not in days)).otherwise(~inside)


def _window(days: set) -> set:
    """The days a run touched, each widened by WINDOW_DAYS on both sides (None stays None)."""
    out = set()
    for d in days:
        if d is None:
            out.add(None)
        else:
            out.update(d + dt.timedelta(days=k) for k in range(-WINDOW_DAYS, WINDOW_DAYS + 1))
    return out


def update_calls(spark, lake: str, columns: dict, new_lines) -> set | None:
    """Re-rank the calls of ``new_lines``' keys in their days +- WINDOW_DAYS; the days changed.

    Returns the set of days whose kept calls were rewritten (None: the whole lake re-ranked,
    as on a first run).
    """
    from pyspark.sql import functions as F

    uri = layout.table_uri(lake, CALLS)
    if new_lines is None or not path_exists(spark, uri):
        calls = dedup_requests(spark, lake, columns)
        delete_path(spark, uri)
        if calls is not None:
            calls.write.mode("overwrite").partitionBy("day").parquet(uri)
        return None
    keys = new_lines.select(call_key().alias("_key"), F.to_date("ts").alias("_day"))
    touched = {r["_day"] for r in keys.select("_day").distinct().collect()}
    days = _window(touched)
    keys = F.broadcast(keys.select("_key").distinct())
    lines = read_table(spark, lake, "cc_request_lines", columns)
    dated = sorted(d for d in days if d is not None)
    in_days = F.to_date("ts").isin(dated) if dated else F.lit(False)
    if dated:  # a range first: Parquet row groups outside it are skipped
        in_days = (F.col("ts") >= F.lit(dt.datetime.combine(dated[0], dt.time())))\
            & (F.col("ts") < F.lit(dt.datetime.combine(dated[-1] + dt.timedelta(days=1),
                                                       dt.time()))) & in_days
    if None in days:
        in_days = in_days | F.col("ts").isNull()
    candidates = (lines.filter(in_days).withColumn("_key", call_key())
                  .join(keys, "_key", "left_semi").drop("_key"))
    ranked = rank(candidates, read_table(spark, lake, "cc_prices", columns),
                  read_table(spark, lake, "cc_spans", columns))
    old = _read_calls(spark, lake, days)
    kept = (old.withColumn("_key", call_key()).join(keys, "_key", "left_anti").drop("_key")
            .select(*ranked.columns))
    # written beside the lake first (the old days are read by this one job), then each day
    # of the window swapped in, or deleted when left empty: no checkpoint, no collect
    staged = f"{staging.new_run(lake)}/{CALLS}"
    kept.unionByName(ranked).write.partitionBy("day").parquet(staged)
    try:
        _swap_days(spark, staged, uri, days)
    finally:
        delete_path(spark, staged.rsplit("/", 1)[0])
    return days


def _swap_days(spark, staged: str, uri: str, days: set) -> None:
    """Replace ``uri``'s partitions of ``days`` by ``staged``'s (none staged: deleted)."""
    source, fs = hadoop_path(spark, staged)
    names = {s.getPath().getName() for s in fs.listStatus(source) if s.isDirectory()}
    names |= {"day=" + ("__HIVE_DEFAULT_PARTITION__" if d is None else d.isoformat())
              for d in days}
    for name in sorted(names):
        target, _ = hadoop_path(spark, f"{uri}/{name}")
        if fs.exists(target):
            fs.delete(target, True)
        moved, _ = hadoop_path(spark, f"{staged}/{name}")
        if fs.exists(moved) and not fs.rename(moved, target):
            raise LakeError(f"could not move {staged}/{name} into {uri}; the lake is partly"
                            " written: restore it before the next run (docs/lake.md)")


def write_rollups(spark, lake: str, columns: dict, new_lines=None, full: bool = False
                  ) -> list[str]:
    """Update ``rollup_calls`` and the four roll-ups; return the roll-ups' names.

    ``new_lines``: this run's new ``cc_request_lines`` rows (None with ``full``, or when the
    roll-ups are missing: everything is re-ranked). Spark computes what reads the calls: the
    daily rows (of the days re-ranked, the other days' rows kept) and, in one pass over all
    of ``rollup_calls``, each user's distinct sessions and machines and each model's price
    row. Both are small (days x users x models; users + models) and collected; the weekly,
    user and model sums are the daily rows re-summed on the driver (:func:`finish`) and the
    four tables written there with pyarrow: each Spark write of a small table was 2-5 jobs.
    """
    from pyspark.sql import functions as F

    if full or not all(path_exists(spark, layout.table_uri(lake, n)) for n in layout.ROLLUPS):
        new_lines = None
    days = update_calls(spark, lake, columns, None if full else new_lines)
    calls = _read_calls(spark, lake, days)  # Parquet: each pass reads only its columns
    if calls is None:
        return []
    daily = calls.groupBy("day", "user", "model").agg(*_measures())
    if days is not None:  # keep the other days' rows
        daily = (spark.read.parquet(layout.table_uri(lake, "rollup_usage_daily"))
                 .filter(_outside("day", days)).unionByName(daily))
    every = _read_calls(spark, lake) if days is not None else calls
    per = every.groupingSets([["user"], ["model"]], "user", "model").agg(
        F.grouping_id().alias("grouping"),  # 1: a user's row, 2: a model's
        F.countDistinct("session_id").alias("sessions"),  # a column scan, no re-rank
        F.countDistinct("machine").alias("machines"),
        F.first("priced_as", ignorenulls=True).alias("priced_as"))
    tables = finish(daily.toArrow(), per.toArrow())  # read before anything is overwritten
    for name, table in tables.items():
        _replace(lake, name, table)
    return list(tables)


# the daily rows (``daily``: day, user, model and the sums of MEASURES) in the shape usage_by
# sums (store/models/marts/usage_calls.sql): the one place usage is summed, here as in the
# store; a dimension the lake's daily rows do not carry is NULL
_LAKE_CALLS = """CREATE VIEW lake_calls AS SELECT CAST(day AS TIMESTAMP) AS bucket, day,
    NULL::VARCHAR AS session_id, false AS is_subagent, false AS is_nested, 'standard' AS speed,
    NULL::VARCHAR AS project, model, NULL::VARCHAR AS priced_as, NULL::VARCHAR AS git_branch,
    NULL::VARCHAR AS agent, NULL::VARCHAR AS ticket, "user" AS user_name,
    NULL::VARCHAR AS machine, NULL::VARCHAR AS organization, NULL::VARCHAR AS query_source,
    NULL::VARCHAR AS agent_name, NULL::VARCHAR AS skill, NULL::VARCHAR AS plugin, NULL::VARCHAR AS mcp_server,
    NULL::VARCHAR AS effort, 'transcript' AS source, input_tokens, output_tokens,
    cache_creation_tokens, cache_read_tokens, total_tokens, cost_usd,
    NULL::DOUBLE AS reported_cost_usd, NULL::DOUBLE AS auto_cost_usd, requests,
    unpriced_requests, CAST(day AS TIMESTAMP) AS first_ts, CAST(day AS TIMESTAMP) AS last_ts
    FROM daily"""
_SUMS_SQL = ", ".join(SUMS)
ROLLUP_SQL = {  # usage_by over the daily rows (``lake_calls``) and the per-user / model pass
    "rollup_usage_daily": f"SELECT period AS day, user_name AS user, model, {_SUMS_SQL}"
    " FROM usage_by(calls := lake_calls, grain := 'day', dims := ['user', 'model'])",
    "rollup_usage_weekly": "SELECT period AS week_start, CAST(isoyear(period) AS INTEGER)"
    " AS iso_year, CAST(week(period) AS INTEGER) AS iso_week, user_name AS user, {sums}"
    " FROM usage_by(calls := lake_calls, grain := 'week', dims := ['user'])".replace(
        "{sums}", _SUMS_SQL),
    "rollup_usage_users": "SELECT u.user_name AS user, CAST(u.first_ts AS DATE) AS first_day,"
    " CAST(u.last_ts AS DATE) AS last_day, p.sessions, p.machines,"
    f" {', '.join(f'u.{c}' for c in SUMS)} FROM usage_by(calls := lake_calls,"
    " grain := 'total', dims := ['user']) u JOIN (SELECT * FROM per WHERE grouping = 1) p"
    " ON p.user = u.user_name",
    "rollup_usage_models": f"SELECT u.model, p.priced_as, {', '.join(f'u.{c}' for c in SUMS)}"
    " FROM usage_by(calls := lake_calls, grain := 'total', dims := ['model']) u"
    " LEFT JOIN (SELECT * FROM per WHERE grouping = 2) p ON u.model = p.model",
}


def finish(daily, per) -> dict:
    """The four roll-ups (Arrow tables) from the collected daily rows and per-user/model pass.

    Summed by the store's ``usage_by`` macro (its model file, and the week rule of
    :mod:`brainlab.spec.weeks`), in a DuckDB of the driver's own.
    """
    from pathlib import Path

    from brainlab.spec.weeks import MACROS
    from brainlab.store.connection import StoreConfig, connect
    from brainlab.store.usage_rollup import USAGE_BY

    con = connect(StoreConfig(path=Path(":memory:"), read_only=False))  # the one factory
    try:
        con.execute(MACROS["week_first_day"])
        con.execute(USAGE_BY.read_text(encoding="utf-8"))
        con.register("daily", daily)
        con.register("per", per)
        con.execute(_LAKE_CALLS)
        return {name: con.sql(f"{sql} ORDER BY ALL").to_arrow_table()
                for name, sql in ROLLUP_SQL.items()}
    finally:
        con.close()


def _replace(lake: str, name: str, table) -> None:
    """Write ``table`` as the roll-up ``name``'s one file, then delete its older files.

    pyarrow, on the driver, where the JVM reads (:func:`staging.arrow_filesystem`): a failed
    write leaves the old files in place.
    """
    import uuid

    import pyarrow.parquet as pq
    from pyarrow.fs import FileSelector, FileType

    fs, path = staging.arrow_filesystem(layout.table_uri(lake, name))
    old = fs.get_file_info(FileSelector(path, allow_not_found=True))
    fs.create_dir(path, recursive=True)
    new = f"{path}/part-00000-{uuid.uuid4().hex}.parquet"
    pq.write_table(table, new, filesystem=fs, compression="snappy")
    for info in old:  # Spark's part files, _SUCCESS, .crc files; a former run's file
        if info.type == FileType.Directory:
            fs.delete_dir(info.path)
        elif info.path != new:
            fs.delete_file(info.path)
