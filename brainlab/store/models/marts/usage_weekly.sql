-- Usage by ISO week (Monday start; iso_year/iso_week as ISO 8601 numbers them), from
-- usage_by, the one place usage is summed.
CREATE OR REPLACE VIEW usage_weekly AS
SELECT period AS week_start, isoyear(period) AS iso_year, week(period) AS iso_week,
       input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens, total_tokens,
       cost_usd, requests, unpriced_requests
FROM usage_by(calls := usage_calls, grain := 'week')
WHERE period IS NOT NULL;
