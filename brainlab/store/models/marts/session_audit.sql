CREATE OR REPLACE VIEW session_audit AS SELECT * FROM session_audit_for();
