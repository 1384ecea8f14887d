CREATE TABLE IF NOT EXISTS workspace_files (
    source_file  VARCHAR NOT NULL,
    workspace    VARCHAR NOT NULL,
    file_name    VARCHAR NOT NULL,
    bytes        BIGINT,
    lines        INTEGER,
    active_lines INTEGER
);
