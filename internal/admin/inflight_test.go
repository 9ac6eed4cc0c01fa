package admin

import (
	"context"
	"testing"

	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/store"
)

// TestMaxInFlightSettings covers the concurrency limits of issue 12: the
// max_in_flight of gateways, users and tokens (rate_limit) and of tenants
// (settings) is validated; a token's may not exceed its owner's; and only
// the Administrator may move a tenant's, which protects the other tenants
// of the process.
func TestMaxInFlightSettings(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		root := platformAdmin(t, s)
		if _, err := s.CreateTenant(ctx, root, TenantInput{ID: "acme"}); err != nil {
			t.Fatal(err)
		}
		g, err := s.CreateGateway(ctx, root, "acme", GatewayInput{Slug: "prod"})
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []int{0, -1, 1_000_001} {
			_, err = s.UpdateGateway(ctx, root, g.ID, GatewaySettings{RateLimit: &store.RateLimit{MaxInFlight: &bad}})
			wantParam(t, err, 400, "invalid_request", "rate_limit.max_in_flight")
			_, err = s.CreateUser(ctx, root, "acme", UserInput{Email: "x@acme.test", Role: auth.Member,
				RateLimit: &store.RateLimit{MaxInFlight: &bad}})
			wantParam(t, err, 400, "invalid_request", "rate_limit.max_in_flight")
			settings := DefaultTenantSettings()
			settings.MaxInFlight = &bad
			_, err = s.UpdateTenant(ctx, root, "acme", TenantPatch{Settings: &settings})
			wantParam(t, err, 400, "invalid_request", "settings.max_in_flight")
		}
		ten := 10
		got, err := s.UpdateGateway(ctx, root, g.ID, GatewaySettings{RateLimit: &store.RateLimit{MaxInFlight: &ten}})
		if err != nil || got.RateLimit.MaxInFlight == nil || *got.RateLimit.MaxInFlight != 10 {
			t.Fatalf("gateway max_in_flight 10: %v %+v", err, got)
		}

		u, err := s.CreateUser(ctx, root, "acme", UserInput{Email: "m@acme.test", Role: auth.Member,
			Password: "member password 1", RateLimit: &store.RateLimit{MaxInFlight: &ten}})
		if err != nil {
			t.Fatal(err)
		}
		over := 11
		_, err = s.CreateUserToken(ctx, root, u.ID, TokenInput{Name: "x", RateLimit: &store.RateLimit{MaxInFlight: &over}})
		wantParam(t, err, 400, "invalid_request", "rate_limit.max_in_flight")
		if _, err := s.CreateUserToken(ctx, root, u.ID, TokenInput{Name: "x", RateLimit: &store.RateLimit{MaxInFlight: &ten}}); err != nil {
			t.Fatalf("token at its owner's max_in_flight: %v", err)
		}

		// Only the Administrator moves the tenant's cap; a Tenant
		// Administrator may change other settings while leaving it as is.
		ta := &auth.Principal{UserID: "usr_ta", Role: auth.TenantAdministrator, TenantID: "acme"}
		settings := DefaultTenantSettings()
		settings.MaxInFlight = &ten
		_, err = s.UpdateTenant(ctx, ta, "acme", TenantPatch{Settings: &settings})
		wantCode(t, err, 403, "forbidden")
		tn, err := s.UpdateTenant(ctx, root, "acme", TenantPatch{Settings: &settings})
		if err != nil || tn.Settings.MaxInFlight == nil || *tn.Settings.MaxInFlight != 10 {
			t.Fatalf("Administrator sets max_in_flight 10: %v %+v", err, tn)
		}
		raised := DefaultTenantSettings() // max_in_flight null: back to the process default
		_, err = s.UpdateTenant(ctx, ta, "acme", TenantPatch{Settings: &raised})
		wantCode(t, err, 403, "forbidden")
		same := DefaultTenantSettings()
		same.LogRetentionDays, same.MaxInFlight = 90, &ten
		tn, err = s.UpdateTenant(ctx, ta, "acme", TenantPatch{Settings: &same})
		if err != nil || tn.Settings.LogRetentionDays != 90 || *tn.Settings.MaxInFlight != 10 {
			t.Fatalf("Tenant Administrator keeps max_in_flight: %v %+v", err, tn)
		}
	})
}
