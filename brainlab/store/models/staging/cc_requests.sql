-- One row per API call after deduplication, with its subagent type and cost.
-- Cost (SPEC §7): tokens x rate / 1e6 at the price row in force on the call's UTC day, of the
-- price table version in force when the line was ingested (issue 45: a later price change
-- does not rewrite it; `brainlab prices --reprice` does)
-- (cc_prices valid_from <= day < valid_until; a call without a timestamp takes the row in
-- force now); cache writes split 5 min / 1 h when the line says (else all 5 min);
-- long-context rows bill the whole request at the higher rates when its input side exceeds
-- the threshold; a fast-mode call (usage.speed = 'fast') has every rate times the row's
-- fast_multiplier (none known: standard rates). cost_usd is NULL when the model has no price.
CREATE OR REPLACE VIEW cc_requests AS
WITH d AS (
    SELECT r.*,
           coalesce(r.cache_creation_5m_tokens,
                    r.cache_creation_tokens - coalesce(r.cache_creation_1h_tokens, 0))
               AS cw5m,
           coalesce(r.cache_creation_1h_tokens, 0) AS cw1h,
           r.input_tokens + r.cache_creation_tokens + r.cache_read_tokens AS context_tokens
    -- otel (issue 26): the transcripts' calls (record owns cc_request_dedup) plus the calls
    -- seen only in telemetry (otel_only_calls), each with its source
    FROM (SELECT *, 'transcript' AS source FROM cc_request_dedup
          UNION ALL BY NAME SELECT * FROM otel_only_calls) r
), m AS (
    SELECT d.*, a.subagent_type, sp.project, mp.priced_as, p.input_usd_mtok,
           p.output_usd_mtok, p.cache_write_5m_usd_mtok, p.cache_write_1h_usd_mtok,
           p.cache_read_usd_mtok,
           CASE WHEN d.speed = 'fast' THEN coalesce(p.fast_multiplier, 1.0) ELSE 1.0 END
               AS speed_mult,
           CASE WHEN p.long_context_threshold IS NOT NULL
                 AND d.context_tokens > p.long_context_threshold THEN p.long_input_multiplier
                ELSE 1.0 END AS in_mult,
           CASE WHEN p.long_context_threshold IS NOT NULL
                 AND d.context_tokens > p.long_context_threshold THEN p.long_output_multiplier
                ELSE 1.0 END AS out_mult
    FROM d
    LEFT JOIN cc_agents a ON a.session_id = d.session_id AND a.agent_id = d.agent_id
    LEFT JOIN cc_model_prices mp ON mp.model = d.model
    CROSS JOIN (SELECT max(price_version) AS latest FROM cc_prices) v
    LEFT JOIN cc_prices p ON p.model = mp.priced_as
     -- issue 45: the price table in force at the line's ingest (NULL: the latest)
     AND coalesce(p.price_version, 0) = coalesce(d.price_version, v.latest, 0)
     AND coalesce(CAST(d.ts AS DATE), DATE '9999-12-30')
         >= coalesce(p.valid_from, DATE '0001-01-01')
     AND coalesce(CAST(d.ts AS DATE), DATE '9999-12-30')
         < coalesce(p.valid_until, DATE '9999-12-31')
    LEFT JOIN cc_session_projects sp ON sp.session_id = d.session_id
)
SELECT session_id, agent_id, subagent_type, request_id, message_id, model, ts,
       input_tokens, output_tokens, cache_creation_tokens, cache_creation_5m_tokens,
       cache_creation_1h_tokens, cache_read_tokens, context_tokens,
       (input_tokens * input_usd_mtok * in_mult
        + output_tokens * output_usd_mtok * out_mult
        + cw5m * cache_write_5m_usd_mtok * in_mult
        + cw1h * cache_write_1h_usd_mtok * in_mult
        + cache_read_tokens * cache_read_usd_mtok * in_mult) * speed_mult / 1e6 AS cost_usd,
       CASE WHEN input_usd_mtok IS NULL THEN NULL ELSE priced_as END AS priced_as, is_nested,
       project, cwd, source_file, line, speed, reported_cost_usd, git_branch, plugin, skill,
       source  -- otel (issue 26): transcript | otel | otel-genai | otel-openinference
FROM m;
