-- The message of the error the client got (a refusal, an upstream
-- failure, a stream's closing error event): '' for an answer and on rows
-- written before this migration.
ALTER TABLE request_logs
    ADD COLUMN error_message String;
