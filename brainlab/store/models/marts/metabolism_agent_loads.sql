CREATE OR REPLACE VIEW metabolism_agent_loads AS SELECT * FROM agent_loads_for();
