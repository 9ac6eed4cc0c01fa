package admin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/store"
)

// tenantWithAdmin creates tenant id and a Tenant Administrator user of it,
// and returns that user's principal.
func tenantWithAdmin(t *testing.T, s *Service, admin *auth.Principal, id string) *auth.Principal {
	t.Helper()
	ctx := context.Background()
	if _, err := s.CreateTenant(ctx, admin, TenantInput{ID: id}); err != nil {
		t.Fatal(err)
	}
	u, err := s.CreateUser(ctx, admin, id, UserInput{Email: "ta@" + id + ".test", Role: auth.TenantAdministrator})
	if err != nil {
		t.Fatal(err)
	}
	return principalOf(u)
}

// principalOf is the principal of a user calling with a user token.
func principalOf(u *store.User) *auth.Principal {
	return &auth.Principal{UserID: u.ID, Email: u.Email, TenantID: u.TenantID, Role: u.Role, Kind: auth.CredUserToken}
}

func wantParam(t *testing.T, err error, status int, code, param string) {
	t.Helper()
	wantCode(t, err, status, code)
	if ae, _ := apierr.From(err); ae.Param != param {
		t.Fatalf("got param %q, want %q", ae.Param, param)
	}
}

func TestUserCRUD(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		if _, err := s.CreateTenant(ctx, admin, TenantInput{ID: "acme"}); err != nil {
			t.Fatal(err)
		}
		const pw = "correct horse battery"
		u, err := s.CreateUser(ctx, admin, "acme", UserInput{Email: "  Alice@Acme.Example ", Name: "Alice", Role: auth.Member, Password: pw})
		if err != nil {
			t.Fatal(err)
		}
		if u.Email != "alice@acme.example" || u.Status != store.UserActive || u.TenantID != "acme" || !strings.HasPrefix(u.ID, "usr_") {
			t.Fatalf("got %+v", u)
		}
		if !strings.HasPrefix(u.PasswordHash, "$argon2id$v=19$m=19456,t=2,p=1$") || !verifyPassword(u.PasswordHash, pw) {
			t.Fatalf("password hash %q is not argon2id of the password", u.PasswordHash)
		}
		if b, _ := json.Marshal(u); strings.Contains(string(b), "argon2") {
			t.Fatalf("user JSON exposes the password hash: %s", b)
		}

		for _, tc := range []struct {
			name   string
			in     UserInput
			status int
			code   string
			param  string
		}{
			{"bad email", UserInput{Email: "not-an-email", Role: auth.Member}, 400, "invalid_request", "email"},
			{"email with space", UserInput{Email: "a b@x.io", Role: auth.Member}, 400, "invalid_request", "email"},
			{"long email", UserInput{Email: strings.Repeat("a", 250) + "@x.io", Role: auth.Member}, 400, "invalid_request", "email"},
			{"no role", UserInput{Email: "bob@acme.example"}, 400, "invalid_request", "role"},
			{"bad role", UserInput{Email: "bob@acme.example", Role: "root"}, 400, "invalid_request", "role"},
			{"short password", UserInput{Email: "bob@acme.example", Role: auth.Member, Password: "short"}, 400, "invalid_request", "password"},
			{"long password", UserInput{Email: "bob@acme.example", Role: auth.Member, Password: strings.Repeat("p", 257)}, 400, "invalid_request", "password"},
			{"duplicate email", UserInput{Email: "ALICE@acme.example", Role: auth.Viewer}, 409, "conflict", "email"},
			{"bad budget", UserInput{Email: "bob@acme.example", Role: auth.Member, Budget: &store.Budget{Period: "hourly", AmountUSD: 1}}, 400, "invalid_request", "budget.period"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := s.CreateUser(ctx, admin, "acme", tc.in)
				wantParam(t, err, tc.status, tc.code, tc.param)
			})
		}
		if _, err := s.CreateUser(ctx, admin, "platform", UserInput{Email: "admin@localhost", Role: auth.Administrator}); err != nil {
			t.Fatalf("admin@localhost: %v", err)
		}
		_, err = s.CreateUser(ctx, admin, "nope", UserInput{Email: "x@y.z", Role: auth.Member})
		wantCode(t, err, 404, "not_found")

		got, err := s.GetUser(ctx, admin, u.ID)
		if err != nil || got.Email != u.Email {
			t.Fatalf("get: %v %+v", err, got)
		}
		l, err := s.ListUsers(ctx, admin, "acme", Page{})
		if err != nil || len(l.Data) != 1 || l.Data[0].ID != u.ID {
			t.Fatalf("list: %v %+v", err, l)
		}

		name, disabled := "Alice A.", store.UserDisabled
		rpm := 60
		got, err = s.UpdateUser(ctx, admin, u.ID, UserPatch{Name: &name, Status: &disabled, RateLimit: &store.RateLimit{RequestsPerMinute: &rpm}})
		if err != nil || got.Name != name || got.Status != disabled || *got.RateLimit.RequestsPerMinute != 60 {
			t.Fatalf("update: %v %+v", err, got)
		}
		bad := "gone"
		_, err = s.UpdateUser(ctx, admin, u.ID, UserPatch{Status: &bad})
		wantParam(t, err, 400, "invalid_request", "status")
		newPW := "another long password"
		if _, err := s.UpdateUser(ctx, admin, u.ID, UserPatch{Password: &newPW}); err != nil {
			t.Fatal(err)
		}
		short := "tiny"
		_, err = s.UpdateUser(ctx, admin, u.ID, UserPatch{Password: &short})
		wantParam(t, err, 400, "invalid_request", "password")
		dup := "admin@localhost"
		_, err = s.UpdateUser(ctx, admin, u.ID, UserPatch{Email: &dup})
		wantParam(t, err, 409, "conflict", "email")

		// Nobody deletes themselves.
		self, err := s.CreateUser(ctx, admin, "platform", UserInput{Email: "root@platform.test", Role: auth.Administrator})
		if err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.DeleteUser(ctx, principalOf(self), self.ID), 400, "invalid_request")

		if err := s.DeleteUser(ctx, admin, u.ID); err != nil {
			t.Fatal(err)
		}
		_, err = s.GetUser(ctx, admin, u.ID)
		wantCode(t, err, 404, "not_found")
		wantCode(t, s.DeleteUser(ctx, admin, u.ID), 404, "not_found")

		// The audit log never holds a password or its hash.
		audit, err := store.All[store.AuditEntry](ctx, s.db, "id")
		if err != nil {
			t.Fatal(err)
		}
		redactions := 0
		for _, a := range audit {
			b, _ := json.Marshal(a.Changes)
			if strings.Contains(string(b), pw) || strings.Contains(string(b), newPW) || strings.Contains(string(b), "argon2") {
				t.Fatalf("audit row %s holds a password: %s", a.Action, b)
			}
			if a.Changes["password"] == redacted {
				redactions++
			}
		}
		if redactions != 2 {
			t.Fatalf("got %d redacted password changes, want 2", redactions)
		}
	})
}

func TestUserEscalation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		ta := tenantWithAdmin(t, s, admin, "acme")

		_, err := s.CreateUser(ctx, ta, "acme", UserInput{Email: "boss@acme.test", Role: auth.Administrator})
		wantCode(t, err, 403, "forbidden")
		m, err := s.CreateUser(ctx, ta, "acme", UserInput{Email: "m@acme.test", Role: auth.Member})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateUser(ctx, ta, "acme", UserInput{Email: "ta2@acme.test", Role: auth.TenantAdministrator}); err != nil {
			t.Fatalf("a Tenant Administrator may grant its own role: %v", err)
		}
		up := auth.Administrator
		_, err = s.UpdateUser(ctx, ta, m.ID, UserPatch{Role: &up})
		wantCode(t, err, 403, "forbidden")
		aim := auth.AIManager
		if got, err := s.UpdateUser(ctx, ta, m.ID, UserPatch{Role: &aim}); err != nil || got.Role != aim {
			t.Fatalf("promote to ai_manager: %v %+v", err, got)
		}

		// Nobody changes their own role, not even the Administrator.
		down := auth.Member
		_, err = s.UpdateUser(ctx, ta, ta.UserID, UserPatch{Role: &down})
		wantCode(t, err, 403, "forbidden")
		root, err := s.CreateUser(ctx, admin, "platform", UserInput{Email: "root@platform.test", Role: auth.Administrator})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.UpdateUser(ctx, principalOf(root), root.ID, UserPatch{Role: &down})
		wantCode(t, err, 403, "forbidden")
		same := auth.TenantAdministrator
		if _, err := s.UpdateUser(ctx, ta, ta.UserID, UserPatch{Role: &same}); err != nil {
			t.Fatalf("restating one's own role is no change: %v", err)
		}

		// An Administrator user inside the tenant is out of a Tenant Administrator's reach.
		boss, err := s.CreateUser(ctx, admin, "acme", UserInput{Email: "boss@acme.test", Role: auth.Administrator})
		if err != nil {
			t.Fatal(err)
		}
		name := "renamed"
		_, err = s.UpdateUser(ctx, ta, boss.ID, UserPatch{Name: &name})
		wantCode(t, err, 403, "forbidden")
		pw := "a new password for the boss"
		_, err = s.UpdateUser(ctx, ta, boss.ID, UserPatch{Password: &pw})
		wantCode(t, err, 403, "forbidden")
		wantCode(t, s.DeleteUser(ctx, ta, boss.ID), 403, "forbidden")
		wantCode(t, s.DeleteUserBudget(ctx, ta, boss.ID), 403, "forbidden")
		_, err = s.CreateUserToken(ctx, ta, boss.ID, TokenInput{Name: "steal"})
		wantCode(t, err, 403, "forbidden")
		if _, err := s.GetUser(ctx, ta, boss.ID); err != nil {
			t.Fatalf("reading is not changing: %v", err)
		}

		// Roles without "Manage tenant users" are refused outright.
		for _, r := range []auth.Role{auth.AIManager, auth.Finance, auth.Member, auth.Viewer, auth.DemoUser} {
			p := &auth.Principal{UserID: "usr_x", Role: r, TenantID: "acme"}
			_, err := s.ListUsers(ctx, p, "acme", Page{})
			wantCode(t, err, 403, "forbidden")
			_, err = s.CreateUser(ctx, p, "acme", UserInput{Email: "z@acme.test", Role: auth.DemoUser})
			wantCode(t, err, 403, "forbidden")
		}
	})
}

func TestUserCrossTenant(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		ta := tenantWithAdmin(t, s, admin, "acme")
		tenantWithAdmin(t, s, admin, "beta")
		other, err := s.CreateUser(ctx, admin, "beta", UserInput{Email: "o@beta.test", Role: auth.Member})
		if err != nil {
			t.Fatal(err)
		}
		mine, err := s.CreateUser(ctx, ta, "acme", UserInput{Email: "m@acme.test", Role: auth.Member})
		if err != nil {
			t.Fatal(err)
		}
		betaGW, err := s.CreateGateway(ctx, admin, "beta", GatewayInput{Slug: "prod"})
		if err != nil {
			t.Fatal(err)
		}
		acmeGW, err := s.CreateGateway(ctx, admin, "acme", GatewayInput{Slug: "prod"})
		if err != nil {
			t.Fatal(err)
		}
		betaTok, err := s.CreateGatewayToken(ctx, admin, betaGW.ID, TokenInput{Name: "b"})
		if err != nil {
			t.Fatal(err)
		}
		name := "x"

		_, err = s.ListUsers(ctx, ta, "beta", Page{})
		wantCode(t, err, 404, "not_found")
		_, err = s.CreateUser(ctx, ta, "beta", UserInput{Email: "n@beta.test", Role: auth.Member})
		wantCode(t, err, 404, "not_found")
		_, err = s.GetUser(ctx, ta, other.ID)
		wantCode(t, err, 404, "not_found")
		_, err = s.UpdateUser(ctx, ta, other.ID, UserPatch{Name: &name})
		wantCode(t, err, 404, "not_found")
		wantCode(t, s.DeleteUser(ctx, ta, other.ID), 404, "not_found")
		wantCode(t, s.DeleteUserBudget(ctx, ta, other.ID), 404, "not_found")
		_, err = s.ListUserTokens(ctx, ta, other.ID, Page{})
		wantCode(t, err, 404, "not_found")
		_, err = s.CreateUserToken(ctx, ta, other.ID, TokenInput{})
		wantCode(t, err, 404, "not_found")
		_, err = s.ListUserGateways(ctx, ta, other.ID)
		wantCode(t, err, 404, "not_found")
		wantCode(t, s.AssignGateway(ctx, ta, other.ID, acmeGW.ID), 404, "not_found")
		wantCode(t, s.AssignGateway(ctx, ta, mine.ID, betaGW.ID), 404, "not_found")
		wantCode(t, s.UnassignGateway(ctx, ta, mine.ID, betaGW.ID), 404, "not_found")
		// Even the Administrator cannot assign a gateway of another tenant.
		wantCode(t, s.AssignGateway(ctx, admin, mine.ID, betaGW.ID), 404, "not_found")

		_, err = s.ListGatewayTokens(ctx, ta, betaGW.ID, Page{})
		wantCode(t, err, 404, "not_found")
		_, err = s.CreateGatewayToken(ctx, ta, betaGW.ID, TokenInput{})
		wantCode(t, err, 404, "not_found")
		_, err = s.UpdateGatewayToken(ctx, ta, betaGW.ID, betaTok.ID, TokenPatch{Name: &name})
		wantCode(t, err, 404, "not_found")
		wantCode(t, s.DeleteGatewayToken(ctx, ta, betaGW.ID, betaTok.ID), 404, "not_found")
		// A token of another gateway, through a gateway the caller sees.
		_, err = s.UpdateGatewayToken(ctx, ta, acmeGW.ID, betaTok.ID, TokenPatch{Name: &name})
		wantCode(t, err, 404, "not_found")
		wantCode(t, s.DeleteGatewayToken(ctx, admin, acmeGW.ID, betaTok.ID), 404, "not_found")
	})
}

func TestGatewayAssignments(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		ta := tenantWithAdmin(t, s, admin, "acme")
		u, err := s.CreateUser(ctx, ta, "acme", UserInput{Email: "m@acme.test", Role: auth.Member})
		if err != nil {
			t.Fatal(err)
		}
		g, err := s.CreateGateway(ctx, ta, "acme", GatewayInput{Slug: "prod"})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // idempotent
			if err := s.AssignGateway(ctx, ta, u.ID, g.ID); err != nil {
				t.Fatal(err)
			}
		}
		wantCode(t, s.AssignGateway(ctx, ta, u.ID, "gw_missing"), 404, "not_found")
		l, err := s.ListUserGateways(ctx, ta, u.ID)
		if err != nil || len(l.Data) != 1 || l.Data[0].ID != g.ID {
			t.Fatalf("list: %v %+v", err, l)
		}
		if err := s.UnassignGateway(ctx, ta, u.ID, g.ID); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.UnassignGateway(ctx, ta, u.ID, g.ID), 404, "not_found")
		l, err = s.ListUserGateways(ctx, ta, u.ID)
		if err != nil || len(l.Data) != 0 {
			t.Fatalf("list after unassign: %v %+v", err, l)
		}

		// Deleting the user removes its assignments and tokens.
		if err := s.AssignGateway(ctx, ta, u.ID, g.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateUserToken(ctx, ta, u.ID, TokenInput{Name: "t"}); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteUser(ctx, ta, u.ID); err != nil {
			t.Fatal(err)
		}
		if n, err := store.Count[store.UserGateway](ctx, s.db, store.Eq("user_id", u.ID)); err != nil || n != 0 {
			t.Fatalf("assignments left: %d %v", n, err)
		}
		if n, err := store.Count[store.Token](ctx, s.db, store.Eq("user_id", u.ID)); err != nil || n != 0 {
			t.Fatalf("tokens left: %d %v", n, err)
		}
	})
}
