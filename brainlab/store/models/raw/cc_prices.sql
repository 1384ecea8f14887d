-- The price tables loaded by the ingests (the base, brainlab's file, the user's override): one
-- row per model and period of validity (brainlab/store/prices.py), and per version: a table
-- that differs from the last stored one is added as the next version, the earlier ones kept
-- (issue 45: a call keeps the prices it was given at its ingest until `brainlab prices
-- --reprice`). A call takes the row of its version in force on its UTC day.
CREATE TABLE IF NOT EXISTS cc_prices (
    model                    VARCHAR NOT NULL,
    input_usd_mtok           DOUBLE,
    output_usd_mtok          DOUBLE,
    cache_write_5m_usd_mtok  DOUBLE,
    cache_write_1h_usd_mtok  DOUBLE,
    cache_read_usd_mtok      DOUBLE,
    long_context_threshold   BIGINT,
    long_input_multiplier    DOUBLE,
    long_output_multiplier   DOUBLE,
    fast_multiplier          DOUBLE,
    valid_from               DATE,
    valid_until              DATE,
    source                   VARCHAR,
    source_date              DATE,
    prices_as_of             DATE,
    prices_file              VARCHAR,
    price_version            BIGINT    -- 1, 2, ...: each table loaded that differed from the last
);
