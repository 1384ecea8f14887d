-- Usage by UTC day and model (the day of the kept line's timestamp, like ccusage
-- --timezone UTC): the grain the daily and weekly roll-ups and the report's week are summed from,
-- summed from cc_usage_groups so the token and cost sums are written once.
CREATE OR REPLACE VIEW usage_daily_models AS
SELECT day, model,
       CAST(sum(input_tokens) AS BIGINT) AS input_tokens, CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
       CAST(sum(cache_creation_tokens) AS BIGINT) AS cache_creation_tokens,
       CAST(sum(cache_read_tokens) AS BIGINT) AS cache_read_tokens,
       CAST(sum(total_tokens) AS BIGINT) AS total_tokens,
       sum(cost_usd) AS cost_usd, CAST(sum(requests) AS BIGINT) AS requests,
       CAST(sum(unpriced_requests) AS BIGINT) AS unpriced_requests
FROM cc_usage_groups
WHERE day IS NOT NULL  -- a call without a timestamp: in no day (counting rule 4)
GROUP BY ALL;
