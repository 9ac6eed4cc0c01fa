-- One schema for SQLite and PostgreSQL: only types and statements both
-- accept. JSON is kept in TEXT columns, money in BIGINT nano-dollars, ids are
-- application-made strings (no sequences).
CREATE TABLE tenants (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'active',
    settings    TEXT NOT NULL DEFAULT '{}',
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
--bun:split
CREATE TABLE gateways (
    id                   TEXT PRIMARY KEY,
    tenant_id            TEXT NOT NULL REFERENCES tenants (id),
    slug                 TEXT NOT NULL,
    name                 TEXT NOT NULL,
    log_bodies           BOOLEAN NOT NULL DEFAULT TRUE,
    body_log_limit_bytes INTEGER NOT NULL DEFAULT 65536,
    cache                TEXT NOT NULL DEFAULT '{}',
    rate_limit           TEXT NOT NULL DEFAULT '{}',
    request_timeout_ms   INTEGER NOT NULL DEFAULT 120000,
    retry                TEXT NOT NULL DEFAULT '{}',
    routes               TEXT NOT NULL DEFAULT '[]',
    circuit_breaker      TEXT NOT NULL DEFAULT '{}',
    budget               TEXT,
    created_at           TIMESTAMPTZ NOT NULL,
    updated_at           TIMESTAMPTZ NOT NULL
);
--bun:split
CREATE UNIQUE INDEX gateways_tenant_slug ON gateways (tenant_id, slug);
--bun:split
CREATE TABLE provider_keys (
    id          TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL REFERENCES tenants (id),
    gateway_id  TEXT NOT NULL REFERENCES gateways (id),
    provider    TEXT NOT NULL,
    alias       TEXT NOT NULL,
    sealed_key  TEXT NOT NULL,
    last4       TEXT NOT NULL,
    base_url    TEXT NOT NULL DEFAULT '',
    weight      INTEGER NOT NULL DEFAULT 1,
    models      TEXT NOT NULL DEFAULT '[]',
    options     TEXT NOT NULL DEFAULT '{}',
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
--bun:split
CREATE UNIQUE INDEX provider_keys_alias ON provider_keys (gateway_id, provider, alias);
--bun:split
CREATE TABLE rules (
    id             TEXT PRIMARY KEY,
    tenant_id      TEXT NOT NULL REFERENCES tenants (id),
    gateway_id     TEXT NOT NULL REFERENCES gateways (id),
    name           TEXT NOT NULL,
    enabled        BOOLEAN NOT NULL DEFAULT TRUE,
    direction      TEXT NOT NULL,
    kind           TEXT NOT NULL,
    patterns       TEXT NOT NULL DEFAULT '[]',
    pii            TEXT NOT NULL DEFAULT '[]',
    action         TEXT NOT NULL,
    case_sensitive BOOLEAN NOT NULL DEFAULT FALSE,
    created_at     TIMESTAMPTZ NOT NULL,
    updated_at     TIMESTAMPTZ NOT NULL
);
--bun:split
CREATE INDEX rules_gateway ON rules (gateway_id);
--bun:split
CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    tenant_id     TEXT NOT NULL REFERENCES tenants (id),
    email         TEXT NOT NULL,
    name          TEXT NOT NULL DEFAULT '',
    role          TEXT NOT NULL,
    status        TEXT NOT NULL DEFAULT 'active',
    password_hash TEXT NOT NULL DEFAULT '',
    budget        TEXT,
    rate_limit    TEXT NOT NULL DEFAULT '{}',
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL,
    last_seen_at  TIMESTAMPTZ
);
--bun:split
CREATE UNIQUE INDEX users_email ON users (email);
--bun:split
CREATE INDEX users_tenant ON users (tenant_id);
--bun:split
CREATE TABLE tokens (
    id             TEXT PRIMARY KEY,
    kind           TEXT NOT NULL,
    tenant_id      TEXT NOT NULL REFERENCES tenants (id),
    gateway_id     TEXT,
    user_id        TEXT,
    name           TEXT NOT NULL DEFAULT '',
    hash           TEXT NOT NULL,
    prefix         TEXT NOT NULL,
    last4          TEXT NOT NULL,
    expires_at     TIMESTAMPTZ,
    revoked        BOOLEAN NOT NULL DEFAULT FALSE,
    rate_limit     TEXT NOT NULL DEFAULT '{}',
    allowed_models TEXT NOT NULL DEFAULT '[]',
    last_used_at   TIMESTAMPTZ,
    created_at     TIMESTAMPTZ NOT NULL,
    updated_at     TIMESTAMPTZ NOT NULL
);
--bun:split
CREATE UNIQUE INDEX tokens_hash ON tokens (hash);
--bun:split
CREATE INDEX tokens_gateway ON tokens (gateway_id);
--bun:split
CREATE INDEX tokens_user ON tokens (user_id);
--bun:split
CREATE TABLE user_gateways (
    user_id     TEXT NOT NULL REFERENCES users (id),
    gateway_id  TEXT NOT NULL REFERENCES gateways (id),
    tenant_id   TEXT NOT NULL REFERENCES tenants (id),
    created_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (user_id, gateway_id)
);
--bun:split
CREATE TABLE model_prices (
    provider              TEXT NOT NULL,
    model                 TEXT NOT NULL,
    input_per_mtok        BIGINT NOT NULL DEFAULT 0,
    output_per_mtok       BIGINT NOT NULL DEFAULT 0,
    cached_input_per_mtok BIGINT NOT NULL DEFAULT 0,
    deprecated_at         TIMESTAMPTZ,
    sunset_at             TIMESTAMPTZ,
    source                TEXT NOT NULL DEFAULT 'admin',
    updated_at            TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (provider, model)
);
--bun:split
CREATE TABLE audit_log (
    id            TEXT PRIMARY KEY,
    ts            TIMESTAMPTZ NOT NULL,
    actor_id      TEXT NOT NULL DEFAULT '',
    actor_email   TEXT NOT NULL DEFAULT '',
    actor_role    TEXT NOT NULL DEFAULT '',
    tenant_id     TEXT NOT NULL DEFAULT '',
    action        TEXT NOT NULL,
    resource_type TEXT NOT NULL,
    resource_id   TEXT NOT NULL DEFAULT '',
    changes       TEXT NOT NULL DEFAULT '{}',
    outcome       TEXT NOT NULL DEFAULT 'ok',
    ip            TEXT NOT NULL DEFAULT '',
    request_id    TEXT NOT NULL DEFAULT ''
);
--bun:split
CREATE INDEX audit_log_tenant_ts ON audit_log (tenant_id, ts);
--bun:split
CREATE TABLE client_errors (
    id           TEXT PRIMARY KEY,
    ts           TIMESTAMPTZ NOT NULL,
    tenant_id    TEXT NOT NULL DEFAULT '',
    user_id      TEXT NOT NULL DEFAULT '',
    fingerprint  TEXT NOT NULL,
    message      TEXT NOT NULL,
    stack        TEXT NOT NULL DEFAULT '',
    url          TEXT NOT NULL DEFAULT '',
    release      TEXT NOT NULL DEFAULT '',
    user_agent   TEXT NOT NULL DEFAULT '',
    context      TEXT NOT NULL DEFAULT '{}',
    count        BIGINT NOT NULL DEFAULT 1,
    last_seen_at TIMESTAMPTZ NOT NULL
);
--bun:split
CREATE UNIQUE INDEX client_errors_fingerprint ON client_errors (fingerprint);
--bun:split
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
--bun:split
INSERT INTO meta (key, value) VALUES ('config_version', '0');
