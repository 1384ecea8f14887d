-- Other agents' LLM calls: OTel GenAI (gen_ai.*) and OpenInference (llm.token_count.*) spans
-- with token counts, each span once. Both count cached prompt tokens inside the input count:
-- uncached_input_tokens subtracts them (the transcripts' input_tokens are uncached input).
CREATE OR REPLACE VIEW otel_span_calls AS
SELECT *,
       greatest(coalesce(input_tokens, 0) - coalesce(cache_read_tokens, 0)
                - coalesce(cache_creation_tokens, 0), 0) AS uncached_input_tokens
FROM otel_spans
WHERE convention IN ('gen_ai', 'openinference')
  AND (input_tokens IS NOT NULL OR output_tokens IS NOT NULL)
QUALIFY row_number() OVER (
    PARTITION BY coalesce(trace_id || ':' || span_id, file_key || ':' || line || ':' || record)
    ORDER BY start_ts NULLS LAST, file_key, line, record) = 1;
