-- SPEC §2.3 session contexts
CREATE TABLE IF NOT EXISTS session_contexts (
    source_file     VARCHAR NOT NULL,
    session_type    VARCHAR NOT NULL,
    description     VARCHAR,
    boot_files      INTEGER,
    target_l0_pct   DOUBLE,
    target_l1_pct   DOUBLE,
    target_l2_pct   DOUBLE,
    target_boot_pct DOUBLE,
    ttl_hours       DOUBLE
);
