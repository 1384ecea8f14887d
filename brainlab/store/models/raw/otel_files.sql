-- One row per telemetry file content: where it was last seen and how far it was read.
CREATE TABLE IF NOT EXISTS otel_files (
    file_key     VARCHAR PRIMARY KEY,
    source_file  VARCHAR NOT NULL,
    head_bytes   BIGINT NOT NULL,
    encoding     VARCHAR,
    bytes_done   BIGINT NOT NULL,
    lines_done   BIGINT NOT NULL,
    size_seen    BIGINT,
    runs         INTEGER,
    records      BIGINT,
    errors       BIGINT
);
