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

-- SPEC §6.6: what to measure per ticket. Wake-ups = supervisor decisions + 1 when the ticket
-- ended or was escalated (it landed on the supervisor); loop sessions = sessions spent after a
-- stop that came back next (same name, step, component): a relaunch that did not get past it.
-- A ticket is listed when any of its events loaded or any problem names it (SPEC §6.7: never
-- silently absent). replayable: it has an end and lost no stop or end to a bad line.
CREATE OR REPLACE VIEW tickets AS
WITH ev AS (SELECT * FROM circuit_events_ordered),
problems AS (
    SELECT ticket,
           count(*) FILTER (WHERE effect = 'event_dropped') AS events_dropped,
           count(*) FILTER (WHERE effect = 'warning') AS warnings,
           count(*) FILTER (WHERE effect = 'not_replayable') AS lost_structure,
           bool_or(effect = 'not_replayable' AND event = 'end') AS lost_end,
           string_agg(CASE WHEN effect = 'not_replayable' THEN 'line ' || line || ': ' || reason END,
                      '; ' ORDER BY line) AS not_replayable_reason
    FROM circuit_problems GROUP BY ticket
), all_tickets AS (
    SELECT DISTINCT ticket FROM circuit_events UNION SELECT ticket FROM problems
), agg AS (
    SELECT ticket,
           min(event_at) AS started_at,
           max(event_at) AS last_event_at,
           count(*) FILTER (WHERE event = 'stop') AS stops,
           count(*) FILTER (WHERE event = 'stop' AND code = 15) AS stops_15,
           count(*) FILTER (WHERE event = 'stop' AND code = 16) AS stops_16,
           count(*) FILTER (WHERE event = 'stop' AND code = 17) AS stops_17,
           count(*) FILTER (WHERE event = 'stop' AND code = 18) AS stops_18,
           count(*) FILTER (WHERE event = 'stop' AND code = 19) AS stops_19,
           count(*) FILTER (WHERE event = 'stop' AND code = 20) AS stops_20,
           count(*) FILTER (WHERE event = 'stop' AND code = 23) AS stops_23,
           count(*) FILTER (WHERE event = 'stop' AND name = 'controles') AS stops_controles,
           count(*) FILTER (WHERE event = 'decision') AS decisions,
           count(*) FILTER (WHERE event = 'decision' AND decided_by = 'table') AS decisions_by_table,
           count(*) FILTER (WHERE event = 'decision' AND decided_by = 'regulator') AS decisions_by_regulator,
           count(*) FILTER (WHERE event = 'decision' AND decided_by = 'supervisor') AS decisions_by_supervisor,
           count(*) FILTER (WHERE event = 'decision' AND kind = 'RELANCE_REPRENDRE') AS decisions_relance_reprendre,
           count(*) FILTER (WHERE event = 'decision' AND kind = 'RELANCE_DEPUIS') AS decisions_relance_depuis,
           count(*) FILTER (WHERE event = 'decision' AND kind = 'MONTE') AS decisions_monte,
           count(*) FILTER (WHERE event = 'admission' AND NOT accepted AND coalesce(reason, '') <> 'fiche-absente') AS refused_decisions,
           count(*) FILTER (WHERE event = 'admission' AND NOT accepted AND reason = 'fiche-absente') AS fiche_reasks,
           count(*) FILTER (WHERE event = 'session' AND agent = 'questionneur') AS questioning_rounds,
           count(*) FILTER (WHERE event = 'review') AS reviews,
           count(*) FILTER (WHERE event = 'review' AND verdict = 'RENDU') AS reviews_rendered,
           count(*) FILTER (WHERE event = 'decision' AND kind LIKE 'RELANCE%' AND NOT new_fact) AS relaunches_without_new_fact,
           count(*) FILTER (WHERE event = 'session') AS sessions,
           coalesce(sum(tokens) FILTER (WHERE event = 'session'), 0) AS tokens,
           max(outcome) FILTER (WHERE event = 'end') AS end_outcome,
           max(event_at) FILTER (WHERE event = 'end' AND outcome = 'integrated') AS integrated_at
    FROM all_tickets LEFT JOIN ev USING (ticket) GROUP BY ticket
), loops AS (
    SELECT ticket, sum(sessions) AS loop_sessions FROM circuit_stops WHERE is_loop GROUP BY ticket
)
SELECT a.ticket, a.started_at, a.last_event_at, a.stops, a.stops_15, a.stops_16, a.stops_17,
       a.stops_18, a.stops_19, a.stops_20, a.stops_23, a.stops_controles, a.decisions,
       a.decisions_by_table, a.decisions_by_regulator, a.decisions_by_supervisor,
       a.decisions_relance_reprendre, a.decisions_relance_depuis, a.decisions_monte,
       a.refused_decisions, a.fiche_reasks, a.questioning_rounds, a.reviews, a.reviews_rendered,
       a.decisions_by_supervisor
         + CASE WHEN a.end_outcome IN ('ended', 'escalated') THEN 1 ELSE 0 END AS wakeups,
       a.relaunches_without_new_fact,
       coalesce(l.loop_sessions, 0) AS loop_sessions,
       a.sessions, a.tokens,
       CASE WHEN a.end_outcome IS NOT NULL THEN a.end_outcome
            WHEN coalesce(p.lost_end, false) THEN 'unknown' ELSE 'open' END AS outcome,
       a.integrated_at,
       date_diff('second', a.started_at, a.integrated_at) / 3600.0 AS hours_to_integration,
       coalesce(p.events_dropped, 0) AS events_dropped,
       coalesce(p.warnings, 0) AS warnings,
       a.end_outcome IS NOT NULL AND coalesce(p.lost_structure, 0) = 0 AS replayable,
       CASE WHEN coalesce(p.lost_structure, 0) > 0 THEN p.not_replayable_reason
            WHEN a.end_outcome IS NULL THEN 'open: no end event yet' END AS not_replayable_reason
FROM agg a LEFT JOIN loops l USING (ticket) LEFT JOIN problems p USING (ticket);
