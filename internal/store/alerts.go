package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/money"
)

var _ bun.AfterScanRowHook = (*Tenant)(nil)

// AfterScanRow says in the settings whether a signing secret is set: the
// secret itself is never read back.
func (t *Tenant) AfterScanRow(context.Context) error {
	t.Settings.AlertWebhookSecretSet = t.WebhookSecret != nil && *t.WebhookSecret != ""
	return nil
}

// Alert statuses: claimed and being delivered, delivered (the receiver
// answered 2xx), or failed (every try failed).
const (
	AlertPending   = "pending"
	AlertDelivered = "delivered"
	AlertFailed    = "failed"
)

// Alert is one budget threshold crossed (CONTRACT §14) and the record of
// its delivery. The row is also the claim that makes the alert go out
// once across every replica: (tenant, scope, scope id, period start,
// threshold) is unique, and only the replica whose insert added the row
// delivers it.
type Alert struct {
	bun.BaseModel `bun:"table:alerts"`
	ID            string `bun:"id,pk" json:"id"`
	TenantID      string `bun:"tenant_id" json:"tenant_id"`
	// Scope is tenant, gateway, user or token; ScopeID that object's id.
	Scope   string `bun:"scope" json:"scope"`
	ScopeID string `bun:"scope_id" json:"scope_id"`
	// Period is the budget's: daily, weekly, monthly or total.
	Period string `bun:"period" json:"period"`
	// PeriodStart is the start of the period in unix seconds, 0 for a
	// total budget.
	PeriodStart int64 `bun:"period_start" json:"-"`
	// Threshold is 50, 80 or 100 (per cent of the amount).
	Threshold int       `bun:"threshold" json:"threshold"`
	SpentUSD  money.USD `bun:"spent_usd" json:"spent_usd"`
	AmountUSD money.USD `bun:"amount_usd" json:"amount_usd"`
	// At is when the crossing was seen: the payload's "at".
	At            time.Time  `bun:"at" json:"at"`
	Status        string     `bun:"status" json:"status"`
	Attempts      int        `bun:"attempts" json:"attempts"`
	LastError     string     `bun:"last_error" json:"last_error"`
	LastAttemptAt *time.Time `bun:"last_attempt_at" json:"last_attempt_at"`
	DeliveredAt   *time.Time `bun:"delivered_at" json:"delivered_at"`
}

// MarshalJSON writes the alert with its period_start (null for a total
// budget).
func (a Alert) MarshalJSON() ([]byte, error) {
	type plain Alert
	return json.Marshal(struct {
		plain
		PeriodStart *time.Time `json:"period_start"`
	}{plain(a), a.PeriodStartTime()})
}

// PeriodStartTime is the start of the alert's period; nil for a total
// budget.
func (a *Alert) PeriodStartTime() *time.Time {
	if a.PeriodStart == 0 {
		return nil
	}
	t := time.Unix(a.PeriodStart, 0).UTC()
	return &t
}

// ClaimAlert inserts a unless an alert of the same tenant, scope, scope
// id, period start and threshold exists (INSERT … ON CONFLICT DO NOTHING,
// on SQLite and PostgreSQL alike). It reports whether a was inserted:
// whether this caller owns its delivery.
func ClaimAlert(ctx context.Context, db bun.IDB, a *Alert) (bool, error) {
	res, err := db.NewInsert().Model(a).On("CONFLICT (tenant_id, scope, scope_id, period_start, threshold) DO NOTHING").Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("claim alert: %w", classify(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("claim alert: %w", err)
	}
	return n == 1, nil
}

// ListAlerts returns one page of a tenant's alerts, newest first, as
// ListAudit does.
func ListAlerts(ctx context.Context, db bun.IDB, tenantID string, pg Page) ([]Alert, *string, error) {
	var rows []Alert
	q := db.NewSelect().Model(&rows).Where("tenant_id = ?", tenantID)
	return listNewestFirst(ctx, "alerts", q, &rows, pg, func(a *Alert) string { return a.ID })
}
