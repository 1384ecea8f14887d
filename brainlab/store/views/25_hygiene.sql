-- Agent cost, claim staleness and workspace rules (SPEC §2.5, §2.6, §5).

-- SPEC §2.5 per-agent cost over the sessions that list agents: how often loaded, what it
-- costs (bytes/4 per load), and whether sessions show any use of it. "Use" = the agent is
-- named in the notes or signals of a session that loaded it (transcript-measured use is
-- added by the transcript views). always_loaded_share / little_use_share: SPEC §2.5 trend
-- questions "always loaded for nothing?", as parameters.
CREATE OR REPLACE MACRO agent_cost_for(always_loaded_share := 0.80, little_use_share := 0.10)
AS TABLE
WITH with_agents AS (
    SELECT DISTINCT sess_id FROM metabolism_agent_loads
), loads AS (
    SELECT l.sess_id, l.agent, any_value(l.tokens_estimated) AS tokens_estimated
    FROM metabolism_agent_loads l GROUP BY l.sess_id, l.agent
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

CREATE OR REPLACE VIEW agent_cost AS SELECT * FROM agent_cost_for();

-- SPEC §2.6 a claim is stale when open and as_of > opened_at + ttl (claim's own ttl_hours,
-- else by type, else 4 h), or when its file already says stale. expires_at wins when given.
CREATE OR REPLACE MACRO claim_status_at(as_of) AS TABLE
SELECT c.sess_id, c.type, c.scope, c.agent, c.status, c.opened_at, c.closed_at,
    coalesce(c.ttl_hours, t.ttl_hours, 4.0)                                     AS ttl_hours,
    coalesce(c.expires_at, c.opened_at + to_minutes(CAST(round(
        coalesce(c.ttl_hours, t.ttl_hours, 4.0) * 60) AS BIGINT)))             AS expires_at,
    c.status = 'stale' OR (c.status = 'open' AND CAST(as_of AS TIMESTAMP) > coalesce(
        c.expires_at, c.opened_at + to_minutes(CAST(round(
        coalesce(c.ttl_hours, t.ttl_hours, 4.0) * 60) AS BIGINT))))            AS is_stale,
    CAST(as_of AS TIMESTAMP) - c.opened_at                                      AS open_for,
    c.source_file
FROM claims c LEFT JOIN claim_ttl t ON t.type = lower(c.type);

CREATE OR REPLACE VIEW stale_claims AS
SELECT * FROM claim_status_at(CAST(current_timestamp AS TIMESTAMP)) WHERE is_stale;

-- SPEC §5 workspace rules, one row per violation.
CREATE OR REPLACE VIEW workspace_violations AS
SELECT workspace, 'readme-too-long' AS rule, 'README.md' AS file_name, NULL::INTEGER AS line,
    'README.md has ' || readme_lines || ' lines (max 10)' AS detail
FROM workspaces WHERE readme_lines > 10
UNION ALL
SELECT workspace, 'ram-too-long', file_name, NULL,
    'ram.md has ' || active_lines || ' active lines (max 50)'
FROM workspace_files WHERE file_name = 'ram.md' AND active_lines > 50
UNION ALL
SELECT workspace, 'malformed-log-line', 'log.md', line,
    'not "<date time> | <question> | choisi : <choice> | raison : <reason>": ' || raw_line
FROM decisions WHERE NOT is_well_formed
UNION ALL
SELECT workspace, 'file-not-allowed', file_name, NULL,
    file_name || ' is not one of README.md, ram.md, log.md, feedback.md'
FROM workspace_files
WHERE file_name NOT IN ('README.md', 'ram.md', 'log.md', 'feedback.md')
UNION ALL
SELECT workspace, 'unknown-archive', 'README.md', NULL,
    CASE WHEN archive IS NULL THEN 'no archive value under ## Lifecycle'
         ELSE 'archive: ' || archive || ' (expected auto, keep, 30d, 90d or permanent)' END
FROM workspaces
WHERE archive IS NULL OR archive NOT IN ('auto', 'keep', '30d', '90d', 'permanent')
UNION ALL
SELECT DISTINCT f.workspace, 'missing-readme', 'README.md', NULL, 'workspace has no README.md'
FROM workspace_files f
WHERE NOT EXISTS (SELECT 1 FROM workspaces w WHERE w.workspace = f.workspace);
