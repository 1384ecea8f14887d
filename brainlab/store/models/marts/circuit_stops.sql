-- SPEC §6.2 / §6.3: one row per stop, with its relaunch rank (1 = first time; n = the stop
-- came back n-1 times in a row, same name, step and component) and who decided it first.
CREATE OR REPLACE VIEW circuit_stops AS
WITH stops AS (
    SELECT ticket, episode, event_at, name, code, step, component, stop_kind, new_fact,
           coalesce(CAST(code AS VARCHAR), name) AS code_label,
           -- a stop without step or component (optional, SPEC §6.7) is keyed by what it has
           name || '|' || coalesce(step, '') || '|' || coalesce(component, '') AS stop_key
    FROM circuit_events_ordered WHERE event = 'stop'
), islands AS (
    SELECT *, episode - row_number() OVER (PARTITION BY ticket, stop_key ORDER BY episode) AS island,
           lead(stop_key) OVER (PARTITION BY ticket ORDER BY episode) AS next_stop_key
    FROM stops
), first_decision AS (
    SELECT ticket, episode, arg_min(decided_by, seq) AS decided_by,
           arg_min(new_fact, seq) AS decision_new_fact,
           count(*) FILTER (WHERE decided_by = 'supervisor') AS supervisor_decisions
    FROM circuit_events_ordered WHERE event = 'decision' GROUP BY ticket, episode
), costs AS (
    SELECT ticket, episode, count(*) AS sessions, sum(tokens) AS tokens
    FROM circuit_events_ordered WHERE event = 'session' GROUP BY ticket, episode
)
SELECT i.ticket, i.episode, i.event_at, i.code, i.code_label, i.name, i.step, i.component,
       i.stop_kind,
       row_number() OVER (PARTITION BY i.ticket, i.stop_key, i.island ORDER BY i.episode) AS relaunch_rank,
       d.decided_by, coalesce(i.new_fact, d.decision_new_fact) AS new_fact, coalesce(d.supervisor_decisions, 0) AS supervisor_decisions,
       coalesce(c.sessions, 0) AS sessions, coalesce(c.tokens, 0) AS tokens,
       coalesce(i.next_stop_key = i.stop_key, false) AS is_loop
FROM islands i
LEFT JOIN first_decision d USING (ticket, episode)
LEFT JOIN costs c USING (ticket, episode);
