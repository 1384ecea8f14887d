-- The brain's clock: the latest moment any brain file records. Time rules (TTLs, retention)
-- are judged at this instant, not at the wall clock, so a check is reproducible.
CREATE OR REPLACE VIEW brain_clock AS
SELECT max(t) AS as_of FROM (
    SELECT max(started_at) AS t FROM raw_metabolism_logs
    UNION ALL SELECT max(greatest(opened_at, closed_at)) FROM claims
    UNION ALL SELECT max(greatest(started_at, ended_at)) FROM sprints
    UNION ALL SELECT max(event_at) FROM circuit_events
    UNION ALL SELECT max(TRY_CAST(decided_on AS TIMESTAMP)) FROM decisions
);
