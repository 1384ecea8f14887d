CREATE TABLE IF NOT EXISTS ingest_errors (
    file     VARCHAR NOT NULL,
    line     BIGINT,
    reason   VARCHAR NOT NULL,
    source   VARCHAR NOT NULL,
    severity VARCHAR NOT NULL DEFAULT 'error'
);
