-- One row per sprint and planned agent (SPEC §4.2 agents_prévus).
CREATE TABLE IF NOT EXISTS sprint_agents (
    sprint_id   VARCHAR NOT NULL,
    agent       VARCHAR NOT NULL,
    domain      VARCHAR,
    open_todos  VARCHAR[],
    loaded      VARCHAR[],
    source_file VARCHAR NOT NULL,
    line        BIGINT
);
