-- Budget alerts (CONTRACT §14): a tenant's webhook signing secret, sealed
-- with the master key like provider keys (NULL: none), and one row per
-- threshold crossed per budget per period. The unique index is the claim
-- that makes an alert go out once across every replica: the replica whose
-- INSERT … ON CONFLICT DO NOTHING adds the row delivers it.
ALTER TABLE tenants ADD COLUMN alert_webhook_secret TEXT;
--bun:split
CREATE TABLE alerts (
    id            TEXT PRIMARY KEY,
    tenant_id     TEXT NOT NULL,
    scope         TEXT NOT NULL,
    scope_id      TEXT NOT NULL,
    period        TEXT NOT NULL,
    period_start  BIGINT NOT NULL,
    threshold     INTEGER NOT NULL,
    spent_usd     BIGINT NOT NULL,
    amount_usd    BIGINT NOT NULL,
    at            TIMESTAMPTZ NOT NULL,
    status        TEXT NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    last_error    TEXT NOT NULL DEFAULT '',
    last_attempt_at TIMESTAMPTZ,
    delivered_at  TIMESTAMPTZ
);
--bun:split
CREATE UNIQUE INDEX alerts_claim ON alerts (tenant_id, scope, scope_id, period_start, threshold);
--bun:split
CREATE INDEX alerts_tenant ON alerts (tenant_id, id);
