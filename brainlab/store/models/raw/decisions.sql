CREATE TABLE IF NOT EXISTS decisions (
    source_file    VARCHAR NOT NULL,
    workspace      VARCHAR NOT NULL,
    line           INTEGER NOT NULL,
    is_well_formed BOOLEAN NOT NULL,
    decided_on     VARCHAR,
    decided_time   VARCHAR,
    question       VARCHAR,
    choice         VARCHAR,
    reason         VARCHAR,
    raw_line       VARCHAR
);
