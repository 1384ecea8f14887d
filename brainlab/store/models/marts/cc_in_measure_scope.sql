-- The sessions one refresh of cc_session_measures recomputes (brainlab/store/measured.py sets
-- the variable cc_measure_sessions for that statement; unset, every session is in scope).
-- The raw rows are cut to those sessions before each window, every window's partitions kept
-- whole, so an incremental run costs what it touched, not the whole store.
CREATE OR REPLACE MACRO cc_in_measure_scope(session) AS
    getvariable('cc_measure_sessions') IS NULL
    OR list_contains(getvariable('cc_measure_sessions'), session);
