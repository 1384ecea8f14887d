-- Models without a price: reported, never priced at zero (SPEC §7 Cost).
CREATE OR REPLACE VIEW cc_unpriced_models AS
SELECT model, count(*) AS requests,
       CAST(sum(input_tokens + output_tokens + cache_creation_tokens + cache_read_tokens)
           AS BIGINT) AS total_tokens
FROM cc_request_dedup
WHERE model NOT IN (SELECT model FROM cc_model_prices WHERE priced_as IS NOT NULL)
   OR model IS NULL
GROUP BY model;
