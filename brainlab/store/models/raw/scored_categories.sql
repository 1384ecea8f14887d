-- A lookup table: emptied and filled from brainlab/spec/vocabulary.py SCORED_CATEGORIES
-- at every set-up (store/schema.py::_write_lookups); derived, so an upgrade drops it.
CREATE OR REPLACE TABLE scored_categories (
    category VARCHAR PRIMARY KEY
);
