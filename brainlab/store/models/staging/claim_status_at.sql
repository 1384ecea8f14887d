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
