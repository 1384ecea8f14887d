-- Usage by model (the name the transcript gives, and the price row it matched); fast-mode
-- calls are their own row, "<model> (fast)".
CREATE OR REPLACE VIEW usage_models AS
SELECT CASE WHEN speed = 'fast' THEN model || ' (fast)' ELSE model END AS model,
       any_value(priced_as) AS priced_as,
       CAST(sum(input_tokens) AS BIGINT) AS input_tokens, CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
       CAST(sum(cache_creation_tokens) AS BIGINT) AS cache_creation_tokens,
       CAST(sum(cache_read_tokens) AS BIGINT) AS cache_read_tokens,
       CAST(sum(input_tokens + output_tokens + cache_creation_tokens + cache_read_tokens)
           AS BIGINT) AS total_tokens,
       sum(cost_usd) AS cost_usd, count(*) AS requests
FROM cc_requests
GROUP BY 1;
