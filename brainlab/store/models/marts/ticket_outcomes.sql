-- A ticket is "bad" when it reached the supervisor (SPEC §6.6 wake-ups > 0, view tickets):
-- a supervisor decision during the circuit, or the ticket ended or escalated. Open tickets
-- (no end event) and tickets whose end was lost to a bad line (outcome unknown) that have
-- not reached the supervisor are unlabelled (is_bad NULL): the regulator replay skips them. The label is the recorded
-- history, i.e. what happened under the rules the journals followed (the SPEC defaults).
CREATE OR REPLACE VIEW ticket_outcomes AS
SELECT
    ticket,
    started_at,
    week_first_day(started_at)               AS week_start,
    week_label(started_at)         AS iso_week,
    outcome,
    decisions_by_supervisor,
    wakeups,
    sessions,
    tokens,
    CASE WHEN wakeups > 0 THEN true
         WHEN outcome IN ('open', 'unknown') THEN NULL
         ELSE false END                                        AS is_bad,
    CASE WHEN outcome IN ('ended', 'escalated') AND decisions_by_supervisor > 0
              THEN 'supervisor-decision+' || outcome
         WHEN outcome IN ('ended', 'escalated') THEN outcome
         WHEN decisions_by_supervisor > 0 THEN 'supervisor-decision' END AS bad_reason
FROM tickets
WHERE started_at IS NOT NULL;
