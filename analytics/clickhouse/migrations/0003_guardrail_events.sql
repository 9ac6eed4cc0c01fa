-- Guardrail events: one row per content-rule hit (analytics.GuardrailEvent)
-- with the user of the request (guardrail figures honour a user scope).
-- Partitions are UTC days; the sort key starts with tenant and gateway, the
-- scope of every guardrail figure.
CREATE TABLE IF NOT EXISTS guardrail_events (
    tenant_id  String,
    gateway_id String,
    user_id    String,
    ts         DateTime('UTC'),
    ts_ms      UInt16,
    id         String,
    request_id String,
    rule_id    String,
    rule_name  String,
    kind       String,
    action     String,
    direction  String,
    excerpt    String,
    batch_id   String
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMMDD(ts)
ORDER BY (tenant_id, gateway_id, ts, ts_ms, id)
SETTINGS index_granularity = 8192;
