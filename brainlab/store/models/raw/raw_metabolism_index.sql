-- SPEC §3.1 index progression/metabolism/README.md
CREATE TABLE IF NOT EXISTS raw_metabolism_index (
    source_file         VARCHAR NOT NULL,
    line                INTEGER,
    log_date            VARCHAR,
    sess_id             VARCHAR,
    type                VARCHAR,
    mode                VARCHAR,
    health_score        DOUBLE,
    handoff_level       VARCHAR,
    cold_start_kpi_pass BOOLEAN,
    thresholds          VARCHAR
);
