-- The price table (package file, or the user's override), loaded at each ingest: one row per
-- model and period of validity (brainlab/store/prices.py); a call takes the row in force on
-- its UTC day.
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
    prices_file              VARCHAR
);
