-- The store's own bookkeeping (schema and catalog fingerprints, ingest marks, lake): created
-- first by store/schema.py::apply, which reads it to decide what to rebuild.
CREATE TABLE IF NOT EXISTS brainlab_meta (key VARCHAR PRIMARY KEY, value VARCHAR);
