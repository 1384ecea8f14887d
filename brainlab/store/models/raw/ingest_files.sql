-- The ingest log: one row per ingested file (content hash decides re-ingest), and every
-- problem met while parsing. DESIGN §3 "Ingest never loses good rows".
CREATE TABLE IF NOT EXISTS ingest_files (
    file        VARCHAR NOT NULL,
    source      VARCHAR NOT NULL,
    sha256      VARCHAR NOT NULL,
    bytes       BIGINT,
    rows_loaded BIGINT,
    errors      BIGINT,
    PRIMARY KEY (file, source)
);
