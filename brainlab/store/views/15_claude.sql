-- Claude Code transcripts (SPEC §7): deduplicated API calls, prices, usage by day / ISO week /
-- session / model, transcript sessions and agent loads in the protocol's shape.

-- SPEC §7: one API call is several lines repeating message.id, requestId and usage;
-- deduplicate on message.id across ALL files (docs/transcripts.md, counting rules): a /btw
-- side question replays its parent's message under the same message.id and a new requestId
-- (ccusage PR #1155, issue #913), and a message.id names one API response. A line without
-- message.id is its own call. Kept: the main chain's copy (agent_id NULL) over a sidechain
-- or subagent replay, then the latest timestamp, then the most complete line (largest
-- output_tokens: streaming copies with equal timestamps), then file path and line number.
-- The calls one incremental refresh of cc_usage_rollup recomputes (brainlab/store/
-- usage_rollup.py sets the variable cc_usage_keys for that statement; unset, every call is in
-- scope): a call's lines are kept or cut together, so its deduplication is unchanged.
CREATE OR REPLACE VIEW cc_request_dedup AS
SELECT *
FROM cc_request_lines
WHERE getvariable('cc_usage_keys') IS NULL
   OR coalesce(message_id, source_file || ':' || line)
      IN (SELECT unnest(getvariable('cc_usage_keys')))
QUALIFY row_number() OVER (
    PARTITION BY coalesce(message_id, source_file || ':' || line)
    ORDER BY agent_id IS NULL DESC, ts DESC NULLS LAST, output_tokens DESC NULLS LAST,
             source_file DESC, line DESC) = 1;

-- SPEC §7 Cost: the price name of each model seen (exact name, else without -YYYYMMDD), with
-- the rates of its latest price row (a call is priced by the row in force on its day: see
-- cc_requests).
CREATE OR REPLACE VIEW cc_model_prices AS
WITH seen AS (SELECT DISTINCT model FROM cc_request_lines
              UNION SELECT model FROM otel_only_calls),  -- otel (issue 26): telemetry-only models
latest AS (
    SELECT * FROM cc_prices
    QUALIFY row_number() OVER (PARTITION BY model
                               ORDER BY coalesce(valid_from, DATE '0001-01-01') DESC) = 1
)
SELECT s.model, p.model AS priced_as, p.input_usd_mtok, p.output_usd_mtok,
       p.cache_write_5m_usd_mtok, p.cache_write_1h_usd_mtok, p.cache_read_usd_mtok,
       p.long_context_threshold, p.long_input_multiplier, p.long_output_multiplier,
       p.prices_as_of
FROM seen s
LEFT JOIN latest p
  ON p.model = CASE WHEN s.model IN (SELECT model FROM cc_prices) THEN s.model
                    ELSE regexp_replace(s.model, '-[0-9]{8}$', '') END;

-- Subagent type per (session, agent): a .meta.json or toolUseResult says it directly, else
-- the Task/Agent tool call that launched it (linked by tool_use_id) does.
CREATE OR REPLACE VIEW cc_agents AS
WITH links AS (
    SELECT l.session_id, l.agent_id, l.agent_type AS direct_type,
           t.launched_subagent_type AS launched_type, l.tool_use_id
    FROM cc_agent_links l
    LEFT JOIN (SELECT DISTINCT tool_use_id, launched_subagent_type FROM cc_tool_call_lines
               WHERE launched_subagent_type IS NOT NULL) t USING (tool_use_id)
)
SELECT session_id, agent_id,
       coalesce(max(direct_type), max(launched_type)) AS subagent_type,
       max(tool_use_id) AS launched_by_tool_use_id
FROM links
WHERE agent_id IS NOT NULL
GROUP BY session_id, agent_id;

-- One row per API call after deduplication, with its subagent type and cost.
-- Cost (SPEC §7): tokens x rate / 1e6 at the price row in force on the call's UTC day
-- (cc_prices valid_from <= day < valid_until; a call without a timestamp takes the row in
-- force now); cache writes split 5 min / 1 h when the line says (else all 5 min);
-- long-context rows bill the whole request at the higher rates when its input side exceeds
-- the threshold; a fast-mode call (usage.speed = 'fast') has every rate times the row's
-- fast_multiplier (none known: standard rates). cost_usd is NULL when the model has no price.
CREATE OR REPLACE VIEW cc_requests AS
WITH d AS (
    SELECT r.*,
           coalesce(r.cache_creation_5m_tokens,
                    r.cache_creation_tokens - coalesce(r.cache_creation_1h_tokens, 0))
               AS cw5m,
           coalesce(r.cache_creation_1h_tokens, 0) AS cw1h,
           r.input_tokens + r.cache_creation_tokens + r.cache_read_tokens AS context_tokens
    -- otel (issue 26): the transcripts' calls (record owns cc_request_dedup) plus the calls
    -- seen only in telemetry (views/14_otel_calls.sql), each with its source
    FROM (SELECT *, 'transcript' AS source FROM cc_request_dedup
          UNION ALL BY NAME SELECT * FROM otel_only_calls) r
), m AS (
    SELECT d.*, a.subagent_type, sp.project, mp.priced_as, p.input_usd_mtok,
           p.output_usd_mtok, p.cache_write_5m_usd_mtok, p.cache_write_1h_usd_mtok,
           p.cache_read_usd_mtok,
           CASE WHEN d.speed = 'fast' THEN coalesce(p.fast_multiplier, 1.0) ELSE 1.0 END
               AS speed_mult,
           CASE WHEN p.long_context_threshold IS NOT NULL
                 AND d.context_tokens > p.long_context_threshold THEN p.long_input_multiplier
                ELSE 1.0 END AS in_mult,
           CASE WHEN p.long_context_threshold IS NOT NULL
                 AND d.context_tokens > p.long_context_threshold THEN p.long_output_multiplier
                ELSE 1.0 END AS out_mult
    FROM d
    LEFT JOIN cc_agents a ON a.session_id = d.session_id AND a.agent_id = d.agent_id
    LEFT JOIN cc_model_prices mp ON mp.model = d.model
    LEFT JOIN cc_prices p ON p.model = mp.priced_as
     AND coalesce(CAST(d.ts AS DATE), DATE '9999-12-30')
         >= coalesce(p.valid_from, DATE '0001-01-01')
     AND coalesce(CAST(d.ts AS DATE), DATE '9999-12-30')
         < coalesce(p.valid_until, DATE '9999-12-31')
    LEFT JOIN cc_session_projects sp ON sp.session_id = d.session_id
)
SELECT session_id, agent_id, subagent_type, request_id, message_id, model, ts,
       input_tokens, output_tokens, cache_creation_tokens, cache_creation_5m_tokens,
       cache_creation_1h_tokens, cache_read_tokens, context_tokens,
       (input_tokens * input_usd_mtok * in_mult
        + output_tokens * output_usd_mtok * out_mult
        + cw5m * cache_write_5m_usd_mtok * in_mult
        + cw1h * cache_write_1h_usd_mtok * in_mult
        + cache_read_tokens * cache_read_usd_mtok * in_mult) * speed_mult / 1e6 AS cost_usd,
       CASE WHEN input_usd_mtok IS NULL THEN NULL ELSE priced_as END AS priced_as, is_nested,
       project, cwd, source_file, line, speed, reported_cost_usd, git_branch,
       source  -- otel (issue 26): transcript | otel | otel-genai | otel-openinference
FROM m;

-- Models without a price: reported, never priced at zero (SPEC §7 Cost).
CREATE OR REPLACE VIEW cc_unpriced_models AS
SELECT model, count(*) AS requests,
       CAST(sum(input_tokens + output_tokens + cache_creation_tokens + cache_read_tokens)
           AS BIGINT) AS total_tokens
FROM cc_request_dedup
WHERE model NOT IN (SELECT model FROM cc_model_prices WHERE priced_as IS NOT NULL)
   OR model IS NULL
GROUP BY model;

-- The grain `brainlab usage` sums (stored as cc_usage_rollup by each `ingest claude`): one
-- row per UTC 15-minute bucket, session, main chain or subagent, nested in a progress line or
-- not, speed (fast mode or standard), project, model and git branch of the
-- deduplicated calls (SPEC §7): token, cost and call sums, and the first and last call. A
-- bucket lies in one day of every time zone (offsets are multiples of 15 minutes).
CREATE OR REPLACE VIEW cc_usage_groups AS
SELECT time_bucket(INTERVAL 15 MINUTE, ts) AS bucket, CAST(ts AS DATE) AS day, session_id,
       agent_id IS NOT NULL AS is_subagent, coalesce(is_nested, false) AS is_nested,
       CASE WHEN speed = 'fast' THEN 'fast' ELSE 'standard' END AS speed, project,
       model, priced_as,
       CAST(sum(input_tokens) AS BIGINT) AS input_tokens, CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
       CAST(sum(cache_creation_tokens) AS BIGINT) AS cache_creation_tokens,
       CAST(sum(cache_read_tokens) AS BIGINT) AS cache_read_tokens,
       CAST(sum(input_tokens + output_tokens + cache_creation_tokens + cache_read_tokens)
           AS BIGINT) AS total_tokens,
       -- costs are summed as DECIMAL(38,18), exactly, so the sum does not depend on the
       -- order DuckDB's threads add the calls in: the stored cc_usage_rollup equals this
       -- view row for row (a DOUBLE sum differed in the last bit from run to run)
       CAST(sum(CAST(cost_usd AS DECIMAL(38, 18))) AS DOUBLE) AS cost_usd,
       count(*) AS requests,
       count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced_requests,
       min(ts) AS first_ts, max(ts) AS last_ts,
       -- --cost-mode (ccusage's display / auto): the line's costUSD, 0 when absent; the
       -- line's costUSD when it has one, else the calculated cost
       CAST(sum(CAST(coalesce(reported_cost_usd, 0) AS DECIMAL(38, 18))) AS DOUBLE)
           AS reported_cost_usd,
       CAST(sum(CAST(coalesce(reported_cost_usd, cost_usd) AS DECIMAL(38, 18))) AS DOUBLE)
           AS auto_cost_usd,
       git_branch  -- grouped by (GROUP BY ALL): `usage branches`
FROM cc_requests
GROUP BY ALL;

-- Usage by UTC day and model (the day of the kept line's timestamp, like ccusage
-- --timezone UTC): the grain the daily and weekly roll-ups and the report's week are summed from,
-- summed from cc_usage_groups so the token and cost sums are written once.
CREATE OR REPLACE VIEW usage_daily_models AS
SELECT day, model,
       CAST(sum(input_tokens) AS BIGINT) AS input_tokens, CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
       CAST(sum(cache_creation_tokens) AS BIGINT) AS cache_creation_tokens,
       CAST(sum(cache_read_tokens) AS BIGINT) AS cache_read_tokens,
       CAST(sum(total_tokens) AS BIGINT) AS total_tokens,
       sum(cost_usd) AS cost_usd, CAST(sum(requests) AS BIGINT) AS requests,
       CAST(sum(unpriced_requests) AS BIGINT) AS unpriced_requests
FROM cc_usage_groups
WHERE day IS NOT NULL  -- a call without a timestamp: in no day (counting rule 4)
GROUP BY ALL;

-- Usage by UTC day.
CREATE OR REPLACE VIEW usage_daily AS
SELECT day,
       CAST(sum(input_tokens) AS BIGINT) AS input_tokens, CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
       CAST(sum(cache_creation_tokens) AS BIGINT) AS cache_creation_tokens,
       CAST(sum(cache_read_tokens) AS BIGINT) AS cache_read_tokens,
       CAST(sum(total_tokens) AS BIGINT) AS total_tokens,
       sum(cost_usd) AS cost_usd, CAST(sum(requests) AS BIGINT) AS requests,
       CAST(sum(unpriced_requests) AS BIGINT) AS unpriced_requests
FROM usage_daily_models
GROUP BY day;

-- Usage by ISO week (Monday start; iso_year/iso_week as ISO 8601 numbers them).
CREATE OR REPLACE VIEW usage_weekly AS
SELECT CAST(date_trunc('week', day) AS DATE) AS week_start,
       isoyear(day) AS iso_year, week(day) AS iso_week,
       CAST(sum(input_tokens) AS BIGINT) AS input_tokens, CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
       CAST(sum(cache_creation_tokens) AS BIGINT) AS cache_creation_tokens,
       CAST(sum(cache_read_tokens) AS BIGINT) AS cache_read_tokens,
       CAST(sum(total_tokens) AS BIGINT) AS total_tokens,
       sum(cost_usd) AS cost_usd, CAST(sum(requests) AS BIGINT) AS requests,
       CAST(sum(unpriced_requests) AS BIGINT) AS unpriced_requests
FROM usage_daily
GROUP BY ALL;

-- Usage by session (sessionId; subagent calls of every layout, progress-nested included,
-- count in their parent session, so sessions add up to days).
CREATE OR REPLACE VIEW usage_sessions AS
SELECT session_id, min(ts) AS first_ts, max(ts) AS last_ts,
       any_value(project ORDER BY ts DESC) FILTER (WHERE project IS NOT NULL) AS project,
       CAST(sum(input_tokens) AS BIGINT) AS input_tokens, CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
       CAST(sum(cache_creation_tokens) AS BIGINT) AS cache_creation_tokens,
       CAST(sum(cache_read_tokens) AS BIGINT) AS cache_read_tokens,
       CAST(sum(input_tokens + output_tokens + cache_creation_tokens + cache_read_tokens)
           AS BIGINT) AS total_tokens,
       sum(cost_usd) AS cost_usd, count(*) AS requests,
       count(*) FILTER (WHERE agent_id IS NOT NULL) AS subagent_requests,
       sum(cost_usd) FILTER (WHERE agent_id IS NOT NULL) AS subagent_cost_usd
FROM cc_requests
GROUP BY session_id;

-- Usage by model (the name the transcript gives, and the price row it matched); fast-mode
-- calls are their own row, "<model> (fast)".
CREATE OR REPLACE VIEW usage_models AS
SELECT CASE WHEN speed = 'fast' THEN model || ' (fast)' ELSE model END AS model,
       any_value(priced_as) AS priced_as,
       CAST(sum(input_tokens) AS BIGINT) AS input_tokens, CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
       CAST(sum(cache_creation_tokens) AS BIGINT) AS cache_creation_tokens,
       CAST(sum(cache_read_tokens) AS BIGINT) AS cache_read_tokens,
       CAST(sum(input_tokens + output_tokens + cache_creation_tokens + cache_read_tokens)
           AS BIGINT) AS total_tokens,
       sum(cost_usd) AS cost_usd, count(*) AS requests
FROM cc_requests
GROUP BY 1;

-- One row per tool call (tool_use id seen once even when a resumed session repeats it).
CREATE OR REPLACE VIEW cc_tool_calls AS
SELECT t.session_id, t.agent_id, a.subagent_type, t.ts, t.tool, t.tool_use_id, t.file_path,
       t.pattern, t.launched_subagent_type, t.command, t.is_git_commit,
       r.result_bytes, r.is_error AS result_is_error, t.source_file, t.line
FROM cc_tool_call_lines t
LEFT JOIN cc_agents a ON a.session_id = t.session_id AND a.agent_id = t.agent_id
LEFT JOIN (SELECT tool_use_id, max(result_bytes) AS result_bytes, bool_or(is_error) AS is_error
           FROM cc_tool_results WHERE tool_use_id IS NOT NULL GROUP BY tool_use_id) r
  ON r.tool_use_id = t.tool_use_id
QUALIFY t.tool_use_id IS NULL
     OR row_number() OVER (PARTITION BY t.tool_use_id
                           ORDER BY t.ts NULLS LAST, t.source_file, t.line) = 1;

-- One row per sessionId: the span of all its lines and of its main chain (agent NULL), its
-- latest working directory and main file. Shared by cc_sessions and cc_measured.
CREATE OR REPLACE VIEW cc_session_spans AS
SELECT session_id, min(first_ts) AS started_at, max(last_ts) AS ended_at,
       min(first_ts) FILTER (WHERE agent_id IS NULL) AS main_started_at,
       max(last_ts) FILTER (WHERE agent_id IS NULL) AS main_ended_at,
       any_value(cwd ORDER BY last_ts DESC) FILTER (WHERE cwd IS NOT NULL) AS cwd,
       any_value(source_file ORDER BY last_ts DESC) FILTER (WHERE agent_id IS NULL)
           AS main_file
FROM cc_spans GROUP BY session_id;

-- SPEC §7 mapping: one transcript session per sessionId. Context size of a request =
-- input + cache_creation + cache_read; peak / close over main-chain requests (agent NULL)
-- against the context window: 200k (SPEC §2.5 default), or 1M when a request of the session
-- went past 200k (only a 1M-context model can); tokens_used = context size at close.
CREATE OR REPLACE VIEW cc_sessions AS
WITH spans AS (SELECT * FROM cc_session_spans), main AS (
    SELECT session_id, max(context_tokens) AS context_peak_tokens,
           arg_max(context_tokens, ts) AS context_close_tokens, count(*) AS main_requests,
           CASE WHEN max(context_tokens) > 200000 THEN 1000000 ELSE 200000 END
               AS context_window_tokens
    FROM cc_requests WHERE agent_id IS NULL GROUP BY session_id
), tools AS (
    SELECT session_id, count(*) FILTER (WHERE is_git_commit) AS commits,
           count(DISTINCT launched_subagent_type) AS subagent_types_launched
    FROM cc_tool_calls GROUP BY session_id
), compact AS (
    SELECT session_id, count(*) AS compactions FROM cc_compactions GROUP BY session_id
)
SELECT s.session_id,
       coalesce(s.main_started_at, s.started_at) AS started_at,
       coalesce(s.main_ended_at, s.ended_at) AS ended_at,
       round(date_diff('second', coalesce(s.main_started_at, s.started_at),
                       coalesce(s.main_ended_at, s.ended_at)) / 60.0, 1) AS duration_min,
       s.cwd, sp.project, m.context_window_tokens,
       round(100.0 * m.context_peak_tokens / m.context_window_tokens, 1) AS context_peak_pct,
       round(100.0 * m.context_close_tokens / m.context_window_tokens, 1) AS context_at_close,
       m.context_close_tokens AS tokens_used,
       u.total_tokens AS billed_tokens, u.cost_usd, u.requests,
       coalesce(m.main_requests, 0) AS main_requests,
       coalesce(u.subagent_requests, 0) AS subagent_requests,
       coalesce(t.commits, 0) AS commits, coalesce(c.compactions, 0) AS compactions,
       s.main_file AS source_file
FROM spans s
LEFT JOIN main m USING (session_id)
LEFT JOIN usage_sessions u USING (session_id)
LEFT JOIN tools t USING (session_id)
LEFT JOIN compact c USING (session_id)
LEFT JOIN cc_session_projects sp USING (session_id);

-- Transcript sessions in the shape of the protocol's `sessions` view (source = 'transcript');
-- what a transcript cannot know (type, todos, handoff, health) is NULL.
CREATE OR REPLACE VIEW transcript_sessions AS
SELECT session_id AS sess_id, started_at, CAST(started_at AS DATE) AS session_date,
       CAST(NULL AS VARCHAR) AS type,
       CAST(NULL AS VARCHAR) AS category, CAST(NULL AS VARCHAR) AS mode, project,
       CAST(tokens_used AS DOUBLE) AS tokens_used, context_peak_pct, context_at_close,
       duration_min, commits, CAST(NULL AS INTEGER) AS todos_closed,
       CAST(NULL AS VARCHAR) AS handoff_level, CAST(NULL AS BOOLEAN) AS cold_start_kpi_pass,
       CAST(NULL AS DOUBLE) AS health_score_logged, CAST(NULL AS DOUBLE) AS health_score,
       CAST(NULL AS BOOLEAN) AS saturation_flag, source_file,
       'transcript' AS source
FROM cc_sessions;

-- SPEC §2.5 price per agent, both ways: estimated = bytes of agents/<agent>.md read / 4;
-- measured = the tokens and cost of the session's subagents of that type.
CREATE OR REPLACE VIEW transcript_agent_loads AS
WITH estimated AS (
    SELECT session_id, regexp_extract(file_path, 'agents/([^/]+)\.md$', 1) AS agent,
           max(result_bytes) / 4.0 AS tokens_estimated, any_value(source_file) AS source_file
    FROM cc_tool_calls
    WHERE tool = 'Read' AND regexp_matches(file_path, '(^|/)agents/[^/]+\.md$')
    GROUP BY ALL
), measured AS (
    SELECT session_id, subagent_type AS agent,
           CAST(sum(input_tokens + output_tokens + cache_creation_tokens + cache_read_tokens)
               AS BIGINT) AS tokens_measured,
           sum(cost_usd) AS cost_usd_measured, any_value(source_file) AS source_file
    FROM cc_requests
    WHERE agent_id IS NOT NULL AND subagent_type IS NOT NULL
    GROUP BY ALL
)
SELECT coalesce(e.session_id, m.session_id) AS sess_id, coalesce(e.agent, m.agent) AS agent,
       e.tokens_estimated, m.tokens_measured, m.cost_usd_measured,
       coalesce(e.source_file, m.source_file) AS source_file, 'transcript' AS source
FROM estimated e
FULL OUTER JOIN measured m ON m.session_id = e.session_id AND m.agent = e.agent;
