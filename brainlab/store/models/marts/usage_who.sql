-- Usage by UTC day and who spent it: user, organization, query source, agent, skill, MCP
-- server, effort, speed, and the source of the calls (transcript, otel, otel-genai, ...).
-- From usage_by, the one place usage is summed (`brainlab usage total --by DIM`).
CREATE OR REPLACE VIEW usage_who AS
SELECT period AS day, user_name, organization AS organization_id, query_source, agent_name,
       skill AS skill_name, mcp_server AS mcp_server_name, effort, speed, source, model,
       input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens, total_tokens,
       cost_usd, requests
FROM usage_by(calls := usage_calls, grain := 'day',
              dims := ['user', 'organization', 'query_source', 'agent_name', 'skill',
                       'mcp_server', 'effort', 'speed', 'source', 'model']);
