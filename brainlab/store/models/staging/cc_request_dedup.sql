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
-- Written as joins and one window (three windows and a window arg_min took 3x the time of
-- the issue-24 view on a 30-copy corpus; this takes 1.5x): the session of a call is looked
-- up only for the calls whose copies lie in more than one session.
-- The calls one incremental refresh of cc_usage_rollup recomputes (brainlab/store/
-- usage_rollup.py sets the variable cc_usage_keys for that statement; unset, every call is in
-- scope): a message's lines are kept or cut together, so its deduplication is unchanged.
CREATE OR REPLACE VIEW cc_request_dedup AS
WITH l AS (
    SELECT * FROM cc_request_lines
    WHERE getvariable('cc_usage_keys') IS NULL
       OR coalesce(message_id, source_file || ':' || line)
          IN (SELECT unnest(getvariable('cc_usage_keys')))
), mains AS (  -- the (message.id, requestId) of every main-chain call
    SELECT message_id, request_id FROM l
    WHERE agent_id IS NULL AND message_id IS NOT NULL
    GROUP BY ALL
), side AS (  -- the call key of each sidechain or subagent copy of a main-chain message
    SELECT s.message_id, s.request_id,
           s.message_id || chr(31) || arg_min(coalesce(m.request_id, ''), (
               m.request_id IS DISTINCT FROM s.request_id, coalesce(m.request_id, ''))) AS key
    FROM (SELECT DISTINCT message_id, request_id FROM l
          WHERE agent_id IS NOT NULL AND message_id IS NOT NULL) s
    JOIN mains m ON m.message_id = s.message_id
    GROUP BY s.message_id, s.request_id
), k AS (
    SELECT l.*, CASE WHEN l.message_id IS NULL THEN l.source_file || ':' || l.line
                     WHEN l.agent_id IS NULL THEN l.message_id || chr(31) || coalesce(l.request_id, '')
                     ELSE coalesce(sd.key, l.message_id || chr(31) || chr(30)) END AS call_key
    FROM l LEFT JOIN side sd ON l.agent_id IS NOT NULL AND sd.message_id = l.message_id
         AND sd.request_id IS NOT DISTINCT FROM l.request_id
), kept AS (
    SELECT * FROM k
    QUALIFY row_number() OVER (
        PARTITION BY call_key
        ORDER BY agent_id IS NULL DESC,
                 coalesce(input_tokens, 0) + coalesce(output_tokens, 0)
                     + coalesce(cache_creation_tokens, 0) + coalesce(cache_read_tokens, 0) DESC,
                 reported_cost_usd DESC NULLS LAST, ts DESC NULLS LAST, source_file DESC,
                 line DESC) = 1
), moved AS (  -- calls with copies in more than one session: the earliest copy's session
    SELECT k.call_key, arg_min(k.session_id, (k.agent_id IS NOT NULL,
                                 coalesce(k.ts, TIMESTAMP '9999-12-31'),
                                 coalesce(e.last_ts, TIMESTAMP '9999-12-31'),
                                 k.source_file, k.line)) AS session_id
    FROM k
    LEFT JOIN (SELECT session_id, max(last_ts) AS last_ts FROM cc_spans
               WHERE agent_id IS NULL GROUP BY session_id) e ON e.session_id = k.session_id
    WHERE k.call_key IN (SELECT call_key FROM k WHERE message_id IS NOT NULL GROUP BY call_key
                         HAVING min(session_id) IS DISTINCT FROM max(session_id))
    GROUP BY k.call_key
)
SELECT kept.* REPLACE (coalesce(moved.session_id, kept.session_id) AS session_id)
FROM kept LEFT JOIN moved ON moved.call_key = kept.call_key;
