-- One row per compaction boundary (system lines compact_boundary / microcompact_boundary).
CREATE TABLE IF NOT EXISTS cc_compactions (
    session_id  VARCHAR,
    agent_id    VARCHAR,
    ts          TIMESTAMP,
    kind        VARCHAR,
    trigger     VARCHAR,
    pre_tokens  BIGINT,
    source_file VARCHAR NOT NULL,
    line        BIGINT NOT NULL
);
