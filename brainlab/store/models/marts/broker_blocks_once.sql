-- Broker blocks counted once (issue 28 item 4). The broker's output is written to
-- progression/broker/<date>-<sprint>.md and is also printed in the session's transcript: the
-- same block then arrives twice, once from each file. Blocks of one kind and sprint naming the
-- same (agent, file, action) rows are one block; the brain file's copy is kept (the one
-- `brainlab check` reads without a store), with the transcript's session id when it has none.
-- A map re-planned with other files is another block, and is judged too.
CREATE OR REPLACE VIEW broker_blocks_once AS
WITH content AS (
    SELECT block_id,
           string_agg(coalesce(agent, '') || chr(31) || coalesce(path, '') || chr(31) || action,
                      chr(30) ORDER BY agent, path, action) AS content
    FROM broker_block_files GROUP BY block_id
)
SELECT b.* REPLACE (coalesce(b.session_id, max(b.session_id) OVER same) AS session_id)
FROM broker_blocks b LEFT JOIN content c USING (block_id)
WINDOW same AS (PARTITION BY b.kind, b.sprint, coalesce(c.content, ''))
QUALIFY row_number() OVER (PARTITION BY b.kind, b.sprint, coalesce(c.content, '')
                           ORDER BY b.session_id IS NOT NULL, b.source_file, b.line) = 1;
