-- Broker inhale source maps (SPEC §4.2), one row per block, agent and loaded file. Every
-- block is judged, not only the last one per sprint (a map printed then re-planned was still
-- printed), once: a brain file and a transcript carrying the same block are one (79_broker_once).
CREATE OR REPLACE VIEW broker_loads_checked AS
SELECT b.block_id, b.sprint AS sprint_id, b.project, b.session_id, b.ts, f.agent, f.path,
       f.source_file, f.line
FROM broker_block_files f JOIN broker_blocks_once b USING (block_id)
WHERE b.kind = 'inhale' AND f.action = 'load';
