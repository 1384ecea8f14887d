CREATE OR REPLACE VIEW agent_cost AS SELECT * FROM agent_cost_for();
