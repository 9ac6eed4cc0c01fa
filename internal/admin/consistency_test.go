package admin

import (
	"context"
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/internal/store"
)

// TestRouteKeyReferences (checklist 58): a configuration that references a
// missing key is refused when it is written — a route naming a key alias
// the gateway does not have, or the deletion of a key a route names — so
// that the proxy is never handed a route it cannot serve.
func TestRouteKeyReferences(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		main := "main"
		routes := []store.Route{{Name: "pinned", Targets: []store.RouteTarget{
			{Provider: "openai", Model: "gpt-4o-mini"}, {Provider: "openai", Model: "gpt-4o", KeyAlias: &main}}}}

		_, err := s.CreateGateway(ctx, admin, "platform", GatewayInput{Slug: "fresh", GatewaySettings: GatewaySettings{Routes: &routes}})
		wantErrParam(t, err, 400, "invalid_request", "routes[0].targets[1].key_alias")
		g := mkGateway(t, s, admin, "acme")
		_, err = s.UpdateGateway(ctx, admin, g.ID, GatewaySettings{Routes: &routes})
		wantErrParam(t, err, 400, "invalid_request", "routes[0].targets[1].key_alias")
		// A key of another provider with that alias is not it.
		if _, err := s.CreateKey(ctx, admin, g.ID, KeyInput{Provider: "groq", Alias: "main", Key: testKey}); err != nil {
			t.Fatal(err)
		}
		_, err = s.UpdateGateway(ctx, admin, g.ID, GatewaySettings{Routes: &routes})
		wantErrParam(t, err, 400, "invalid_request", "routes[0].targets[1].key_alias")
		if got, err := s.GetGateway(ctx, admin, g.ID); err != nil || len(got.Routes) != 0 {
			t.Fatalf("a refused update changed the gateway: %v %+v", err, got)
		}

		if _, err := s.CreateKey(ctx, admin, g.ID, KeyInput{Provider: "openai", Alias: "main", Key: testKey}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateGateway(ctx, admin, g.ID, GatewaySettings{Routes: &routes}); err != nil {
			t.Fatalf("routes naming an existing key: %v", err)
		}
		// The key a route names cannot be deleted from under it.
		wantErrParam(t, s.DeleteKey(ctx, admin, g.ID, "openai", "main"), 409, "conflict", "alias")
		if l, err := s.ListKeys(ctx, admin, g.ID); err != nil || len(l.Data) != 2 {
			t.Fatalf("keys after a refused delete: %v %+v", err, l)
		}
		if err := s.DeleteKey(ctx, admin, g.ID, "groq", "main"); err != nil {
			t.Fatalf("deleting a key no route names: %v", err)
		}
		routes[0].Targets = routes[0].Targets[:1]
		if _, err := s.UpdateGateway(ctx, admin, g.ID, GatewaySettings{Routes: &routes}); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteKey(ctx, admin, g.ID, "openai", "main"); err != nil {
			t.Fatalf("deleting a key once no route names it: %v", err)
		}
	})
}

// TestKeysPerGatewayBounded (checklist 58): the keys of a gateway are
// bounded like its routes and rules, so that no tenant can grow the
// configuration every proxy loads (and each request's key selection)
// without limit.
func TestKeysPerGatewayBounded(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		g := mkGateway(t, s, admin, "acme")
		for i := range maxKeysPerGateway {
			if _, err := s.CreateKey(ctx, admin, g.ID, KeyInput{Provider: "openai", Alias: fmt.Sprintf("k%d", i), Key: testKey}); err != nil {
				t.Fatalf("key %d: %v", i, err)
			}
		}
		_, err := s.CreateKey(ctx, admin, g.ID, KeyInput{Provider: "anthropic", Alias: "one-more", Key: testKey})
		wantErrParam(t, err, 400, "invalid_request", "")
		// Another gateway has its own allowance.
		other, err := s.CreateGateway(ctx, admin, "acme", GatewayInput{Slug: "other"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateKey(ctx, admin, other.ID, KeyInput{Provider: "openai", Alias: "main", Key: testKey}); err != nil {
			t.Fatal(err)
		}
	})
}
