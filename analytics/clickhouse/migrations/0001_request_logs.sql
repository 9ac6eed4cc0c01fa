-- Request logs: one row per inference request (analytics.Record).
-- ts is the second and ts_ms the millisecond within it (18.16 has no
-- DateTime64). Money is in nano-dollars. Metadata is a pair of parallel
-- arrays (18.16 has no Map). Partitions are UTC days, so that retention can
-- drop or mutate whole days; the sort key starts with the tenant. The
-- ReplacingMergeTree collapses an accidental duplicate (same tenant, time and
-- id) on merge; the writer avoids duplicates in the first place, so queries
-- read without FINAL.
CREATE TABLE IF NOT EXISTS request_logs (
    tenant_id       String,
    ts              DateTime('UTC'),
    ts_ms           UInt16,
    id              String,
    gateway_id      String,
    token_id        String,
    user_id         String,
    provider        String,
    model           String,
    route           String,
    status          Int32,
    error_code      String,
    latency_ms      Int64,
    ttfb_ms         Int64,
    tokens_in       Int64,
    tokens_out      Int64,
    cached_tokens   Int64,
    cost_usd        Int64,
    cache           String,
    attempts        Int32,
    rule_hits       Array(String),
    metadata_keys   Array(String),
    metadata_values Array(String),
    trace_id        String,
    client_ip       String,
    user_agent      String,
    request_body    String,
    response_body   String,
    flags           Array(String),
    cache_saved_usd Int64,
    batch_id        String
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMMDD(ts)
ORDER BY (tenant_id, ts, ts_ms, id)
SETTINGS index_granularity = 8192;
