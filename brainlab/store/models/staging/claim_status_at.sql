-- SPEC §2.6 a claim is stale when open and as_of > opened_at + ttl (claim's own ttl_hours,
-- else by type, else the default: spec/vocabulary.py CLAIM_TTL_DEFAULT_HOURS, 4 h), or when
-- its file already says stale. expires_at wins when given.
CREATE OR REPLACE MACRO claim_status_at(as_of) AS TABLE
WITH timed AS (
    SELECT c.*, coalesce(c.ttl_hours, t.ttl_hours,
                         {{ vocabulary.CLAIM_TTL_DEFAULT_HOURS }}) AS ttl_in_force
    FROM claims c LEFT JOIN claim_ttl t ON t.type = lower(c.type)
), expiring AS (
    SELECT *, coalesce(expires_at, opened_at + to_minutes(CAST(round(ttl_in_force * 60)
                                                                AS BIGINT))) AS expires_in_force
    FROM timed
)
SELECT sess_id, type, scope, agent, status, opened_at, closed_at,
    ttl_in_force                                                              AS ttl_hours,
    expires_in_force                                                          AS expires_at,
    status = 'stale' OR (status = 'open' AND CAST(as_of AS TIMESTAMP) > expires_in_force)
                                                                              AS is_stale,
    CAST(as_of AS TIMESTAMP) - opened_at                                      AS open_for,
    source_file
FROM expiring;
