-- Usage by ISO week (Monday start; iso_year/iso_week as ISO 8601 numbers them).
CREATE OR REPLACE VIEW usage_weekly AS
SELECT week_first_day(day) AS week_start,
       isoyear(day) AS iso_year, week(day) AS iso_week,
       CAST(sum(input_tokens) AS BIGINT) AS input_tokens, CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
       CAST(sum(cache_creation_tokens) AS BIGINT) AS cache_creation_tokens,
       CAST(sum(cache_read_tokens) AS BIGINT) AS cache_read_tokens,
       CAST(sum(total_tokens) AS BIGINT) AS total_tokens,
       sum(cost_usd) AS cost_usd, CAST(sum(requests) AS BIGINT) AS requests,
       CAST(sum(unpriced_requests) AS BIGINT) AS unpriced_requests
FROM usage_daily
GROUP BY ALL;
