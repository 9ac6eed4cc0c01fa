-- Trace spans: one row per span (analytics.Span) with the request that
-- produced it. start is the second and start_us the microsecond within it;
-- ts, ts_ms and user_id are those of the request's log, so that a span
-- lives in its request's daily partition and leaves with it (retention),
-- and a user's scope needs no join. Attributes are parallel arrays.
CREATE TABLE IF NOT EXISTS trace_spans (
    tenant_id   String,
    gateway_id  String,
    user_id     String,
    ts          DateTime('UTC'),
    ts_ms       UInt16,
    start       DateTime('UTC'),
    start_us    UInt32,
    trace_id    String,
    span_id     String,
    parent_id   String,
    request_id  String,
    name        String,
    duration_us UInt64,
    status      String,
    attr_keys   Array(String),
    attr_values Array(String),
    batch_id    String
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMMDD(ts)
ORDER BY (tenant_id, gateway_id, start, start_us, trace_id, span_id)
SETTINGS index_granularity = 8192;
