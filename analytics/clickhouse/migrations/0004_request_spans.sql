-- Spans move onto their request's row. A trace is one request's span tree
-- (a root and one span per upstream attempt), always read whole, so a row
-- per span cost an insert into a second table, ~2.5 rows and ~36 files per
-- request for nothing a query needed. The request row now carries:
--   span_count        the number of spans,
--   trace_root        1 when one of them has no parent (the root),
--   root_start_us     the root's start in microseconds since the epoch,
--   root_duration_us  the root's duration in microseconds,
--   spans             the spans as a JSON array (analytics/clickhouse's
--                     spanJSON: id, parent, name, start_us, duration_us,
--                     status, attrs).
-- trace_spans stays for rows written before this migration: retention and
-- tenant purge still delete from it; traces are read from request_logs.
-- One ALTER: 18.16 applies its commands together or not at all (and has no
-- ADD COLUMN IF NOT EXISTS; Migrate treats "column exists" as applied).
ALTER TABLE request_logs
    ADD COLUMN span_count UInt32,
    ADD COLUMN trace_root UInt8,
    ADD COLUMN root_start_us Int64,
    ADD COLUMN root_duration_us UInt64,
    ADD COLUMN spans String;
