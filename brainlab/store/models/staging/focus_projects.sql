-- The projects helloWorld's focus names (seed context-broker lines 56-61, third signal:
-- "helloWorld a identifié un projet actif au boot — focus.md"). The focus is free text, so a
-- project is named when one of its words (letters, digits, joined by - _ .) is, case
-- aside, a project the brain knows: a declared contract's id or alias (projets/<p>.md) or
-- a sprint record's project. A focus naming several is ambiguous: the replay takes a focus
-- that names exactly one (brainlab/sim/broker_scope.py, docs/broker.md section 6.1).
CREATE OR REPLACE VIEW focus_projects AS
WITH lines AS (
    SELECT f.source_file, f.modified_at, l.line, l.line_text
    FROM focus_files f,
         unnest(string_split(replace(coalesce(f.text, ''), chr(13), ''), chr(10)))
             WITH ORDINALITY AS l(line_text, line)
), words AS (
    SELECT source_file, modified_at, line,
           unnest(regexp_extract_all(lower(line_text), '[\pL\pN]+(?:[_.-][\pL\pN]+)*')) AS word
    FROM lines
), known AS (
    SELECT DISTINCT project, lower(project) AS word FROM project_contracts
    UNION
    SELECT DISTINCT project, lower(alias) FROM project_contracts WHERE alias IS NOT NULL
    UNION
    SELECT DISTINCT project, lower(project) FROM sprints WHERE project IS NOT NULL
), named AS (
    SELECT w.source_file, any_value(w.modified_at) AS modified_at, k.project,
           CAST(min(w.line) AS BIGINT) AS first_line, count(*) AS mentions
    FROM words w JOIN known k ON k.word = w.word
    GROUP BY w.source_file, k.project
)
SELECT source_file, modified_at, project, first_line, mentions,
       count(*) OVER (PARTITION BY source_file) AS projects_named
FROM named;
