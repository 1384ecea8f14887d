-- Every attribute without a typed column: one row per (record, key), values as text.
CREATE TABLE IF NOT EXISTS otel_attributes (
    file_key VARCHAR NOT NULL,
    line     BIGINT NOT NULL,
    record   INTEGER NOT NULL,
    signal   VARCHAR NOT NULL,
    level    VARCHAR NOT NULL,
    key      VARCHAR NOT NULL,
    value    VARCHAR
);
