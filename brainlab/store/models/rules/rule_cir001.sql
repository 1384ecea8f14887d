-- SPEC §6.2: a stop's name and code agree with the stop table.
CREATE OR REPLACE VIEW rule_cir001 AS
SELECT 'ticket' AS subject_kind, e.ticket AS subject, e.event_at AS occurred_at, e.source_file AS file,
       e.line,
       'stop ' || e.name || ' carries code ' || coalesce(CAST(e.code AS VARCHAR), 'none')
           || ' (the stop table says ' || coalesce(CAST(s.code AS VARCHAR), 'none') || ')'
           AS message,
       json_object('name', e.name, 'code', e.code, 'expected_code', s.code)::VARCHAR AS evidence
FROM circuit_events e JOIN stop_codes s ON s.name = e.name
WHERE e.event = 'stop' AND e.code IS DISTINCT FROM s.code;
