CREATE TABLE IF NOT EXISTS focus_files (
    source_file VARCHAR NOT NULL,
    modified_at TIMESTAMP,
    lines       INTEGER,
    text        VARCHAR
);
