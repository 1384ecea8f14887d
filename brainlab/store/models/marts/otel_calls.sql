-- Each call of cc_requests with who made it and why, from its api_request event (request id).
CREATE OR REPLACE VIEW otel_calls AS
SELECT c.session_id, c.agent_id, c.request_id, c.message_id, c.model, c.ts, c.input_tokens,
       c.output_tokens, c.cache_creation_tokens, c.cache_read_tokens, c.cost_usd, c.project,
       c.source, coalesce(e.user_email, e.user_account_uuid, e.user_id) AS user_name,
       e.user_email, e.user_account_uuid, e.organization_id, e.query_source, e.agent_name,
       e.skill_name, e.mcp_server_name, e.effort, coalesce(l.speed, e.speed) AS speed,
       e.ttft_ms, e.duration_ms, e.cost_usd AS event_cost_usd, e.app_version
FROM cc_requests c
LEFT JOIN (SELECT request_id, any_value(speed) AS speed FROM cc_request_lines
           WHERE request_id IS NOT NULL GROUP BY request_id) l USING (request_id)
LEFT JOIN otel_api_requests e ON e.request_id = c.request_id;
