-- The change points of every trend series as `brainlab trends --json` lists them (issue 43
-- item 2), written by brainlab/metrics/trends.py's store_changes() after `brainlab ingest
-- brain|sprints|circuits` and `brainlab demo`: the scan is ruptures' PELT in Python, so its result
-- is stored and SQL reads it (view marts/trend_changes.sql).
CREATE TABLE IF NOT EXISTS trend_change_scan (
    scale       VARCHAR,  -- week or day: the periods scanned
    series      VARCHAR,
    metric      VARCHAR,
    period      VARCHAR,  -- the week or day the change starts
    week        VARCHAR,  -- that period's week
    direction   VARCHAR,
    before      DOUBLE,
    after       DOUBLE,
    difference  DOUBLE,
    low         DOUBLE,
    high        DOUBLE,
    verdict     VARCHAR,
    scanned_at  TIMESTAMP  -- when the scan ran (UTC)
);
