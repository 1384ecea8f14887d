-- A lookup table: emptied and filled from brainlab/spec/vocabulary.py SESSION_CATEGORIES
-- at every set-up (store/schema.py::_write_lookups); derived, so an upgrade drops it.
CREATE OR REPLACE TABLE session_categories (
    type VARCHAR PRIMARY KEY,
    category VARCHAR NOT NULL
);
