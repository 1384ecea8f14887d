-- Usage by UTC day and who spent it: user, organization, query source, agent, skill, MCP
-- server, effort, speed, and the source of the calls (transcript, otel, otel-genai, ...).
CREATE OR REPLACE VIEW usage_who AS
SELECT CAST(ts AS DATE) AS day, user_name, organization_id, query_source, agent_name,
       skill_name, mcp_server_name, effort, speed, source, model,
       CAST(sum(input_tokens) AS BIGINT) AS input_tokens,
       CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
       CAST(sum(cache_creation_tokens) AS BIGINT) AS cache_creation_tokens,
       CAST(sum(cache_read_tokens) AS BIGINT) AS cache_read_tokens,
       CAST(sum(input_tokens + output_tokens + cache_creation_tokens + cache_read_tokens)
           AS BIGINT) AS total_tokens,
       sum(cost_usd) AS cost_usd, count(*) AS requests
FROM otel_calls
GROUP BY ALL;
