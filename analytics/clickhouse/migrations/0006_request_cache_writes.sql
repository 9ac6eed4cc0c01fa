-- Cache writes and reasoning tokens (CONTRACT §14): the prompt tokens
-- written to the provider's cache (part of tokens_in, as cached_tokens,
-- the reads, are), the part of them written for one hour, and the output
-- tokens spent reasoning (part of tokens_out). Rows written before this
-- migration read as 0 (the columns' default): not recorded then.
ALTER TABLE request_logs
    ADD COLUMN cache_write_tokens Int64,
    ADD COLUMN cache_write_1h_tokens Int64,
    ADD COLUMN reasoning_tokens Int64;
