-- One row per file named in a block: loaded for an agent (source map), excluded, released
-- (libérer) or kept (garder); plus one 'agent' row (path NULL) per agent of a source map.
CREATE TABLE IF NOT EXISTS broker_block_files (
    block_id    VARCHAR NOT NULL,
    sprint      VARCHAR NOT NULL,
    agent       VARCHAR,
    path        VARCHAR,
    action      VARCHAR NOT NULL,
    reason      VARCHAR,
    source_file VARCHAR NOT NULL,
    line        BIGINT
);
