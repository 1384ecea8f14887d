-- Cost by plugin and by skill (issue 45 item 4): every deduplicated call (cc_requests) once
-- per dimension, grouped by what it worked for. The line's attributionPlugin /
-- attributionSkill (issue 45 rule 6), else for the skill its api_request event's skill.name
-- (telemetry, the same request id); a call naming none is '(none)', so each dimension's rows
-- add up to every call: costs summed as DECIMAL(38,18), exactly.
CREATE OR REPLACE VIEW usage_attribution AS
WITH c AS (
    SELECT c.plugin, coalesce(c.skill, e.skill_name) AS skill,
           CASE WHEN c.skill IS NOT NULL THEN 'line'
                WHEN e.skill_name IS NOT NULL THEN 'telemetry' END AS skill_from,
           c.input_tokens, c.output_tokens, c.cache_creation_tokens, c.cache_read_tokens,
           c.cost_usd
    FROM cc_requests c
    LEFT JOIN (SELECT request_id, any_value(skill_name) AS skill_name FROM otel_api_requests
               WHERE request_id IS NOT NULL AND skill_name IS NOT NULL GROUP BY request_id) e
      ON e.request_id = c.request_id AND c.skill IS NULL
), d AS (
    SELECT 'plugin' AS dimension, coalesce(plugin, '(none)') AS value,
           CASE WHEN plugin IS NOT NULL THEN 'line' END AS attributed_by, c.* EXCLUDE (plugin, skill, skill_from)
    FROM c
    UNION ALL
    SELECT 'skill', coalesce(skill, '(none)'), skill_from, c.* EXCLUDE (plugin, skill, skill_from)
    FROM c
)
SELECT dimension, value, string_agg(DISTINCT attributed_by, ', ' ORDER BY attributed_by)
           AS attributed_by,
       count(*) AS requests,
       CAST(sum(input_tokens) AS BIGINT) AS input_tokens,
       CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
       CAST(sum(cache_creation_tokens) AS BIGINT) AS cache_creation_tokens,
       CAST(sum(cache_read_tokens) AS BIGINT) AS cache_read_tokens,
       CAST(sum(input_tokens + output_tokens + cache_creation_tokens + cache_read_tokens)
            AS BIGINT) AS total_tokens,
       CAST(sum(CAST(cost_usd AS DECIMAL(38, 18))) AS DOUBLE) AS cost_usd,
       count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced_requests
FROM d
GROUP BY dimension, value;
