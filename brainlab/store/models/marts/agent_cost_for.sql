-- SPEC §2.5 per-agent cost over the sessions that list agents: how often loaded, what it
-- costs (bytes/4 per load), and whether sessions show any use of it. "Use" = the agent is
-- named in the notes or signals of a session that loaded it (transcript-measured use is
-- added by the transcript views). always_loaded_share / little_use_share: SPEC §2.5 trend
-- questions "always loaded for nothing?", as parameters. until: only the sessions started
-- before it (a past week's report reads nothing after the week, issue 43); NULL: every one.
CREATE OR REPLACE MACRO agent_cost_for(  -- defaults: brainlab/spec/thresholds.py
    always_loaded_share := {{ thresholds.always_loaded_share }},
    little_use_share := {{ thresholds.little_use_share }},
    until := NULL) AS TABLE
WITH loads AS MATERIALIZED (  -- metabolism_agent_loads evaluated once (it was 2 expansions)
    SELECT l.sess_id, l.agent, any_value(l.tokens_estimated) AS tokens_estimated
    FROM metabolism_agent_loads l
    WHERE until IS NULL OR l.sess_id IN (SELECT sess_id FROM metabolism_sessions
                                         WHERE started_at < CAST(until AS TIMESTAMP))
    GROUP BY l.sess_id, l.agent
), with_agents AS (
    SELECT DISTINCT sess_id FROM loads
), used AS (
    SELECT l.agent, l.sess_id
    FROM loads l JOIN metabolism_sessions s USING (sess_id)
    WHERE contains(lower(coalesce(s.notes, '') || ' ' || array_to_string(coalesce(
        s.signals_logged, []), ' ')), lower(l.agent))
), per_agent AS (
    SELECT l.agent,
        count(DISTINCT l.sess_id)                       AS sessions_loaded,
        sum(l.tokens_estimated)                         AS tokens_total,
        count(DISTINCT u.sess_id)                       AS sessions_used
    FROM loads l LEFT JOIN used u ON u.agent = l.agent AND u.sess_id = l.sess_id
    GROUP BY l.agent
)
SELECT p.agent, a.context_tier, a.tokens_estimated AS tokens_per_load,
    p.sessions_loaded,
    p.sessions_loaded / (SELECT count(*) FROM with_agents) AS share_of_sessions,
    p.tokens_total,
    p.sessions_used,
    p.sessions_used / p.sessions_loaded                   AS use_share,
    p.sessions_loaded / (SELECT count(*) FROM with_agents) >= always_loaded_share
        AS is_always_loaded,
    p.sessions_used / p.sessions_loaded < little_use_share AS is_little_used
FROM per_agent p
LEFT JOIN (SELECT agent, any_value(context_tier) AS context_tier,
                  any_value(tokens_estimated) AS tokens_estimated
           FROM agents GROUP BY agent) a USING (agent);
