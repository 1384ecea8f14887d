-- One row per file size a record gave (SPEC §2.5: tokens = bytes / 4).
CREATE TABLE IF NOT EXISTS file_sizes (
    project     VARCHAR NOT NULL,
    path        VARCHAR NOT NULL,
    bytes       BIGINT NOT NULL,
    source_file VARCHAR NOT NULL,
    line        BIGINT
);
