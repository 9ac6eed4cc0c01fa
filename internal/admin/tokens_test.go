package admin

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/ids"
	"github.com/sluicehq/sluice/internal/store"
)

var secretRE = regexp.MustCompile(`^sk-sl-[0-9A-Za-z]{40}$`)

// wantSecretNowhere fails when secret appears in any column of the tokens
// or audit_log tables.
func wantSecretNowhere(t *testing.T, s *Service, secret string) {
	t.Helper()
	ctx := context.Background()
	for _, table := range []string{"tokens", "audit_log"} {
		var rows []map[string]any
		if err := s.db.NewSelect().Table(table).Scan(ctx, &rows); err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		for _, r := range rows {
			for col, v := range r {
				text := fmt.Sprint(v)
				if b, ok := v.([]byte); ok {
					text = string(b)
				}
				// The random part alone, so that no encoding of the whole hides it.
				if strings.Contains(text, strings.TrimPrefix(secret, ids.TokenPrefix)) {
					t.Fatalf("%s.%s holds the secret", table, col)
				}
			}
		}
	}
}

func TestGatewayTokens(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		ta := tenantWithAdmin(t, s, admin, "acme")
		g, err := s.CreateGateway(ctx, ta, "acme", GatewayInput{Slug: "prod"})
		if err != nil {
			t.Fatal(err)
		}
		exp := s.now().Add(24 * time.Hour)
		rpm := 100
		ct, err := s.CreateGatewayToken(ctx, ta, g.ID, TokenInput{Name: "ci", ExpiresAt: &exp,
			RateLimit: &store.RateLimit{RequestsPerMinute: &rpm}, AllowedModels: []string{"gpt-4o-mini"}})
		if err != nil {
			t.Fatal(err)
		}
		if !secretRE.MatchString(ct.Secret) {
			t.Fatalf("secret %q does not look like sk-sl- + 40 base62", ct.Secret)
		}
		if ct.Hash != ids.Hash(ct.Secret) || ct.Prefix != ct.Secret[:10] || ct.Last4 != ct.Secret[len(ct.Secret)-4:] {
			t.Fatalf("got hash/prefix/last4 %q %q %q", ct.Hash, ct.Prefix, ct.Last4)
		}
		if !strings.HasPrefix(ct.ID, "tok_") || ct.GatewayID == nil || *ct.GatewayID != g.ID || ct.UserID != nil {
			t.Fatalf("got %+v", ct.Token)
		}
		stored, err := store.Get[store.Token](ctx, s.db, store.Eq("id", ct.ID))
		if err != nil {
			t.Fatal(err)
		}
		if stored.Hash != ids.Hash(ct.Secret) || stored.Kind != store.TokenGateway || stored.TenantID != "acme" {
			t.Fatalf("stored %+v", stored)
		}
		wantSecretNowhere(t, s, ct.Secret)

		for _, tc := range []struct {
			name  string
			in    TokenInput
			param string
		}{
			{"past expiry", TokenInput{ExpiresAt: &[]time.Time{s.now().Add(-time.Minute)}[0]}, "expires_at"},
			{"long name", TokenInput{Name: strings.Repeat("n", 201)}, "name"},
			{"too many models", TokenInput{AllowedModels: make([]string, 101)}, "allowed_models"},
			{"empty model", TokenInput{AllowedModels: []string{""}}, "allowed_models[0]"},
			{"long model", TokenInput{AllowedModels: []string{strings.Repeat("m", 257)}}, "allowed_models[0]"},
			{"bad limit", TokenInput{RateLimit: &store.RateLimit{RequestsPerMinute: new(int)}}, "rate_limit.requests_per_minute"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := s.CreateGatewayToken(ctx, ta, g.ID, tc.in)
				wantParam(t, err, 400, "invalid_request", tc.param)
			})
		}

		l, err := s.ListGatewayTokens(ctx, ta, g.ID, Page{})
		if err != nil || len(l.Data) != 1 || l.Data[0].ID != ct.ID {
			t.Fatalf("list: %v %+v", err, l)
		}

		name, yes, no := "ci-2", true, false
		got, err := s.UpdateGatewayToken(ctx, ta, g.ID, ct.ID, TokenPatch{Name: &name, ExpiresAt: graphql.OmittableOf[*time.Time](nil)})
		if err != nil || got.Name != name || got.ExpiresAt != nil || got.Revoked {
			t.Fatalf("patch: %v %+v", err, got)
		}
		got, err = s.UpdateGatewayToken(ctx, ta, g.ID, ct.ID, TokenPatch{Revoked: &yes})
		if err != nil || !got.Revoked {
			t.Fatalf("revoke: %v %+v", err, got)
		}
		_, err = s.UpdateGatewayToken(ctx, ta, g.ID, ct.ID, TokenPatch{Revoked: &no})
		wantParam(t, err, 400, "invalid_request", "revoked")
		again, err := store.Get[store.Token](ctx, s.db, store.Eq("id", ct.ID))
		if err != nil || !again.Revoked || again.Name != name {
			t.Fatalf("reread: %v %+v", err, again)
		}
		_, err = s.UpdateGatewayToken(ctx, ta, g.ID, "tok_missing", TokenPatch{Revoked: &yes})
		wantCode(t, err, 404, "not_found")

		if err := s.DeleteGatewayToken(ctx, ta, g.ID, ct.ID); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.DeleteGatewayToken(ctx, ta, g.ID, ct.ID), 404, "not_found")
		l, err = s.ListGatewayTokens(ctx, ta, g.ID, Page{})
		if err != nil || len(l.Data) != 0 {
			t.Fatalf("list after delete: %v %+v", err, l)
		}

		for _, r := range []auth.Role{auth.AIManager, auth.Finance, auth.Member, auth.Viewer, auth.DemoUser} {
			p := &auth.Principal{UserID: "usr_x", Role: r, TenantID: "acme"}
			_, err := s.CreateGatewayToken(ctx, p, g.ID, TokenInput{})
			wantCode(t, err, 403, "forbidden")
		}
	})
}

func TestTokenListPaging(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		g, err := s.CreateGateway(ctx, admin, "platform", GatewayInput{Slug: "prod"})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for i := range 5 {
			ct, err := s.CreateGatewayToken(ctx, admin, g.ID, TokenInput{Name: fmt.Sprint(i)})
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, ct.ID)
		}
		var got []string
		pg := Page{Limit: 2}
		for {
			l, err := s.ListGatewayTokens(ctx, admin, g.ID, pg)
			if err != nil {
				t.Fatal(err)
			}
			for _, tk := range l.Data {
				got = append(got, tk.ID)
			}
			if l.NextCursor == nil {
				break
			}
			pg.Cursor = *l.NextCursor
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("paged ids %v, want %v", got, want)
		}
	})
}

func TestUserTokens(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		ta := tenantWithAdmin(t, s, admin, "acme")
		for _, r := range []auth.Role{auth.Finance, auth.Viewer, auth.DemoUser} {
			u, err := s.CreateUser(ctx, ta, "acme", UserInput{Email: string(r) + "@acme.test", Role: r})
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.CreateUserToken(ctx, ta, u.ID, TokenInput{Name: "x"})
			wantCode(t, err, 400, "role_cannot_hold_tokens")
		}
		rpm := 10
		u, err := s.CreateUser(ctx, ta, "acme", UserInput{Email: "m@acme.test", Role: auth.Member, Password: "member password 1",
			RateLimit: &store.RateLimit{RequestsPerMinute: &rpm}})
		if err != nil {
			t.Fatal(err)
		}
		over := 11
		_, err = s.CreateUserToken(ctx, ta, u.ID, TokenInput{RateLimit: &store.RateLimit{RequestsPerMinute: &over}})
		wantParam(t, err, 400, "invalid_request", "rate_limit.requests_per_minute")
		ct, err := s.CreateUserToken(ctx, ta, u.ID, TokenInput{Name: "laptop", RateLimit: &store.RateLimit{RequestsPerMinute: &rpm}})
		if err != nil {
			t.Fatal(err)
		}
		if !secretRE.MatchString(ct.Secret) || ct.UserID == nil || *ct.UserID != u.ID || ct.GatewayID != nil {
			t.Fatalf("got %+v", ct)
		}
		wantSecretNowhere(t, s, ct.Secret)
		// A session of the user is not one of its API tokens.
		if _, err := s.CreateSession(ctx, "m@acme.test", "member password 1", "10.0.0.1"); err != nil {
			t.Fatal(err)
		}
		l, err := s.ListUserTokens(ctx, ta, u.ID, Page{})
		if err != nil || len(l.Data) != 1 || l.Data[0].ID != ct.ID {
			t.Fatalf("list: %v %+v", err, l)
		}
	})
}

func TestMyAccount(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		ta := tenantWithAdmin(t, s, admin, "acme")
		tpm := 1000
		u, err := s.CreateUser(ctx, ta, "acme", UserInput{Email: "m@acme.test", Role: auth.Member,
			RateLimit: &store.RateLimit{TokensPerMinute: &tpm}, Budget: &store.Budget{AmountUSD: 5_000_000_000, Period: store.PeriodMonthly, Hard: true}})
		if err != nil {
			t.Fatal(err)
		}
		other, err := s.CreateUser(ctx, ta, "acme", UserInput{Email: "o@acme.test", Role: auth.Member})
		if err != nil {
			t.Fatal(err)
		}
		me := principalOf(u)
		got, err := s.Me(ctx, me)
		if err != nil || got.ID != u.ID || got.Budget == nil || got.Budget.RemainingUSD != 5_000_000_000 || got.Budget.ResetsAt == nil {
			t.Fatalf("me: %v %+v", err, got)
		}
		over := 1001
		_, err = s.CreateMyToken(ctx, me, TokenInput{RateLimit: &store.RateLimit{TokensPerMinute: &over}})
		wantParam(t, err, 400, "invalid_request", "rate_limit.tokens_per_minute")
		ct, err := s.CreateMyToken(ctx, me, TokenInput{Name: "mine"})
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := s.CreateUserToken(ctx, ta, other.ID, TokenInput{Name: "theirs"})
		if err != nil {
			t.Fatal(err)
		}
		l, err := s.ListMyTokens(ctx, me, Page{})
		if err != nil || len(l.Data) != 1 || l.Data[0].ID != ct.ID {
			t.Fatalf("list: %v %+v", err, l)
		}
		wantCode(t, s.DeleteMyToken(ctx, me, theirs.ID), 404, "not_found")
		if err := s.DeleteMyToken(ctx, me, ct.ID); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.DeleteMyToken(ctx, me, ct.ID), 404, "not_found")

		for _, r := range []auth.Role{auth.Finance, auth.Viewer, auth.DemoUser} {
			p := &auth.Principal{UserID: u.ID, Role: r, TenantID: "acme"}
			_, err := s.Me(ctx, p)
			wantCode(t, err, 403, "forbidden")
			_, err = s.CreateMyToken(ctx, p, TokenInput{})
			wantCode(t, err, 403, "forbidden")
		}
	})
}
