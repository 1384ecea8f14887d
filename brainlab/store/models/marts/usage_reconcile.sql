-- One session's spend measured three ways (issue 45), per session and UTC day: the
-- transcripts' deduplicated calls (cc_requests, source transcript), telemetry's api_request
-- events (otel_api_requests: Claude Code's final counts and cost_usd) and the status line's
-- last snapshot of the day (limit_snapshots: cumulative totals, so a day's figure is its last
-- value minus the last value before that day; a total that went down started again).
-- gap_<field>: the largest minus the smallest of the sources that report the field (NULL
-- with fewer than two). flagged: a token field's gap above 1% of its largest value (and at
-- least one token), or the cost's above 1% and at least one cent; a day seen by one source
-- only is never flagged and says so. reconciled_<field>: the authoritative source's value
-- (docs/transcripts.md, "Three measures of one session"): telemetry, else the status line
-- (input, output, cost), else the transcripts.
CREATE OR REPLACE VIEW usage_reconcile AS
WITH t AS (
    SELECT session_id, CAST(ts AS DATE) AS day, count(*) AS calls,
           sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
           sum(cache_read_tokens) AS cache_read_tokens,
           sum(cache_creation_tokens) AS cache_creation_tokens, sum(cost_usd) AS cost_usd
    FROM cc_requests
    WHERE source = 'transcript' AND session_id IS NOT NULL AND ts IS NOT NULL
    GROUP BY ALL
), o AS (
    SELECT session_id, CAST(ts AS DATE) AS day, count(*) AS calls,
           sum(coalesce(input_tokens, 0)) AS input_tokens,
           sum(coalesce(output_tokens, 0)) AS output_tokens,
           sum(coalesce(cache_read_tokens, 0)) AS cache_read_tokens,
           sum(coalesce(cache_creation_tokens, 0)) AS cache_creation_tokens,
           sum(cost_usd) AS cost_usd
    FROM otel_api_requests
    WHERE session_id IS NOT NULL AND ts IS NOT NULL
    GROUP BY ALL
), last_of_day AS (
    SELECT session_id, CAST(snapshot_at AS DATE) AS day,
           arg_max(total_input_tokens, snapshot_at) FILTER (WHERE total_input_tokens IS NOT NULL)
               AS input_total,
           arg_max(total_output_tokens, snapshot_at) FILTER (WHERE total_output_tokens IS NOT NULL)
               AS output_total,
           arg_max(total_cost_usd, snapshot_at) FILTER (WHERE total_cost_usd IS NOT NULL)
               AS cost_total
    FROM limit_snapshots
    WHERE session_id IS NOT NULL
      AND (total_cost_usd IS NOT NULL OR total_input_tokens IS NOT NULL
           OR total_output_tokens IS NOT NULL)
    GROUP BY ALL
), s AS (
    SELECT session_id, day,
           CASE WHEN input_total >= coalesce(lag(input_total) OVER w, 0)
                THEN input_total - coalesce(lag(input_total) OVER w, 0) ELSE input_total END
               AS input_tokens,
           CASE WHEN output_total >= coalesce(lag(output_total) OVER w, 0)
                THEN output_total - coalesce(lag(output_total) OVER w, 0) ELSE output_total END
               AS output_tokens,
           CASE WHEN cost_total >= coalesce(lag(cost_total) OVER w, 0)
                THEN cost_total - coalesce(lag(cost_total) OVER w, 0) ELSE cost_total END
               AS cost_usd
    FROM last_of_day
    WINDOW w AS (PARTITION BY session_id ORDER BY day)
), j AS (
    SELECT coalesce(t.session_id, o.session_id, s.session_id) AS session_id,
           coalesce(t.day, o.day, s.day) AS day,
           list_concat(CASE WHEN t.session_id IS NOT NULL THEN ['transcripts'] ELSE [] END,
                       CASE WHEN o.session_id IS NOT NULL THEN ['telemetry'] ELSE [] END,
                       CASE WHEN s.session_id IS NOT NULL THEN ['statusline'] ELSE [] END)
               AS sources,
           t.calls AS transcript_calls, t.input_tokens AS transcript_input_tokens,
           t.output_tokens AS transcript_output_tokens,
           t.cache_read_tokens AS transcript_cache_read_tokens,
           t.cache_creation_tokens AS transcript_cache_creation_tokens,
           t.cost_usd AS transcript_cost_usd,
           o.calls AS telemetry_calls, o.input_tokens AS telemetry_input_tokens,
           o.output_tokens AS telemetry_output_tokens,
           o.cache_read_tokens AS telemetry_cache_read_tokens,
           o.cache_creation_tokens AS telemetry_cache_creation_tokens,
           o.cost_usd AS telemetry_cost_usd,
           s.input_tokens AS statusline_input_tokens, s.output_tokens AS statusline_output_tokens,
           s.cost_usd AS statusline_cost_usd
    FROM t
    FULL JOIN o ON o.session_id = t.session_id AND o.day = t.day
    FULL JOIN s ON s.session_id = coalesce(t.session_id, o.session_id)
               AND s.day = coalesce(t.day, o.day)
), g AS (
    SELECT *,
           greatest(transcript_input_tokens, telemetry_input_tokens, statusline_input_tokens)
             - least(transcript_input_tokens, telemetry_input_tokens, statusline_input_tokens)
               AS gap_input_tokens,
           greatest(transcript_output_tokens, telemetry_output_tokens, statusline_output_tokens)
             - least(transcript_output_tokens, telemetry_output_tokens, statusline_output_tokens)
               AS gap_output_tokens,
           greatest(transcript_cache_read_tokens, telemetry_cache_read_tokens)
             - least(transcript_cache_read_tokens, telemetry_cache_read_tokens)
               AS gap_cache_read_tokens,
           greatest(transcript_cache_creation_tokens, telemetry_cache_creation_tokens)
             - least(transcript_cache_creation_tokens, telemetry_cache_creation_tokens)
               AS gap_cache_creation_tokens,
           greatest(transcript_cost_usd, telemetry_cost_usd, statusline_cost_usd)
             - least(transcript_cost_usd, telemetry_cost_usd, statusline_cost_usd)
               AS gap_cost_usd,
           greatest(transcript_input_tokens, telemetry_input_tokens, statusline_input_tokens)
               AS max_input,
           greatest(transcript_output_tokens, telemetry_output_tokens, statusline_output_tokens)
               AS max_output,
           greatest(transcript_cache_read_tokens, telemetry_cache_read_tokens) AS max_read,
           greatest(transcript_cache_creation_tokens, telemetry_cache_creation_tokens)
               AS max_write,
           greatest(transcript_cost_usd, telemetry_cost_usd, statusline_cost_usd) AS max_cost,
           (transcript_input_tokens IS NOT NULL)::INT + (telemetry_input_tokens IS NOT NULL)::INT
             + (statusline_input_tokens IS NOT NULL)::INT AS n_input,
           (transcript_output_tokens IS NOT NULL)::INT + (telemetry_output_tokens IS NOT NULL)::INT
             + (statusline_output_tokens IS NOT NULL)::INT AS n_output,
           (transcript_cost_usd IS NOT NULL)::INT + (telemetry_cost_usd IS NOT NULL)::INT
             + (statusline_cost_usd IS NOT NULL)::INT AS n_cost,
           (transcript_cache_read_tokens IS NOT NULL)::INT
             + (telemetry_cache_read_tokens IS NOT NULL)::INT AS n_cache
    FROM j
)
SELECT session_id, day, sources, len(sources) AS source_count,
       transcript_calls, transcript_input_tokens, transcript_output_tokens,
       transcript_cache_read_tokens, transcript_cache_creation_tokens, transcript_cost_usd,
       telemetry_calls, telemetry_input_tokens, telemetry_output_tokens,
       telemetry_cache_read_tokens, telemetry_cache_creation_tokens, telemetry_cost_usd,
       statusline_input_tokens, statusline_output_tokens, statusline_cost_usd,
       CASE WHEN n_input > 1 THEN gap_input_tokens END AS gap_input_tokens,
       CASE WHEN n_output > 1 THEN gap_output_tokens END AS gap_output_tokens,
       CASE WHEN n_cache > 1 THEN gap_cache_read_tokens END AS gap_cache_read_tokens,
       CASE WHEN n_cache > 1 THEN gap_cache_creation_tokens END AS gap_cache_creation_tokens,
       CASE WHEN n_cost > 1 THEN gap_cost_usd END AS gap_cost_usd,
       coalesce(telemetry_input_tokens, statusline_input_tokens, transcript_input_tokens)
           AS reconciled_input_tokens,
       coalesce(telemetry_output_tokens, statusline_output_tokens, transcript_output_tokens)
           AS reconciled_output_tokens,
       coalesce(telemetry_cache_read_tokens, transcript_cache_read_tokens)
           AS reconciled_cache_read_tokens,
       coalesce(telemetry_cache_creation_tokens, transcript_cache_creation_tokens)
           AS reconciled_cache_creation_tokens,
       coalesce(telemetry_cost_usd, statusline_cost_usd, transcript_cost_usd)
           AS reconciled_cost_usd,
       coalesce(n_input > 1 AND gap_input_tokens >= 1
                AND gap_input_tokens > 0.01 * max_input, false)
         OR coalesce(n_output > 1 AND gap_output_tokens >= 1
                     AND gap_output_tokens > 0.01 * max_output, false)
         OR coalesce(n_cache > 1 AND gap_cache_read_tokens >= 1
                     AND gap_cache_read_tokens > 0.01 * max_read, false)
         OR coalesce(n_cache > 1 AND gap_cache_creation_tokens >= 1
                     AND gap_cache_creation_tokens > 0.01 * max_write, false)
         OR coalesce(n_cost > 1 AND gap_cost_usd >= 0.01
                     AND gap_cost_usd > 0.01 * max_cost, false) AS flagged,
       CASE len(sources) WHEN 1 THEN 'seen by ' || sources[1] || ' only: nothing to compare'
       END AS note
FROM g;
