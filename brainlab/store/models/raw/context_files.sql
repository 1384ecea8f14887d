CREATE TABLE IF NOT EXISTS context_files (
    source_file  VARCHAR NOT NULL,
    session_type VARCHAR NOT NULL,
    layer        VARCHAR NOT NULL,
    position     INTEGER,
    path         VARCHAR
);
