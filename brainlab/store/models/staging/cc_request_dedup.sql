-- SPEC §7: one API call is several lines repeating message.id, requestId and usage
-- (docs/transcripts.md, counting rules of issues 24 and 45). The call of a line (call_key):
--   * a main-chain line: its (message.id, requestId): one message.id under two requestIds in
--     the main chain is two calls (issue 45 rule 2, ccusage's dedupe by message and request);
--   * a sidechain or subagent line: the main-chain call of its message.id with the same
--     requestId, else any main-chain call of that message.id (a /btw side question replays
--     its parent's message under a new requestId: ccusage PR #1155), else its message.id;
--   * a line without message.id: its own call.
-- Of a call's copies the survivor is the main chain's, then the larger token total, then
-- the larger reported cost, then the latest, then file path and line number, across
-- sessions as within one (rule 2); the call belongs to the session of its earliest copy
-- (a resumed session repeats its calls under a new sessionId: rule 3), main-chain copies
-- first, equal times going to the session whose lines end first (the original).
-- The calls one incremental refresh of cc_usage_rollup recomputes (brainlab/store/
-- usage_rollup.py sets the variable cc_usage_keys for that statement; unset, every call is in
-- scope): a message's lines are kept or cut together, so its deduplication is unchanged.
CREATE OR REPLACE VIEW cc_request_dedup AS
WITH l AS (
    SELECT *,
           CASE WHEN message_id IS NULL THEN source_file || ':' || line
                WHEN agent_id IS NULL
                  OR bool_or(agent_id IS NULL) OVER (PARTITION BY message_id, request_id)
                THEN message_id || chr(31) || coalesce(request_id, '')
                ELSE message_id || chr(31) || coalesce(
                    min(CASE WHEN agent_id IS NULL THEN coalesce(request_id, '') END)
                        OVER (PARTITION BY message_id), chr(30))
           END AS call_key
    FROM cc_request_lines
    WHERE getvariable('cc_usage_keys') IS NULL
       OR coalesce(message_id, source_file || ':' || line)
          IN (SELECT unnest(getvariable('cc_usage_keys')))
), k AS (
    SELECT l.*, arg_min(l.session_id, (l.agent_id IS NOT NULL,
                                       coalesce(l.ts, TIMESTAMP '9999-12-31'),
                                       coalesce(e.last_ts, TIMESTAMP '9999-12-31'),
                                       l.source_file, l.line))
                    OVER (PARTITION BY l.call_key) AS call_session_id
    FROM l
    LEFT JOIN (SELECT session_id, max(last_ts) AS last_ts FROM cc_spans
               WHERE agent_id IS NULL GROUP BY session_id) e ON e.session_id = l.session_id
)
SELECT * EXCLUDE (call_session_id) REPLACE (call_session_id AS session_id)
FROM k
QUALIFY row_number() OVER (
    PARTITION BY call_key
    ORDER BY agent_id IS NULL DESC,
             coalesce(input_tokens, 0) + coalesce(output_tokens, 0)
                 + coalesce(cache_creation_tokens, 0) + coalesce(cache_read_tokens, 0) DESC,
             reported_cost_usd DESC NULLS LAST, ts DESC NULLS LAST, source_file DESC,
             line DESC) = 1;
