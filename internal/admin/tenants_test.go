package admin

import (
	"context"
	"testing"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/store"
)

func wantCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %d %s", status, code)
	}
	ae, ok := apierr.From(err)
	if !ok || ae.Status != status || ae.Code != code {
		t.Fatalf("got %v (%+v), want %d %s", err, ae, status, code)
	}
}

func TestTenantLifecycle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		tn, err := s.CreateTenant(ctx, admin, TenantInput{ID: "acme", Name: "Acme"})
		if err != nil {
			t.Fatal(err)
		}
		if tn.Settings.LogRetentionDays != 30 || tn.Status != store.TenantActive {
			t.Fatalf("got %+v, want defaults", tn)
		}
		_, err = s.CreateTenant(ctx, admin, TenantInput{ID: "acme"})
		wantCode(t, err, 409, "conflict")
		_, err = s.CreateTenant(ctx, admin, TenantInput{ID: "Bad_Slug"})
		wantCode(t, err, 400, "invalid_request")

		ta := &auth.Principal{UserID: "usr_ta", Role: auth.TenantAdministrator, TenantID: "acme"}
		_, err = s.CreateTenant(ctx, ta, TenantInput{ID: "other"})
		wantCode(t, err, 403, "forbidden")
		_, err = s.GetTenant(ctx, ta, "platform")
		wantCode(t, err, 404, "not_found")
		name := "Acme Corp"
		got, err := s.UpdateTenant(ctx, ta, "acme", TenantPatch{Name: &name})
		if err != nil || got.Name != name {
			t.Fatalf("update own tenant: %v %+v", err, got)
		}
		_, err = s.UpdateTenant(ctx, ta, "platform", TenantPatch{Name: &name})
		wantCode(t, err, 404, "not_found")
		l, err := s.ListTenants(ctx, ta, Page{})
		if err != nil || len(l.Data) != 1 || l.Data[0].ID != "acme" {
			t.Fatalf("tenant admin list: %v %+v", err, l)
		}
		wantCode(t, s.DeleteTenant(ctx, ta, "acme", false), 403, "forbidden")

		g, err := s.CreateGateway(ctx, admin, "acme", GatewayInput{Slug: "prod"})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteTenant(ctx, admin, "acme", false); err != nil {
			t.Fatal(err)
		}
		got, err = s.GetTenant(ctx, admin, "acme")
		if err != nil || got.Status != store.TenantDeleted {
			t.Fatalf("soft-deleted tenant: %v %+v", err, got)
		}
		if err := s.DeleteTenant(ctx, admin, "acme", true); err != nil {
			t.Fatal(err)
		}
		_, err = s.GetTenant(ctx, admin, "acme")
		wantCode(t, err, 404, "not_found")
		_, err = s.GetGateway(ctx, admin, g.ID)
		wantCode(t, err, 404, "not_found")

		audit, err := store.All[store.AuditEntry](ctx, s.db, "id")
		if err != nil {
			t.Fatal(err)
		}
		var actions []string
		for _, a := range audit {
			actions = append(actions, a.Action+":"+a.Outcome)
		}
		// The Tenant Administrator's reads and writes of another tenant are
		// recorded as denied lookups; the Administrator's 404s are not.
		want := []string{"tenant.create:ok", "tenant.create:denied", "tenant.lookup:denied", "tenant.update:ok",
			"tenant.lookup:denied", "tenant.delete:denied", "gateway.create:ok", "tenant.delete:ok", "tenant.purge:ok"}
		if len(actions) != len(want) {
			t.Fatalf("audit actions %v, want %v", actions, want)
		}
		for i := range want {
			if actions[i] != want[i] {
				t.Fatalf("audit actions %v, want %v", actions, want)
			}
		}
	})
}

func TestGatewaySettingsValidation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		g, err := s.CreateGateway(ctx, admin, "platform", GatewayInput{Slug: "prod"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.CreateGateway(ctx, admin, "platform", GatewayInput{Slug: "prod"})
		wantCode(t, err, 409, "conflict")
		bad := 0
		_, err = s.UpdateGateway(ctx, admin, g.ID, GatewaySettings{RequestTimeoutMS: &bad})
		wantCode(t, err, 400, "invalid_request")
		routes := []store.Route{{Name: "smart", Targets: []store.RouteTarget{{Provider: "nope", Model: "x"}}}}
		_, err = s.UpdateGateway(ctx, admin, g.ID, GatewaySettings{Routes: &routes})
		wantCode(t, err, 400, "invalid_request")
		routes[0].Targets[0].Provider = "openai"
		got, err := s.UpdateGateway(ctx, admin, g.ID, GatewaySettings{Routes: &routes})
		if err != nil || len(got.Routes) != 1 || got.Routes[0].Strategy != "fallback" || got.Routes[0].Targets[0].Weight != 1 {
			t.Fatalf("routes: %v %+v", err, got)
		}
		again, err := s.GetGateway(ctx, admin, g.ID)
		if err != nil || len(again.Routes) != 1 {
			t.Fatalf("reread: %v %+v", err, again)
		}
	})
}
