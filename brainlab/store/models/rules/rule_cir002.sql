-- SPEC §6.1 / §6.5: the developer (2.3) comes after the testwriter's red test (2.1).
CREATE OR REPLACE VIEW rule_cir002 AS
SELECT 'ticket' AS subject_kind, d.ticket AS subject, d.event_at AS occurred_at,
       d.source_file AS file, d.line,
       'step 2.3 (code) on ' || d.component || ' with no step 2.1 (tests) before it'
           AS message,
       json_object('component', d.component, 'at', d.event_at)::VARCHAR AS evidence
FROM circuit_events_ordered d
WHERE d.event = 'step' AND d.step = '2.3' AND NOT EXISTS (
    SELECT 1 FROM circuit_events_ordered t
    WHERE t.ticket = d.ticket AND t.event = 'step' AND t.step = '2.1'
      AND t.component = d.component AND t.seq < d.seq);

-- `violations`, the union of every rule view with the catalogue's id and severity, is
-- generated from the catalogue after all view files (brainlab/store/schema.py).;
