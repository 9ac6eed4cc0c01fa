-- The front door of the request (CONTRACT §12): chat, completions,
-- embeddings, responses, messages, count_tokens or models. Rows written
-- before this migration read as '' (the column's default): their door was
-- not recorded, and the admin API shows no operation for them.
ALTER TABLE request_logs
    ADD COLUMN operation String;
