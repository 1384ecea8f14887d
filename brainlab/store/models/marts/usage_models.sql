-- Usage by model (the name the transcript gives, and the price row it matched); fast-mode
-- calls are their own row, "<model>-fast" as the peers name them (issue 45 rule 7). From
-- usage_by, the one place usage is summed.
CREATE OR REPLACE VIEW usage_models AS
SELECT CASE WHEN speed = 'fast' THEN model || '-fast' ELSE model END AS model, priced_as,
       input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens, total_tokens,
       cost_usd, requests
FROM usage_by(calls := usage_calls, grain := 'total', dims := ['model', 'speed']);
