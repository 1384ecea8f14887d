-- SPEC §2.5 agents loaded per session, on a basis like scored_sessions: logged rows are the
-- log's "Agents chargés" list, measured rows the agents/*.md files the transcript read into
-- its context (the SPEC §2.5 price; launched subagents run in their own context and keep
-- their measured cost in transcript_agent_loads). The estimated price is bytes/4 of agents/<agent>.md, falling back to
-- the log's own "~Xk" estimate, or to the bytes the transcript read / 4.
CREATE OR REPLACE MACRO agent_loads_for(basis := 'best') AS TABLE
WITH s AS (
    SELECT sess_id, basis_used, transcript_session FROM basis_sessions(basis := basis)
), known AS (
    SELECT agent, any_value(tokens_estimated) AS tokens_estimated FROM agents GROUP BY agent
), logged AS (
    SELECT l.sess_id, l.agent, coalesce(a.tokens_estimated, l.tokens_logged) AS tokens_estimated,
           l.tokens_logged, a.tokens_estimated IS NOT NULL AS is_known_agent,
           'metabolism' AS source, l.source_file
    FROM raw_agent_loads l
    JOIN s ON s.sess_id = l.sess_id AND s.basis_used = 'logged'
    LEFT JOIN known a ON a.agent = l.agent
), measured AS (
    SELECT s.sess_id, t.agent,
           CAST(coalesce(a.tokens_estimated, t.tokens_estimated) AS BIGINT) AS tokens_estimated,
           CAST(NULL AS BIGINT) AS tokens_logged, a.tokens_estimated IS NOT NULL AS is_known_agent,
           'transcript' AS source, t.source_file
    FROM transcript_agent_loads t
    JOIN s ON s.transcript_session = t.sess_id AND s.basis_used = 'measured'
    LEFT JOIN known a ON a.agent = t.agent
    WHERE t.agent IS NOT NULL AND t.agent <> '' AND t.tokens_estimated IS NOT NULL
)
SELECT * FROM logged UNION ALL BY NAME SELECT * FROM measured;
