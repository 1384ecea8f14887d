-- SPEC §2.5 / §3.1 "Agents chargés": one row per agent listed in a log
CREATE TABLE IF NOT EXISTS raw_agent_loads (
    source_file   VARCHAR NOT NULL,
    sess_id       VARCHAR NOT NULL,
    agent         VARCHAR NOT NULL,
    tokens_logged BIGINT,
    line          INTEGER
);
