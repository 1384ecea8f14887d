-- SPEC §7 Cost: the price name of each model seen (exact name, else without -YYYYMMDD), with
-- the rates of its latest price row (a call is priced by the row in force on its day: see
-- cc_requests).
CREATE OR REPLACE VIEW cc_model_prices AS
WITH seen AS (SELECT DISTINCT model FROM cc_request_lines
              UNION SELECT model FROM otel_only_calls),  -- otel (issue 26): telemetry-only models
latest AS (
    SELECT * FROM cc_prices  -- the latest version of the table (issue 45), its newest rows
    WHERE coalesce(price_version, 0)
          = (SELECT coalesce(max(price_version), 0) FROM cc_prices)
    QUALIFY row_number() OVER (PARTITION BY model
                               ORDER BY coalesce(valid_from, DATE '0001-01-01') DESC) = 1
)
SELECT s.model, p.model AS priced_as, p.input_usd_mtok, p.output_usd_mtok,
       p.cache_write_5m_usd_mtok, p.cache_write_1h_usd_mtok, p.cache_read_usd_mtok,
       p.long_context_threshold, p.long_input_multiplier, p.long_output_multiplier,
       p.prices_as_of, p.prices_file
FROM seen s
LEFT JOIN latest p
  ON p.model = CASE WHEN s.model IN (SELECT model FROM cc_prices) THEN s.model
                    ELSE regexp_replace(s.model, '-[0-9]{8}$', '') END;
