-- Usage by UTC day (usage_by, the one place usage is summed).
CREATE OR REPLACE VIEW usage_daily AS
SELECT period AS day, input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens,
       total_tokens, cost_usd, requests, unpriced_requests
FROM usage_by(calls := usage_calls, grain := 'day')
WHERE period IS NOT NULL;  -- a call without a timestamp: in no day (counting rule 4)
