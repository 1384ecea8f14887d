-- One row per file of a declared project contract (SPEC §4.1).
CREATE TABLE IF NOT EXISTS project_contracts (
    project     VARCHAR NOT NULL,
    alias       VARCHAR,
    domain      VARCHAR NOT NULL,
    path        VARCHAR NOT NULL,
    position    INTEGER NOT NULL,
    source_file VARCHAR NOT NULL,
    line        BIGINT
);
