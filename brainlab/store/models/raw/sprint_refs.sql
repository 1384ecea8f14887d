-- One row per sprint, agent, file and kind of reference (SPEC §4.4 "referenced").
CREATE TABLE IF NOT EXISTS sprint_refs (
    sprint_id   VARCHAR NOT NULL,
    agent       VARCHAR NOT NULL,
    path        VARCHAR NOT NULL,
    kind        VARCHAR NOT NULL,
    source_file VARCHAR NOT NULL,
    line        BIGINT
);
