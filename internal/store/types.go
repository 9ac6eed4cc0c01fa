package store

import (
	"database/sql/driver"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/money"
)

// Tenant statuses.
const (
	TenantActive    = "active"
	TenantSuspended = "suspended"
	TenantDeleted   = "deleted"
)

// Tenant is the top-level owner of gateways and users. Its id is a slug.
type Tenant struct {
	bun.BaseModel `bun:"table:tenants"`
	ID            string `bun:"id,pk" json:"id"`
	// WebhookSecret is the budget alerts' signing secret sealed with the
	// master key (secret.Box); nil for none. Never in a response.
	WebhookSecret *string        `bun:"alert_webhook_secret" json:"-"`
	Name          string         `bun:"name" json:"name"`
	Status        string         `bun:"status" json:"status"`
	Settings      TenantSettings `bun:"settings" json:"settings"`
	// Budget caps the spend of every gateway of the tenant together
	// (CONTRACT §14); nil means none.
	Budget    *Budget   `bun:"budget" json:"budget"`
	CreatedAt time.Time `bun:"created_at" json:"created_at"`
	UpdatedAt time.Time `bun:"updated_at" json:"updated_at"`
}

// TenantSettings are a tenant's defaults and limits.
type TenantSettings struct {
	LogRetentionDays int      `json:"log_retention_days"`
	LogBodiesDefault bool     `json:"log_bodies_default"`
	AllowedProviders []string `json:"allowed_providers"`
	// MaxInFlight caps the tenant's inference requests in flight in one
	// proxy process; nil means the process's default (docs/security.md).
	MaxInFlight *int `json:"max_in_flight"`
	// AlertWebhookURL receives the budget alerts (CONTRACT §14); "" for
	// none.
	AlertWebhookURL string `json:"alert_webhook_url"`
	// AlertWebhookSecret is write-only: a PATCH that sets it has it sealed
	// into Tenant.WebhookSecret ("" removes it, absent keeps it). It is never
	// stored in the settings nor returned.
	AlertWebhookSecret *string `json:"alert_webhook_secret,omitempty"`
	// AlertWebhookSecretSet says on reads whether a signing secret is set;
	// ignored on writes.
	AlertWebhookSecretSet bool `json:"alert_webhook_secret_set"`
}

// UnmarshalJSON decodes strictly.
func (s *TenantSettings) UnmarshalJSON(b []byte) error {
	type plain TenantSettings
	return StrictUnmarshal(b, (*plain)(s))
}

// Value stores the settings as JSON, without the write-only signing
// secret and the derived AlertWebhookSecretSet.
func (s TenantSettings) Value() (driver.Value, error) {
	s.AlertWebhookSecret, s.AlertWebhookSecretSet = nil, false
	return jsonValue(s)
}

// Scan reads the settings from JSON.
func (s *TenantSettings) Scan(src any) error {
	type plain TenantSettings
	return jsonScan(src, (*plain)(s))
}

// Gateway is a tenant's gateway with its settings. Routes, cache, limits and
// budget are JSON columns.
type Gateway struct {
	bun.BaseModel     `bun:"table:gateways"`
	ID                string          `bun:"id,pk" json:"id"`
	TenantID          string          `bun:"tenant_id" json:"tenant_id"`
	Slug              string          `bun:"slug" json:"slug"`
	Name              string          `bun:"name" json:"name"`
	CreatedAt         time.Time       `bun:"created_at" json:"created_at"`
	UpdatedAt         time.Time       `bun:"updated_at" json:"updated_at"`
	LogBodies         bool            `bun:"log_bodies" json:"log_bodies"`
	BodyLogLimitBytes int             `bun:"body_log_limit_bytes" json:"body_log_limit_bytes"`
	Cache             CacheSettings   `bun:"cache" json:"cache"`
	RateLimit         RateLimit       `bun:"rate_limit" json:"rate_limit"`
	RequestTimeoutMS  int             `bun:"request_timeout_ms" json:"request_timeout_ms"`
	Retry             RetrySettings   `bun:"retry" json:"retry"`
	Routes            Routes          `bun:"routes" json:"routes"`
	CircuitBreaker    BreakerSettings `bun:"circuit_breaker" json:"circuit_breaker"`
	Budget            *Budget         `bun:"budget" json:"budget"`
}

// CacheSettings configure the exact-match response cache.
type CacheSettings struct {
	Enabled    bool `json:"enabled"`
	TTLSeconds int  `json:"ttl_seconds"`
}

// UnmarshalJSON decodes strictly.
func (c *CacheSettings) UnmarshalJSON(b []byte) error {
	type plain CacheSettings
	return StrictUnmarshal(b, (*plain)(c))
}

// Value stores JSON.
func (c CacheSettings) Value() (driver.Value, error) { return jsonValue(c) }

// Scan reads JSON.
func (c *CacheSettings) Scan(src any) error {
	type plain CacheSettings
	return jsonScan(src, (*plain)(c))
}

// RateLimit holds per-minute limits and a concurrency limit; nil means
// unlimited.
type RateLimit struct {
	RequestsPerMinute *int `json:"requests_per_minute"`
	TokensPerMinute   *int `json:"tokens_per_minute"`
	// MaxInFlight caps the requests in flight at once, per proxy process.
	MaxInFlight *int `json:"max_in_flight"`
}

// UnmarshalJSON decodes strictly.
func (r *RateLimit) UnmarshalJSON(b []byte) error {
	type plain RateLimit
	return StrictUnmarshal(b, (*plain)(r))
}

// Value stores JSON.
func (r RateLimit) Value() (driver.Value, error) { return jsonValue(r) }

// Scan reads JSON.
func (r *RateLimit) Scan(src any) error {
	type plain RateLimit
	return jsonScan(src, (*plain)(r))
}

// RetrySettings bound the attempts of one request (in total, across targets).
type RetrySettings struct {
	MaxAttempts int `json:"max_attempts"`
	BackoffMS   int `json:"backoff_ms"`
}

// UnmarshalJSON decodes strictly.
func (r *RetrySettings) UnmarshalJSON(b []byte) error {
	type plain RetrySettings
	return StrictUnmarshal(b, (*plain)(r))
}

// Value stores JSON.
func (r RetrySettings) Value() (driver.Value, error) { return jsonValue(r) }

// Scan reads JSON.
func (r *RetrySettings) Scan(src any) error {
	type plain RetrySettings
	return jsonScan(src, (*plain)(r))
}

// BreakerSettings configure the circuit breaker per gateway × provider key.
type BreakerSettings struct {
	FailureThreshold int `json:"failure_threshold"`
	CooldownSeconds  int `json:"cooldown_seconds"`
}

// UnmarshalJSON decodes strictly.
func (c *BreakerSettings) UnmarshalJSON(b []byte) error {
	type plain BreakerSettings
	return StrictUnmarshal(b, (*plain)(c))
}

// Value stores JSON.
func (c BreakerSettings) Value() (driver.Value, error) { return jsonValue(c) }

// Scan reads JSON.
func (c *BreakerSettings) Scan(src any) error {
	type plain BreakerSettings
	return jsonScan(src, (*plain)(c))
}

// Route strategies.
const (
	StrategyFallback    = "fallback"
	StrategyLoadBalance = "loadbalance"
)

// Route is a named model of a gateway that maps to targets.
type Route struct {
	Name     string        `json:"name"`
	Strategy string        `json:"strategy"`
	Targets  []RouteTarget `json:"targets"`
}

// UnmarshalJSON decodes strictly.
func (r *Route) UnmarshalJSON(b []byte) error {
	type plain Route
	return StrictUnmarshal(b, (*plain)(r))
}

// RouteTarget is one provider/model a route sends to.
type RouteTarget struct {
	Provider string  `json:"provider"`
	Model    string  `json:"model"`
	KeyAlias *string `json:"key_alias"`
	Weight   int     `json:"weight"`
}

// UnmarshalJSON decodes strictly.
func (t *RouteTarget) UnmarshalJSON(b []byte) error {
	type plain RouteTarget
	return StrictUnmarshal(b, (*plain)(t))
}

// Routes is the JSON column of a gateway's routes.
type Routes []Route

// Value stores JSON.
func (r Routes) Value() (driver.Value, error) {
	if r == nil {
		return "[]", nil
	}
	return jsonValue([]Route(r))
}

// Scan reads JSON.
func (r *Routes) Scan(src any) error { return jsonScan(src, (*[]Route)(r)) }

// Budget periods.
const (
	PeriodDaily   = "daily"
	PeriodWeekly  = "weekly"
	PeriodMonthly = "monthly"
	PeriodTotal   = "total"
)

// Budget is a spending limit of a tenant, gateway, user or API token. AmountUSD, Period and
// Hard are configuration; SpentUSD, RemainingUSD and ResetsAt are the
// current state, filled when the resource is read and never stored.
type Budget struct {
	AmountUSD    money.USD  `json:"amount_usd"`
	Period       string     `json:"period"`
	Hard         bool       `json:"hard"`
	SpentUSD     money.USD  `json:"spent_usd"`
	RemainingUSD money.USD  `json:"remaining_usd"`
	ResetsAt     *time.Time `json:"resets_at"`
}

// budgetConfig is the stored part of a Budget.
type budgetConfig struct {
	AmountUSD money.USD `json:"amount_usd"`
	Period    string    `json:"period"`
	Hard      bool      `json:"hard"`
}

// UnmarshalJSON decodes the configuration fields strictly; the state fields
// are read-only and refused on input.
func (b *Budget) UnmarshalJSON(data []byte) error {
	var c budgetConfig
	c.Hard = true // a budget is hard unless said otherwise
	if err := StrictUnmarshal(data, &c); err != nil {
		return err
	}
	*b = Budget{AmountUSD: c.AmountUSD, Period: c.Period, Hard: c.Hard}
	return nil
}

// Value stores the configuration as JSON.
func (b *Budget) Value() (driver.Value, error) {
	if b == nil {
		return nil, nil
	}
	return jsonValue(budgetConfig{AmountUSD: b.AmountUSD, Period: b.Period, Hard: b.Hard})
}

// Scan reads the configuration from JSON.
func (b *Budget) Scan(src any) error {
	var c budgetConfig
	if err := jsonScan(src, &c); err != nil {
		return err
	}
	*b = Budget{AmountUSD: c.AmountUSD, Period: c.Period, Hard: c.Hard}
	return nil
}

// ProviderKey is a provider credential of a gateway. The key itself is
// sealed at rest and never leaves the store in a response: only Last4.
type ProviderKey struct {
	bun.BaseModel `bun:"table:provider_keys"`
	ID            string     `bun:"id,pk" json:"id"`
	TenantID      string     `bun:"tenant_id" json:"tenant_id"`
	GatewayID     string     `bun:"gateway_id" json:"gateway_id"`
	Provider      string     `bun:"provider" json:"provider"`
	Alias         string     `bun:"alias" json:"alias"`
	SealedKey     string     `bun:"sealed_key" json:"-"`
	Last4         string     `bun:"last4" json:"last4"`
	BaseURL       string     `bun:"base_url" json:"base_url"`
	Weight        int        `bun:"weight" json:"weight"`
	Models        StringList `bun:"models" json:"models"`
	Options       KeyOptions `bun:"options" json:"options"`
	// Disabled retires the key: the proxy sends no request with it (a key
	// rotation adds the new key, shifts the weight, then disables the old).
	Disabled  bool      `bun:"disabled" json:"disabled"`
	CreatedAt time.Time `bun:"created_at" json:"created_at"`
	UpdatedAt time.Time `bun:"updated_at" json:"updated_at"`
}

// KeyOptions are the provider-specific, non-secret settings of a key:
// Azure resource, deployments and api-version; Bedrock region and access key id.
type KeyOptions struct {
	Resource    string            `json:"resource,omitempty"`
	Deployments map[string]string `json:"deployments,omitempty"`
	APIVersion  string            `json:"api_version,omitempty"`
	Region      string            `json:"region,omitempty"`
	AccessKeyID string            `json:"access_key_id,omitempty"`
}

// UnmarshalJSON decodes strictly.
func (o *KeyOptions) UnmarshalJSON(b []byte) error {
	type plain KeyOptions
	return StrictUnmarshal(b, (*plain)(o))
}

// Value stores JSON.
func (o KeyOptions) Value() (driver.Value, error) { return jsonValue(o) }

// Scan reads JSON.
func (o *KeyOptions) Scan(src any) error {
	type plain KeyOptions
	return jsonScan(src, (*plain)(o))
}

// StringList is a JSON array column of strings.
type StringList []string

// Value stores JSON; nil is stored as [].
func (l StringList) Value() (driver.Value, error) {
	if l == nil {
		return "[]", nil
	}
	return jsonValue([]string(l))
}

// Scan reads JSON.
func (l *StringList) Scan(src any) error { return jsonScan(src, (*[]string)(l)) }

// Rule directions, kinds and actions.
const (
	DirRequest  = "request"
	DirResponse = "response"
	DirBoth     = "both"

	KindKeyword = "keyword"
	KindRegex   = "regex"
	KindPII     = "pii"

	ActionBlock  = "block"
	ActionRedact = "redact"
	ActionFlag   = "flag"
)

// PIIKinds are the built-in detectors a pii rule may name.
var PIIKinds = []string{"email", "phone", "credit_card", "iban", "us_ssn", "ipv4", "secret_key"}

// Rule is a content rule of a gateway. Patterns are data (RE2 or literal
// keywords), never code.
type Rule struct {
	bun.BaseModel `bun:"table:rules"`
	ID            string     `bun:"id,pk" json:"id"`
	TenantID      string     `bun:"tenant_id" json:"-"`
	GatewayID     string     `bun:"gateway_id" json:"gateway_id"`
	Name          string     `bun:"name" json:"name"`
	Enabled       bool       `bun:"enabled" json:"enabled"`
	Direction     string     `bun:"direction" json:"direction"`
	Kind          string     `bun:"kind" json:"kind"`
	Patterns      StringList `bun:"patterns" json:"patterns"`
	PII           StringList `bun:"pii" json:"pii"`
	Action        string     `bun:"action" json:"action"`
	CaseSensitive bool       `bun:"case_sensitive" json:"case_sensitive"`
	CreatedAt     time.Time  `bun:"created_at" json:"created_at"`
	UpdatedAt     time.Time  `bun:"updated_at" json:"updated_at"`
}

// User statuses.
const (
	UserActive   = "active"
	UserDisabled = "disabled"
)

// User is an account of a tenant.
type User struct {
	bun.BaseModel `bun:"table:users"`
	ID            string     `bun:"id,pk" json:"id"`
	TenantID      string     `bun:"tenant_id" json:"tenant_id"`
	Email         string     `bun:"email" json:"email"`
	Name          string     `bun:"name" json:"name"`
	Role          auth.Role  `bun:"role" json:"role"`
	Status        string     `bun:"status" json:"status"`
	PasswordHash  string     `bun:"password_hash" json:"-"`
	Budget        *Budget    `bun:"budget" json:"budget"`
	RateLimit     RateLimit  `bun:"rate_limit" json:"rate_limit"`
	CreatedAt     time.Time  `bun:"created_at" json:"created_at"`
	UpdatedAt     time.Time  `bun:"updated_at" json:"-"`
	LastSeenAt    *time.Time `bun:"last_seen_at" json:"last_seen_at"`
}

// Token kinds.
const (
	TokenGateway    = "gateway"
	TokenUser       = "user"
	TokenSession    = "session"
	TokenPlayground = "playground"
)

// Token is an API token of a gateway or a user, a dashboard session, or a
// playground token. Only the SHA-256 of its secret is stored.
type Token struct {
	bun.BaseModel `bun:"table:tokens"`
	ID            string     `bun:"id,pk" json:"id"`
	Kind          string     `bun:"kind" json:"-"`
	TenantID      string     `bun:"tenant_id" json:"-"`
	GatewayID     *string    `bun:"gateway_id" json:"gateway_id,omitempty"`
	UserID        *string    `bun:"user_id" json:"user_id,omitempty"`
	Name          string     `bun:"name" json:"name"`
	Hash          string     `bun:"hash" json:"-"`
	Prefix        string     `bun:"prefix" json:"prefix"`
	Last4         string     `bun:"last4" json:"last4"`
	ExpiresAt     *time.Time `bun:"expires_at" json:"expires_at"`
	Revoked       bool       `bun:"revoked" json:"revoked"`
	RateLimit     RateLimit  `bun:"rate_limit" json:"rate_limit"`
	AllowedModels StringList `bun:"allowed_models" json:"allowed_models"`
	// Budget caps the spend of the requests made with this token
	// (CONTRACT §14); nil means none.
	Budget     *Budget    `bun:"budget" json:"budget"`
	LastUsedAt *time.Time `bun:"last_used_at" json:"last_used_at"`
	CreatedAt  time.Time  `bun:"created_at" json:"created_at"`
	UpdatedAt  time.Time  `bun:"updated_at" json:"-"`
}

// UserGateway assigns a gateway to a user.
type UserGateway struct {
	bun.BaseModel `bun:"table:user_gateways"`
	UserID        string    `bun:"user_id,pk"`
	GatewayID     string    `bun:"gateway_id,pk"`
	TenantID      string    `bun:"tenant_id"`
	CreatedAt     time.Time `bun:"created_at"`
}

// ModelPrice is the list price of a model, in USD per million tokens.
type ModelPrice struct {
	bun.BaseModel      `bun:"table:model_prices"`
	Provider           string        `bun:"provider,pk" json:"provider"`
	Model              string        `bun:"model,pk" json:"model"`
	InputPerMTok       money.PerMTok `bun:"input_per_mtok" json:"input_per_mtok"`
	OutputPerMTok      money.PerMTok `bun:"output_per_mtok" json:"output_per_mtok"`
	CachedInputPerMTok money.PerMTok `bun:"cached_input_per_mtok" json:"cached_input_per_mtok"`
	// CacheWritePerMTok is the price of prompt tokens written to the
	// provider's cache for the default five minutes (Anthropic); 0 prices
	// them as input.
	CacheWritePerMTok money.PerMTok `bun:"cache_write_per_mtok" json:"cache_write_per_mtok"`
	// CacheWrite1hPerMTok is the price of prompt tokens written to the cache
	// for one hour; 0 prices them as five-minute writes.
	CacheWrite1hPerMTok money.PerMTok `bun:"cache_write_1h_per_mtok" json:"cache_write_1h_per_mtok"`
	// LongContextThresholdTokens, when positive, is the prompt size above
	// which the long-context prices apply to the whole request (CONTRACT
	// §14); 0 means the model has one tier.
	LongContextThresholdTokens int64 `bun:"long_context_threshold_tokens" json:"long_context_threshold_tokens"`
	// LongContextInputPerMTok and LongContextOutputPerMTok are the input
	// and output prices above the threshold; the cache prices scale with
	// the input price there (proxy/cost.go).
	LongContextInputPerMTok  money.PerMTok `bun:"long_context_input_per_mtok" json:"long_context_input_per_mtok"`
	LongContextOutputPerMTok money.PerMTok `bun:"long_context_output_per_mtok" json:"long_context_output_per_mtok"`
	DeprecatedAt             *time.Time    `bun:"deprecated_at" json:"deprecated_at"`
	SunsetAt                 *time.Time    `bun:"sunset_at" json:"sunset_at"`
	Source                   string        `bun:"source" json:"source"`
	UpdatedAt                time.Time     `bun:"updated_at" json:"updated_at"`
}

// AuditEntry is one row of the audit log.
type AuditEntry struct {
	bun.BaseModel `bun:"table:audit_log"`
	ID            string    `bun:"id,pk" json:"id"`
	TS            time.Time `bun:"ts" json:"ts"`
	ActorID       string    `bun:"actor_id" json:"actor_id"`
	ActorEmail    string    `bun:"actor_email" json:"actor_email"`
	ActorRole     string    `bun:"actor_role" json:"actor_role"`
	TenantID      string    `bun:"tenant_id" json:"tenant_id"`
	Action        string    `bun:"action" json:"action"`
	ResourceType  string    `bun:"resource_type" json:"resource_type"`
	ResourceID    string    `bun:"resource_id" json:"resource_id"`
	Changes       Changes   `bun:"changes" json:"changes"`
	Outcome       string    `bun:"outcome" json:"outcome"`
	IP            string    `bun:"ip" json:"ip"`
	RequestID     string    `bun:"request_id" json:"request_id"`
}

// Changes maps a changed field to its new value (secrets masked).
type Changes map[string]any

// Value stores JSON.
func (c Changes) Value() (driver.Value, error) {
	if c == nil {
		return "{}", nil
	}
	return jsonValue(map[string]any(c))
}

// Scan reads JSON.
func (c *Changes) Scan(src any) error { return jsonScan(src, (*map[string]any)(c)) }

// ClientError is an error reported by the dashboard, deduplicated by
// fingerprint.
type ClientError struct {
	bun.BaseModel `bun:"table:client_errors"`
	ID            string    `bun:"id,pk" json:"id"`
	TS            time.Time `bun:"ts" json:"ts"`
	TenantID      string    `bun:"tenant_id" json:"tenant_id"`
	UserID        string    `bun:"user_id" json:"user_id"`
	Fingerprint   string    `bun:"fingerprint" json:"-"`
	Message       string    `bun:"message" json:"message"`
	Stack         string    `bun:"stack" json:"stack"`
	URL           string    `bun:"url" json:"url"`
	Release       string    `bun:"release" json:"release"`
	UserAgent     string    `bun:"user_agent" json:"user_agent"`
	Context       Changes   `bun:"context" json:"context"`
	Count         int64     `bun:"count" json:"count"`
	LastSeenAt    time.Time `bun:"last_seen_at" json:"last_seen_at"`
}
