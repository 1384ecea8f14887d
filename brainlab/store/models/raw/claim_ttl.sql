-- A lookup table: emptied and filled from brainlab/spec/vocabulary.py CLAIM_TTL_HOURS
-- at every set-up (store/schema.py::_write_lookups); derived, so an upgrade drops it.
CREATE OR REPLACE TABLE claim_ttl (
    type VARCHAR PRIMARY KEY,
    ttl_hours DOUBLE NOT NULL
);
