-- SPEC §7: one API call is several lines repeating message.id, requestId and usage;
-- deduplicate on message.id across ALL files (docs/transcripts.md, counting rules): a /btw
-- side question replays its parent's message under the same message.id and a new requestId
-- (ccusage PR #1155, issue #913), and a message.id names one API response. A line without
-- message.id is its own call. Kept: the main chain's copy (agent_id NULL) over a sidechain
-- or subagent replay, then the latest timestamp, then the most complete line (largest
-- output_tokens: streaming copies with equal timestamps), then file path and line number.
-- The calls one incremental refresh of cc_usage_rollup recomputes (brainlab/store/
-- usage_rollup.py sets the variable cc_usage_keys for that statement; unset, every call is in
-- scope): a call's lines are kept or cut together, so its deduplication is unchanged.
CREATE OR REPLACE VIEW cc_request_dedup AS
SELECT *
FROM cc_request_lines
WHERE getvariable('cc_usage_keys') IS NULL
   OR coalesce(message_id, source_file || ':' || line)
      IN (SELECT unnest(getvariable('cc_usage_keys')))
QUALIFY row_number() OVER (
    PARTITION BY coalesce(message_id, source_file || ':' || line)
    ORDER BY agent_id IS NULL DESC, ts DESC NULLS LAST, output_tokens DESC NULLS LAST,
             source_file DESC, line DESC) = 1;
