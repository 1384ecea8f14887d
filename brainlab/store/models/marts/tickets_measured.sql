-- The protocol's tickets (SPEC §6.6): what their journals log beside what their Claude Code
-- sessions measured.
CREATE OR REPLACE VIEW tickets_measured AS
SELECT t.ticket, t.outcome, t.sessions, t.tokens, u.claude_sessions, u.measured_tokens,
       u.measured_cost_usd
FROM tickets t LEFT JOIN ticket_usage u USING (ticket);
