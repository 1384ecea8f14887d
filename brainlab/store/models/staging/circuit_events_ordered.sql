-- SPEC §6.7 order: events of a ticket by ts, ties kept in file order; `episode` numbers the
-- stops (0 = before the first stop; a stop opens the episode of every event up to the next).
CREATE OR REPLACE VIEW circuit_events_ordered AS
WITH ordered AS (
    SELECT *, row_number() OVER (PARTITION BY ticket ORDER BY event_at, source_file, line) AS seq
    FROM circuit_events
)
SELECT *, sum(CASE WHEN event = 'stop' THEN 1 ELSE 0 END)
              OVER (PARTITION BY ticket ORDER BY seq ROWS UNBOUNDED PRECEDING) AS episode
FROM ordered;
