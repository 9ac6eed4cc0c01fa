package admin

import (
	"context"
	"fmt"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/internal/store"
)

// TenantInput creates a tenant.
type TenantInput struct {
	ID       string                `json:"id"`
	Name     string                `json:"name"`
	Settings *store.TenantSettings `json:"settings"`
}

// TenantPatch changes a tenant; absent fields stay as they are.
type TenantPatch struct {
	Name     *string               `json:"name"`
	Status   *string               `json:"status"`
	Settings *store.TenantSettings `json:"settings"`
	// Budget caps the spend of the whole tenant (CONTRACT §14): set with
	// an object, removed with null.
	Budget graphql.Omittable[*store.Budget] `json:"budget"`
}

// DefaultTenantSettings are the settings of a new tenant.
func DefaultTenantSettings() store.TenantSettings {
	return store.TenantSettings{LogRetentionDays: 30, LogBodiesDefault: true, AllowedProviders: []string{}}
}

func checkTenantSettings(ts *store.TenantSettings) error {
	if ts.LogRetentionDays < 1 || ts.LogRetentionDays > 3650 {
		return apierr.Invalid("settings.log_retention_days", "log_retention_days must be between 1 and 3650")
	}
	if ts.AllowedProviders == nil {
		ts.AllowedProviders = []string{}
	}
	for _, p := range ts.AllowedProviders {
		if _, ok := catalog.LookupProvider(p); !ok {
			return apierr.Invalid("settings.allowed_providers", "unknown provider %q", p)
		}
	}
	return checkMaxInFlight("settings.max_in_flight", ts.MaxInFlight)
}

// tenant loads a tenant the principal may see, or answers 404.
func (s *Service) tenant(ctx context.Context, db bun.IDB, p *auth.Principal, id string) (*store.Tenant, error) {
	if !p.SeesTenant(id) {
		return nil, s.missing(ctx, p, "tenant", id, reasonOtherTenant)
	}
	t, err := store.Get[store.Tenant](ctx, db, store.Eq("id", id))
	if isNotFound(err) {
		return nil, s.missing(ctx, p, "tenant", id, reasonNotFound)
	}
	if err != nil {
		return nil, notFound(err, "tenant")
	}
	return t, nil
}

// ListTenants lists tenants: every tenant for the Administrator, its own
// for a Tenant Administrator. Deleted tenants are left out.
func (s *Service) ListTenants(ctx context.Context, p *auth.Principal, pg Page) (*List[store.Tenant], error) {
	if err := s.can(ctx, p, auth.OpTenantList); err != nil {
		return nil, err
	}
	pg, err := checkPage(pg)
	if err != nil {
		return nil, err
	}
	conds := []store.Cond{store.Ne("status", store.TenantDeleted)}
	if p.Role != auth.Administrator {
		conds = append(conds, store.Eq("id", p.TenantID))
	}
	rows, next, err := store.List(ctx, s.db, "id", func(t *store.Tenant) string { return t.ID }, pg, conds...)
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	for i := range rows {
		s.fillTenantBudget(ctx, &rows[i])
	}
	return &List[store.Tenant]{Data: rows, NextCursor: next}, nil
}

// GetTenant reads a tenant.
func (s *Service) GetTenant(ctx context.Context, p *auth.Principal, id string) (*store.Tenant, error) {
	if err := s.can(ctx, p, auth.OpTenantRead); err != nil {
		return nil, err
	}
	t, err := s.tenant(ctx, s.db, p, id)
	if err != nil {
		return nil, err
	}
	s.fillTenantBudget(ctx, t)
	return t, nil
}

// fillTenantBudget computes the state fields of t's budget.
func (s *Service) fillTenantBudget(ctx context.Context, t *store.Tenant) {
	s.fillBudget(ctx, t.Budget, budget.TenantScope(t.ID))
}

// CreateTenant creates a tenant.
func (s *Service) CreateTenant(ctx context.Context, p *auth.Principal, in TenantInput) (*store.Tenant, error) {
	if err := s.can(ctx, p, auth.OpTenantCreate); err != nil {
		return nil, err
	}
	if err := checkSlug("id", in.ID); err != nil {
		return nil, err
	}
	if in.Name == "" {
		in.Name = in.ID
	}
	if err := checkText("name", in.Name, 200, true); err != nil {
		return nil, err
	}
	settings := DefaultTenantSettings()
	if in.Settings != nil {
		settings = *in.Settings
	}
	if err := checkTenantSettings(&settings); err != nil {
		return nil, err
	}
	sealed, err := s.alertWebhook(ctx, &settings, nil)
	if err != nil {
		return nil, err
	}
	now := s.now()
	t := &store.Tenant{ID: in.ID, Name: in.Name, Status: store.TenantActive, Settings: settings, CreatedAt: now, UpdatedAt: now,
		WebhookSecret: sealed}
	c := &change{Action: "tenant.create", ResourceType: "tenant", ResourceID: t.ID, TenantID: t.ID, Config: true,
		Changes: store.Changes{"id": t.ID, "name": t.Name, "settings": t.Settings}}
	err = s.write(ctx, p, c, func(tx bun.Tx) error { return store.Insert(ctx, tx, t) })
	if err != nil {
		if ae, ok := apierr.From(err); ok && ae.Code == apierr.CodeConflict {
			return nil, apierr.Conflict("id", "tenant %q already exists", in.ID)
		}
		return nil, err
	}
	return t, nil
}

// UpdateTenant changes a tenant's name, settings or (Administrator only) status.
func (s *Service) UpdateTenant(ctx context.Context, p *auth.Principal, id string, in TenantPatch) (*store.Tenant, error) {
	if err := s.can(ctx, p, auth.OpTenantUpdate); err != nil {
		return nil, err
	}
	t, err := s.tenant(ctx, s.db, p, id)
	if err != nil {
		return nil, err
	}
	if t.Status == store.TenantDeleted {
		return nil, apierr.NotFound("tenant")
	}
	changes := store.Changes{}
	var cols []string
	if in.Name != nil {
		if err := checkText("name", *in.Name, 200, true); err != nil {
			return nil, err
		}
		t.Name, changes["name"], cols = *in.Name, *in.Name, append(cols, "name")
	}
	if in.Status != nil {
		if p.Role != auth.Administrator {
			return nil, apierr.New(http.StatusForbidden, apierr.CodeForbidden, "only the Administrator may change a tenant's status")
		}
		if *in.Status != store.TenantActive && *in.Status != store.TenantSuspended {
			return nil, apierr.Invalid("status", "status must be active or suspended (DELETE deletes a tenant)")
		}
		t.Status, changes["status"], cols = *in.Status, *in.Status, append(cols, "status")
	}
	if in.Settings != nil {
		if err := checkTenantSettings(in.Settings); err != nil {
			return nil, err
		}
		// The tenant's in-flight cap protects the other tenants of the
		// process: only the platform's Administrator may move it.
		if p.Role != auth.Administrator && !sameInt(in.Settings.MaxInFlight, t.Settings.MaxInFlight) {
			return nil, apierr.New(http.StatusForbidden, apierr.CodeForbidden, "only the Administrator may change a tenant's settings.max_in_flight")
		}
		sealed, err := s.alertWebhook(ctx, in.Settings, t.WebhookSecret)
		if err != nil {
			return nil, err
		}
		if sealed != t.WebhookSecret {
			t.WebhookSecret, changes["alert_webhook_secret"], cols = sealed, secretChange(sealed), append(cols, "alert_webhook_secret")
		}
		t.Settings, changes["settings"], cols = *in.Settings, *in.Settings, append(cols, "settings")
	}
	if b, ok, err := budgetPatch(in.Budget); err != nil {
		return nil, err
	} else if ok {
		t.Budget, changes["budget"], cols = b, b, append(cols, "budget")
	}
	if len(cols) == 0 {
		s.fillTenantBudget(ctx, t)
		return t, nil
	}
	t.UpdatedAt = s.now()
	cols = append(cols, "updated_at")
	c := &change{Action: "tenant.update", ResourceType: "tenant", ResourceID: id, TenantID: id, Changes: changes, Config: true}
	if err := s.write(ctx, p, c, func(tx bun.Tx) error { return store.Update(ctx, tx, t, cols...) }); err != nil {
		return nil, err
	}
	s.fillTenantBudget(ctx, t)
	return t, nil
}

// DeleteTenant marks a tenant deleted (its gateways stop serving), or with
// purge removes it and all its data, analytics included.
func (s *Service) DeleteTenant(ctx context.Context, p *auth.Principal, id string, purge bool) error {
	if err := s.can(ctx, p, auth.OpTenantDelete); err != nil {
		return err
	}
	if purge {
		if err := s.can(ctx, p, auth.OpTenantPurge); err != nil {
			return err
		}
	}
	t, err := s.tenant(ctx, s.db, p, id)
	if err != nil {
		return err
	}
	if id == p.TenantID {
		return apierr.Invalid("id", "a tenant cannot delete itself: its administrators would lock themselves out")
	}
	if !purge {
		if t.Status == store.TenantDeleted {
			return nil
		}
		t.Status, t.UpdatedAt = store.TenantDeleted, s.now()
		c := &change{Action: "tenant.delete", ResourceType: "tenant", ResourceID: id, TenantID: id, Config: true,
			Changes: store.Changes{"status": store.TenantDeleted}}
		return s.write(ctx, p, c, func(tx bun.Tx) error { return store.Update(ctx, tx, t, "status", "updated_at") })
	}
	c := &change{Action: "tenant.purge", ResourceType: "tenant", ResourceID: id, TenantID: id, Config: true}
	err = s.write(ctx, p, c, func(tx bun.Tx) error { return purgeTenant(ctx, tx, id) })
	if err != nil {
		return err
	}
	if err := s.cfg.Analytics.PurgeTenant(ctx, id); err != nil {
		return fmt.Errorf("purge analytics of tenant %s: %w", id, err)
	}
	return nil
}

// purgeTenant deletes every row of a tenant, children first. The audit log
// is the platform's record and keeps its rows.
func purgeTenant(ctx context.Context, tx bun.Tx, id string) error {
	return deleteInOrder("tenant "+id,
		func() (int64, error) { return store.Delete[store.Token](ctx, tx, store.Eq("tenant_id", id)) },
		func() (int64, error) { return store.Delete[store.UserGateway](ctx, tx, store.Eq("tenant_id", id)) },
		func() (int64, error) { return store.Delete[store.Rule](ctx, tx, store.Eq("tenant_id", id)) },
		func() (int64, error) { return store.Delete[store.ProviderKey](ctx, tx, store.Eq("tenant_id", id)) },
		func() (int64, error) { return store.Delete[store.Gateway](ctx, tx, store.Eq("tenant_id", id)) },
		func() (int64, error) { return store.Delete[store.User](ctx, tx, store.Eq("tenant_id", id)) },
		func() (int64, error) { return store.Delete[store.ClientError](ctx, tx, store.Eq("tenant_id", id)) },
		func() (int64, error) { return store.Delete[store.Tenant](ctx, tx, store.Eq("id", id)) })
}

// deleteInOrder runs deletes in order (children before their parents, for
// the foreign keys) and names what was being deleted in an error.
func deleteInOrder(what string, steps ...func() (int64, error)) error {
	for _, step := range steps {
		if _, err := step(); err != nil {
			return fmt.Errorf("delete %s: %w", what, err)
		}
	}
	return nil
}

// sameInt reports whether two optional integers are equal (both nil, or
// both set to the same value).
func sameInt(a, b *int) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}
