  -- a brain that keeps no claims at all is not judged

-- SPEC §2.6: open past the TTL, at the brain's clock.
CREATE OR REPLACE VIEW rule_clm001 AS
SELECT 'claim' AS subject_kind, s.sess_id AS subject, s.opened_at AS occurred_at,
       s.source_file AS file, NULL::BIGINT AS line,
       'claim ' || s.status || ' since ' || strftime(s.opened_at, '%Y-%m-%d %H:%M')
           || ', past its ' || s.ttl_hours || ' h TTL' AS message,
       json_object('type', s.type, 'opened_at', s.opened_at, 'ttl_hours', s.ttl_hours,
                   'expires_at', s.expires_at, 'as_of', k.as_of)::VARCHAR AS evidence
FROM brain_clock k, claim_status_at(coalesce(k.as_of, TIMESTAMP '1970-01-01')) s
WHERE s.is_stale AND s.status IS DISTINCT FROM 'closed';
