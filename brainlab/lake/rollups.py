"""Usage roll-ups written beside the lake's raw tables: daily, weekly, per user, per model.

Computed by Spark after each ingest from ``cc_request_lines`` over the WHOLE lake, so the
SPEC §7 deduplication (one line per message.id: the main chain's copy, then the latest,
then the largest output_tokens) is global across users and machines: a transcript copied to a second machine
counts once. The rules are those of the store's views (views/30_claude.sql, cc_request_dedup,
cc_requests, usage_daily_models); tests check both give the same figures.
"""

from __future__ import annotations

from brainlab.lake import layout
from brainlab.lake.spark_io import read_table

MEASURES = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")


def dedup_requests(spark, lake: str, columns: dict):
    """SPEC §7: one row per API call across the lake, with its day, price row and cost_usd."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    lines = read_table(spark, lake, "cc_request_lines", columns)
    prices = read_table(spark, lake, "cc_prices", columns)
    if lines is None:
        return None
    key = F.coalesce(F.col("message_id"),
                     F.concat(F.col("source_file"), F.lit(":"), F.col("line").cast("string")))
    window = Window.partitionBy(key).orderBy(
        F.col("agent_id").isNull().desc(), F.col("ts").desc_nulls_last(),
        F.col("output_tokens").desc_nulls_last(), F.col("source_file").desc(),
        F.col("line").desc())
    kept = (lines.withColumn("_rank", F.row_number().over(window))
            .filter(F.col("_rank") == 1).drop("_rank"))
    names = [r["model"] for r in prices.select("model").collect()]
    priced_as = F.when(F.col("model").isin(names), F.col("model")).otherwise(
        F.regexp_replace(F.col("model"), "-[0-9]{8}$", ""))
    p = prices.select(*[F.col(c).alias(f"p_{c}") for c in prices.columns])
    day = F.coalesce(F.to_date("ts"), F.lit("9999-12-30").cast("date"))  # the row in force
    in_force = ((F.col("_priced_as") == F.col("p_model"))
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
    return d.select(*kept.columns, F.col("p_model").alias("priced_as"),
                    cost.alias("cost_usd"), F.to_date("ts").alias("day"))


def _measures():
    from pyspark.sql import functions as F

    sums = [F.sum(c).cast("bigint").alias(c) for c in MEASURES]
    total = F.sum(sum((F.col(c) for c in MEASURES[1:]), F.col(MEASURES[0]))).cast("bigint")
    return [*sums, total.alias("total_tokens"), F.sum("cost_usd").alias("cost_usd"),
            F.count(F.lit(1)).alias("requests"),
            F.count(F.when(F.col("cost_usd").isNull(), 1)).alias("unpriced_requests")]


def write_rollups(spark, lake: str, columns: dict) -> list[str]:
    """Rewrite the four roll-ups from the deduplicated calls; return their names."""
    from pyspark.sql import functions as F

    requests = dedup_requests(spark, lake, columns)
    if requests is None:
        return []
    requests = requests.localCheckpoint(eager=True)
    frames = {
        "rollup_usage_daily": requests.groupBy("day", "user", "model").agg(*_measures()),
        "rollup_usage_weekly": requests.groupBy(
            F.date_trunc("week", "day").cast("date").alias("week_start"),
            F.expr("extract(YEAROFWEEK FROM day)").alias("iso_year"),
            F.weekofyear("day").alias("iso_week"), "user").agg(*_measures()),
        "rollup_usage_users": requests.groupBy("user").agg(
            F.min("day").alias("first_day"), F.max("day").alias("last_day"),
            F.countDistinct("session_id").alias("sessions"),
            F.countDistinct("machine").alias("machines"), *_measures()),
        "rollup_usage_models": requests.groupBy("model").agg(
            F.first("priced_as", ignorenulls=True).alias("priced_as"), *_measures()),
    }
    for name, frame in frames.items():
        frame.coalesce(1).write.mode("overwrite").parquet(layout.table_uri(lake, name))
    return list(frames)
