-- CONTRACT §14: cache-write prices (five-minute and one-hour) and the
-- long-context tier. Every column defaults to 0, which prices as before:
-- writes as input, one tier.
ALTER TABLE model_prices ADD COLUMN cache_write_per_mtok BIGINT NOT NULL DEFAULT 0;
--bun:split
ALTER TABLE model_prices ADD COLUMN cache_write_1h_per_mtok BIGINT NOT NULL DEFAULT 0;
--bun:split
ALTER TABLE model_prices ADD COLUMN long_context_threshold_tokens BIGINT NOT NULL DEFAULT 0;
--bun:split
ALTER TABLE model_prices ADD COLUMN long_context_input_per_mtok BIGINT NOT NULL DEFAULT 0;
--bun:split
ALTER TABLE model_prices ADD COLUMN long_context_output_per_mtok BIGINT NOT NULL DEFAULT 0;
