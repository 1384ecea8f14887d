CREATE OR REPLACE VIEW agent_loads AS
SELECT * FROM agent_loads_for(basis := 'logged')
UNION ALL BY NAME
SELECT * FROM transcript_agent_loads;
