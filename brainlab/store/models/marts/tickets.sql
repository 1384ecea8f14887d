-- SPEC §6.6: what to measure per ticket. Wake-ups = supervisor decisions + the référent-technique
-- verdicts that went up to the responsible person (docs/regulator.md, circuit events) + 1 when the
-- ticket ended or was escalated (it landed on the supervisor); loop sessions = sessions spent after a
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
           count(*) FILTER (WHERE event = 'verdict' AND verdict = 'monte au responsable') AS verdicts_raised,
           count(*) FILTER (WHERE event = 'answer') AS plan_answers,
           count(*) FILTER (WHERE event = 'answer' AND json_extract_string(extra, '$.answer') = 'CHANGE') AS plan_changes,
           count(*) FILTER (WHERE event = 'decouverte') AS findings_filed,
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
       a.verdicts_raised, a.plan_answers, a.plan_changes, a.findings_filed,
       a.decisions_by_supervisor + a.verdicts_raised
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
