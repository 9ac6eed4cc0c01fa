package snapshot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
)

// env is a real store with an admin service and its Administrator.
type env struct {
	st *store.Store
	// box seals the provider keys the service writes and opens them for
	// the snapshot.
	box   *secret.Box
	svc   *admin.Service
	admin *auth.Principal
	// adminToken is the bootstrap user token of the Administrator.
	adminToken string
}

// newEnv opens a store of backend b, bootstraps it through the admin
// service and authenticates as the bootstrap Administrator. onChange, when
// not nil, is the service's OnChange.
func newEnv(t *testing.T, b testenv.Backend, onChange func()) *env {
	t.Helper()
	ctx := context.Background()
	st := testenv.Store(t, b)
	box, err := secret.NewBox(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := admin.New(admin.Config{Store: st, Box: box, AllowPrivateBaseURLs: true, OnChange: onChange})
	if err != nil {
		t.Fatal(err)
	}
	tok, created, err := svc.Bootstrap(ctx, "")
	if err != nil || !created {
		t.Fatalf("Bootstrap = %v, %v", created, err)
	}
	p, err := svc.Authenticate(ctx, tok)
	if err != nil {
		t.Fatalf("Authenticate(bootstrap token): %v", err)
	}
	return &env{st: st, box: box, svc: svc, admin: p, adminToken: tok}
}

func forEachBackend(t *testing.T, fn func(t *testing.T, b testenv.Backend)) {
	for _, b := range testenv.Backends {
		t.Run(string(b), func(t *testing.T) { fn(t, b) })
	}
}

// result carries a call's value and error to must, so that setup reads as
// one line: try(svc.CreateGateway(…)).must(t).
type result[T any] struct {
	v   T
	err error
}

func try[T any](v T, err error) result[T] { return result[T]{v, err} }

func (r result[T]) must(t *testing.T) T {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.v
}

func hashOf(secret string) [32]byte { return sha256.Sum256([]byte(secret)) }

func (e *env) tenant(t *testing.T, id string) {
	t.Helper()
	if _, err := e.svc.CreateTenant(context.Background(), e.admin, admin.TenantInput{ID: id, Name: id}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) gateway(t *testing.T, tenant, slug string) *store.Gateway {
	t.Helper()
	return try(e.svc.CreateGateway(context.Background(), e.admin, tenant, admin.GatewayInput{Slug: slug})).must(t)
}

func (e *env) user(t *testing.T, tenant, email string, role auth.Role) *store.User {
	t.Helper()
	return try(e.svc.CreateUser(context.Background(), e.admin, tenant,
		admin.UserInput{Email: email, Name: email, Role: role, Password: "correct horse battery"})).must(t)
}

func (e *env) userToken(t *testing.T, userID string) *admin.CreatedToken {
	t.Helper()
	return try(e.svc.CreateUserToken(context.Background(), e.admin, userID, admin.TokenInput{Name: "t"})).must(t)
}

func (e *env) gatewayToken(t *testing.T, gatewayID string, in admin.TokenInput) *admin.CreatedToken {
	t.Helper()
	return try(e.svc.CreateGatewayToken(context.Background(), e.admin, gatewayID, in)).must(t)
}

func (e *env) build(t *testing.T, now time.Time) *Snapshot {
	t.Helper()
	return try(Build(context.Background(), e.st, e.box, now)).must(t)
}

func TestBuild(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		e := newEnv(t, b, nil)
		if _, err := e.svc.SeedPrices(ctx); err != nil {
			t.Fatal(err)
		}

		e.tenant(t, "acme")
		prod := try(e.svc.CreateGateway(ctx, e.admin, "acme", admin.GatewayInput{Slug: "prod",
			GatewaySettings: admin.GatewaySettings{Budget: graphql.OmittableOf(&store.Budget{
				AmountUSD: 100 * money.PerDollar, Period: store.PeriodMonthly, Hard: true})}})).must(t)
		dev := e.gateway(t, "acme", "dev")
		keys := map[string]string{"zeta": "sk-zeta-0123456789abcdef", "alpha": "sk-alpha-0123456789abcdef"}
		for alias, key := range keys {
			try(e.svc.CreateKey(ctx, e.admin, prod.ID, admin.KeyInput{Provider: "openai", Alias: alias, Key: key})).must(t)
		}
		try(e.svc.CreateKey(ctx, e.admin, prod.ID, admin.KeyInput{Provider: "anthropic", Alias: "main",
			Key: "sk-ant-0123456789abcdef", BaseURL: "http://127.0.0.1:9999"})).must(t)
		on, off := true, false
		try(e.svc.CreateRule(ctx, e.admin, prod.ID, admin.RuleInput{Name: "no secrets", Enabled: &on,
			Direction: store.DirRequest, Kind: store.KindKeyword, Patterns: []string{"password"}, Action: store.ActionBlock})).must(t)
		try(e.svc.CreateRule(ctx, e.admin, prod.ID, admin.RuleInput{Name: "off", Enabled: &off,
			Direction: store.DirRequest, Kind: store.KindKeyword, Patterns: []string{"x"}, Action: store.ActionFlag})).must(t)

		gwTok := e.gatewayToken(t, prod.ID, admin.TokenInput{Name: "app"})
		soon := time.Now().Add(30 * time.Minute)
		expiring := e.gatewayToken(t, prod.ID, admin.TokenInput{Name: "soon", ExpiresAt: &soon})
		revoked := e.gatewayToken(t, prod.ID, admin.TokenInput{Name: "revoked"})
		try(e.svc.UpdateGatewayToken(ctx, e.admin, prod.ID, revoked.ID, admin.TokenPatch{Revoked: &on})).must(t)

		member := e.user(t, "acme", "member@acme.test", auth.Member)
		if err := e.svc.AssignGateway(ctx, e.admin, member.ID, prod.ID); err != nil {
			t.Fatal(err)
		}
		memberTok := e.userToken(t, member.ID)
		session := try(e.svc.CreateSession(ctx, "member@acme.test", "correct horse battery", "127.0.0.1")).must(t)
		tadmin := e.user(t, "acme", "ta@acme.test", auth.TenantAdministrator)
		tadminTok := e.userToken(t, tadmin.ID)
		disabled := e.user(t, "acme", "off@acme.test", auth.Member)
		disabledTok := e.userToken(t, disabled.ID)
		st := store.UserDisabled
		try(e.svc.UpdateUser(ctx, e.admin, disabled.ID, admin.UserPatch{Status: &st})).must(t)
		demoted := e.user(t, "acme", "demoted@acme.test", auth.Member)
		demotedTok := e.userToken(t, demoted.ID)
		viewer := auth.Viewer
		try(e.svc.UpdateUser(ctx, e.admin, demoted.ID, admin.UserPatch{Role: &viewer})).must(t)
		play := try(e.svc.CreatePlaygroundToken(ctx, e.admin, prod.ID)).must(t)

		e.tenant(t, "gone")
		goneGw := e.gateway(t, "gone", "prod")
		goneTok := e.gatewayToken(t, goneGw.ID, admin.TokenInput{Name: "gone"})
		if err := e.svc.DeleteTenant(ctx, e.admin, "gone", false); err != nil {
			t.Fatal(err)
		}

		now := time.Now()
		s := e.build(t, now)

		if want := try(e.st.ConfigVersion(ctx)).must(t); s.Version != want {
			t.Errorf("Version = %d, want %d", s.Version, want)
		}
		if !s.BuiltAt.Equal(now) {
			t.Errorf("BuiltAt = %v, want %v", s.BuiltAt, now)
		}

		t.Run("gateways", func(t *testing.T) {
			g, ok := s.Gateway("acme", "prod")
			if !ok {
				t.Fatal(`Gateway("acme", "prod") not found`)
			}
			if byID, _ := s.GatewayByID(prod.ID); byID != g {
				t.Errorf("GatewayByID(%s) = %p, want %p", prod.ID, byID, g)
			}
			if g.ID != prod.ID || g.Tenant == nil || g.Tenant.ID != "acme" || g.Tenant.Status != store.TenantActive {
				t.Errorf("gateway = %s of %+v, want %s of active acme", g.ID, g.Tenant, prod.ID)
			}
			if g.Budget == nil || g.Budget.AmountUSD != 100*money.PerDollar || g.Budget.Period != store.PeriodMonthly {
				t.Errorf("Budget = %+v, want 100 USD monthly", g.Budget)
			}
			if g.RequestTimeoutMS != 120000 || g.Retry.MaxAttempts != 2 {
				t.Errorf("settings = timeout %d, retry %+v; want the defaults", g.RequestTimeoutMS, g.Retry)
			}
			if len(g.Rules) != 1 || g.Rules[0].Name != "no secrets" {
				t.Errorf("Rules = %+v, want only the enabled rule", g.Rules)
			}
			if _, ok := s.Gateway("acme", "nope"); ok {
				t.Error(`Gateway("acme", "nope") found`)
			}
			if _, ok := s.Gateway("gone", "prod"); ok {
				t.Error("gateway of a deleted tenant is served")
			}
			if _, ok := s.GatewayByID(goneGw.ID); ok {
				t.Error("gateway of a deleted tenant is found by id")
			}
			if tn, ok := s.Tenant("gone"); !ok || tn.Status != store.TenantDeleted {
				t.Errorf(`Tenant("gone") = %+v, %v; want it, deleted`, tn, ok)
			}
			var ids []string
			for _, g := range s.Gateways() {
				ids = append(ids, g.ID)
			}
			want := []string{prod.ID, dev.ID}
			slices.Sort(want)
			if diff := cmp.Diff(want, ids); diff != "" {
				t.Errorf("Gateways() ids (-want +got):\n%s", diff)
			}
		})

		t.Run("keys", func(t *testing.T) {
			g, _ := s.Gateway("acme", "prod")
			var aliases []string
			for _, k := range g.Keys["openai"] {
				aliases = append(aliases, k.Alias)
				if got := k.Secret.Reveal(); got != keys[k.Alias] {
					t.Errorf("key %s decrypts to %q, want %q", k.Alias, got, keys[k.Alias])
				}
				if k.Provider != "openai" || k.Weight != 1 || k.ID == "" {
					t.Errorf("key %s = %+v", k.Alias, k)
				}
			}
			if diff := cmp.Diff([]string{"alpha", "zeta"}, aliases); diff != "" {
				t.Errorf("openai key aliases (-want +got):\n%s", diff)
			}
			ant := g.Keys["anthropic"]
			if len(ant) != 1 || ant[0].Secret.Reveal() != "sk-ant-0123456789abcdef" || ant[0].BaseURL != "http://127.0.0.1:9999" {
				t.Errorf("anthropic keys = %+v", ant)
			}
			if d, _ := s.GatewayByID(dev.ID); len(d.Keys) != 0 {
				t.Errorf("dev keys = %v, want none", d.Keys)
			}
		})

		t.Run("tokens", func(t *testing.T) {
			gDev, _ := s.GatewayByID(dev.ID)
			gProd, _ := s.GatewayByID(prod.ID)
			tests := []struct {
				name      string
				secret    string
				present   bool
				kind      string
				role      auth.Role // of the owner; "" for none
				validProd bool
				validDev  bool
			}{
				{"gateway token", gwTok.Secret, true, store.TokenGateway, "", true, false},
				{"expiring gateway token", expiring.Secret, true, store.TokenGateway, "", true, false},
				{"revoked gateway token", revoked.Secret, false, "", "", false, false},
				{"bootstrap admin token", e.adminToken, true, store.TokenUser, auth.Administrator, true, true},
				{"member token", memberTok.Secret, true, store.TokenUser, auth.Member, true, false},
				{"tenant admin token", tadminTok.Secret, true, store.TokenUser, auth.TenantAdministrator, true, true},
				{"demoted user token", demotedTok.Secret, true, store.TokenUser, auth.Viewer, false, false},
				{"disabled user token", disabledTok.Secret, false, "", "", false, false},
				{"session token", session.Token, false, "", "", false, false},
				{"playground token", play.Token, true, store.TokenPlayground, auth.Administrator, true, false},
				{"deleted tenant's gateway token", goneTok.Secret, false, "", "", false, false},
				{"unknown secret", "sk-sl-unknown", false, "", "", false, false},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					tok, ok := s.Token(hashOf(tt.secret))
					if ok != tt.present {
						t.Fatalf("Token found = %v, want %v", ok, tt.present)
					}
					if !ok {
						return
					}
					if tok.Kind != tt.kind || tok.Revoked {
						t.Errorf("Kind = %q, Revoked = %v; want %q, false", tok.Kind, tok.Revoked, tt.kind)
					}
					var role auth.Role
					if tok.User != nil {
						role = tok.User.Role
					}
					if role != tt.role {
						t.Errorf("owner role = %q, want %q", role, tt.role)
					}
					if tt.role != "" && tt.role != auth.Viewer && !role.CanCallInference() {
						t.Errorf("role %s cannot call inference", role)
					}
					// A demoted user's token stays, so that the proxy can
					// answer 403 role_cannot_call_inference; its role says no.
					if got := tok.ValidOn(gProd) && (tok.User == nil || tok.User.Role.CanCallInference()); got != tt.validProd {
						t.Errorf("usable on prod = %v, want %v", got, tt.validProd)
					}
					if got := tok.ValidOn(gDev) && (tok.User == nil || tok.User.Role.CanCallInference()); got != tt.validDev {
						t.Errorf("usable on dev = %v, want %v", got, tt.validDev)
					}
					if tok.Expired(now) {
						t.Errorf("Expired(now) = true")
					}
				})
			}
			m, _ := s.Token(hashOf(memberTok.Secret))
			if m.UserID != member.ID || m.TenantID != "acme" || m.GatewayID != "" {
				t.Errorf("member token = %+v", m)
			}
			if diff := cmp.Diff(map[string]bool{prod.ID: true}, m.User.Gateways); diff != "" {
				t.Errorf("member's gateways (-want +got):\n%s", diff)
			}
			p, _ := s.Token(hashOf(play.Token))
			if p.GatewayID != prod.ID || p.UserID != e.admin.UserID || p.ExpiresAt == nil {
				t.Errorf("playground token = %+v", p)
			}
			x, _ := s.Token(hashOf(expiring.Secret))
			if x.ExpiresAt == nil || !x.Expired(soon) || x.Expired(soon.Add(-time.Second)) {
				t.Errorf("expiring token: ExpiresAt %v, Expired checks wrong", x.ExpiresAt)
			}
		})

		t.Run("expired at build time", func(t *testing.T) {
			// Within a day of expiry a token stays, marked expired, so that
			// the proxy answers token_expired; after that it is left out.
			later := e.build(t, now.Add(time.Hour))
			for name, sec := range map[string]string{"expiring gateway token": expiring.Secret, "playground token": play.Token} {
				tok, ok := later.Token(hashOf(sec))
				if !ok || !tok.Expired(now.Add(time.Hour)) {
					t.Errorf("%s: in snapshot %v, want present and expired", name, ok)
				}
			}
			muchLater := e.build(t, now.Add(48*time.Hour))
			for name, sec := range map[string]string{"expiring gateway token": expiring.Secret, "playground token": play.Token} {
				if _, ok := muchLater.Token(hashOf(sec)); ok {
					t.Errorf("%s is in a snapshot built a day after it expired", name)
				}
			}
			if _, ok := later.Token(hashOf(gwTok.Secret)); !ok {
				t.Error("token without expiry missing")
			}
		})

		t.Run("prices", func(t *testing.T) {
			p, ok := s.Price("openai", "gpt-4o")
			if !ok || p.InputPerMTok <= 0 || p.OutputPerMTok <= 0 || p.Provider != "openai" || p.Model != "gpt-4o" {
				t.Errorf(`Price("openai", "gpt-4o") = %+v, %v`, p, ok)
			}
			if _, ok := s.Price("openai", "no-such-model"); ok {
				t.Error("unpriced model has a price")
			}
		})

		t.Run("counts", func(t *testing.T) {
			c := s.Counts()
			// Tokens: gw, expiring, admin, member, tenant admin, demoted,
			// playground. Users: admin, member, tenant admin, demoted.
			want := Counts{Tenants: 3, Gateways: 2, Tokens: 7, Users: 4, Prices: c.Prices}
			if diff := cmp.Diff(want, c); diff != "" || c.Prices == 0 {
				t.Errorf("Counts (-want +got):\n%s", diff)
			}
		})
	})
}

func TestTokenValidOnOtherTenant(t *testing.T) {
	acme := &Gateway{Gateway: store.Gateway{ID: "gw_a", TenantID: "acme"}}
	other := &Gateway{Gateway: store.Gateway{ID: "gw_o", TenantID: "other"}}
	tests := []struct {
		name        string
		tok         *Token
		acme, other bool
	}{
		{"gateway token", &Token{Kind: store.TokenGateway, GatewayID: "gw_a"}, true, false},
		{"administrator", &Token{Kind: store.TokenUser, User: &User{Role: auth.Administrator, TenantID: "platform"}}, true, true},
		{"tenant administrator", &Token{Kind: store.TokenUser, User: &User{Role: auth.TenantAdministrator, TenantID: "acme"}}, true, false},
		{"member assigned elsewhere", &Token{Kind: store.TokenUser, User: &User{Role: auth.Member, TenantID: "acme",
			Gateways: map[string]bool{"gw_o": true}}}, false, false},
		{"ai manager assigned", &Token{Kind: store.TokenUser, User: &User{Role: auth.AIManager, TenantID: "acme",
			Gateways: map[string]bool{"gw_a": true}}}, true, false},
		{"playground of unassigned member", &Token{Kind: store.TokenPlayground, GatewayID: "gw_a",
			User: &User{Role: auth.Member, TenantID: "acme", Gateways: map[string]bool{}}}, false, false},
		{"session kind", &Token{Kind: store.TokenSession, User: &User{Role: auth.Administrator}}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.tok.ValidOn(acme); got != tt.acme {
				t.Errorf("ValidOn(acme) = %v, want %v", got, tt.acme)
			}
			if got := tt.tok.ValidOn(other); got != tt.other {
				t.Errorf("ValidOn(other) = %v, want %v", got, tt.other)
			}
		})
	}
}

// BenchmarkHotPath measures what the proxy does per request: find the
// gateway, the token and the price. It must not allocate.
func BenchmarkHotPath(b *testing.B) {
	gwID, userID := "gw_1", "usr_1"
	secret := "sk-sl-benchmark"
	h := hashOf(secret)
	s := assemble(&rows{
		tenants:  []store.Tenant{{ID: "acme", Status: store.TenantActive}},
		gateways: []store.Gateway{{ID: gwID, TenantID: "acme", Slug: "prod"}},
		users:    []store.User{{ID: userID, TenantID: "acme", Role: auth.Member, Status: store.UserActive}},
		assigned: []store.UserGateway{{UserID: userID, GatewayID: gwID, TenantID: "acme"}},
		tokens: []store.Token{{ID: "tok_1", Kind: store.TokenUser, TenantID: "acme", UserID: &userID,
			Hash: hex.EncodeToString(h[:])}},
		prices: []store.ModelPrice{{Provider: "openai", Model: "gpt-4o"}},
	}, nil, time.Now(), NewCounters())
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		g, ok1 := s.Gateway("acme", "prod")
		tok, ok2 := s.Token(h)
		_, ok3 := s.Price("openai", "gpt-4o")
		if !ok1 || !ok2 || !ok3 || tok.Expired(now) || !tok.ValidOn(g) {
			b.Fatal("lookup failed")
		}
	}
}
