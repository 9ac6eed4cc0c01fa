package admin

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/store"
)

// deniedRows returns the audit rows with outcome denied of actor.
func deniedRows(t *testing.T, s *Service, actor string) []store.AuditEntry {
	t.Helper()
	rows, err := store.All[store.AuditEntry](context.Background(), s.db, "id", store.Eq("actor_id", actor), store.Eq("outcome", "denied"))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// userWrite is one write on a user or on what it owns, as a call of the
// domain by caller p on user u (with its token tok and gateway gw).
type userWrite struct {
	op   auth.Op
	name string
	call func(ctx context.Context, s *Service, p *auth.Principal, u *store.User, tok, gw string) error
}

// userWrites lists every write on a user or what it owns: its tokens
// (rename, revoke, un-expire, re-scope, new limits, delete, mint), its
// budget, rate limit, password, role, status, email and name, its gateway
// assignments, and the user itself.
func userWrites() []userWrite {
	str := func(v string) *string { return &v }
	yes := true
	rpm := 1
	role := auth.Member
	disabled := store.UserDisabled
	return []userWrite{
		{auth.OpUserTokenUpdate, "rename token", func(ctx context.Context, s *Service, p *auth.Principal, u *store.User, tok, _ string) error {
			_, err := s.UpdateUserToken(ctx, p, u.ID, tok, TokenPatch{Name: str("stolen")})
			return err
		}},
		{auth.OpUserTokenUpdate, "revoke token", func(ctx context.Context, s *Service, p *auth.Principal, u *store.User, tok, _ string) error {
			_, err := s.UpdateUserToken(ctx, p, u.ID, tok, TokenPatch{Revoked: &yes})
			return err
		}},
		{auth.OpUserTokenUpdate, "un-expire token", func(ctx context.Context, s *Service, p *auth.Principal, u *store.User, tok, _ string) error {
			_, err := s.UpdateUserToken(ctx, p, u.ID, tok, TokenPatch{ExpiresAt: graphql.OmittableOf[*time.Time](nil)})
			return err
		}},
		{auth.OpUserTokenUpdate, "re-scope token", func(ctx context.Context, s *Service, p *auth.Principal, u *store.User, tok, _ string) error {
			_, err := s.UpdateUserToken(ctx, p, u.ID, tok, TokenPatch{AllowedModels: &[]string{"gpt-4o"}})
			return err
		}},
		{auth.OpUserTokenUpdate, "limit token", func(ctx context.Context, s *Service, p *auth.Principal, u *store.User, tok, _ string) error {
			_, err := s.UpdateUserToken(ctx, p, u.ID, tok, TokenPatch{RateLimit: &store.RateLimit{RequestsPerMinute: &rpm}})
			return err
		}},
		{auth.OpUserTokenDelete, "delete token", func(ctx context.Context, s *Service, p *auth.Principal, u *store.User, tok, _ string) error {
			return s.DeleteUserToken(ctx, p, u.ID, tok)
		}},
		{auth.OpUserTokenCreate, "mint token", func(ctx context.Context, s *Service, p *auth.Principal, u *store.User, _, _ string) error {
			_, err := s.CreateUserToken(ctx, p, u.ID, TokenInput{Name: "steal"})
			return err
		}},
		{auth.OpUserUpdate, "rename user", func(ctx context.Context, s *Service, p *auth.Principal, u *store.User, _, _ string) error {
			_, err := s.UpdateUser(ctx, p, u.ID, UserPatch{Name: str("renamed")})
			return err
		}},
		{auth.OpUserUpdate, "change email", func(ctx context.Context, s *Service, p *auth.Principal, u *store.User, _, _ string) error {
			_, err := s.UpdateUser(ctx, p, u.ID, UserPatch{Email: str("mine@acme.test")})
			return err
		}},
		{auth.OpUserUpdate, "set password", func(ctx context.Context, s *Service, p *auth.Principal, u *store.User, _, _ string) error {
			_, err := s.UpdateUser(ctx, p, u.ID, UserPatch{Password: str("a password I now know")})
			return err
		}},
		{auth.OpUserUpdate, "demote", func(ctx context.Context, s *Service, p *auth.Principal, u *store.User, _, _ string) error {
			_, err := s.UpdateUser(ctx, p, u.ID, UserPatch{Role: &role})
			return err
		}},
		{auth.OpUserUpdate, "disable", func(ctx context.Context, s *Service, p *auth.Principal, u *store.User, _, _ string) error {
			_, err := s.UpdateUser(ctx, p, u.ID, UserPatch{Status: &disabled})
			return err
		}},
		{auth.OpUserUpdate, "set budget", func(ctx context.Context, s *Service, p *auth.Principal, u *store.User, _, _ string) error {
			_, err := s.UpdateUser(ctx, p, u.ID, UserPatch{Budget: graphql.OmittableOf(&store.Budget{AmountUSD: 1, Period: "daily"})})
			return err
		}},
		{auth.OpUserUpdate, "set rate limit", func(ctx context.Context, s *Service, p *auth.Principal, u *store.User, _, _ string) error {
			_, err := s.UpdateUser(ctx, p, u.ID, UserPatch{RateLimit: &store.RateLimit{RequestsPerMinute: &rpm}})
			return err
		}},
		{auth.OpUserBudgetDelete, "delete budget", func(ctx context.Context, s *Service, p *auth.Principal, u *store.User, _, _ string) error {
			return s.DeleteUserBudget(ctx, p, u.ID)
		}},
		{auth.OpUserGatewayAssign, "assign gateway", func(ctx context.Context, s *Service, p *auth.Principal, u *store.User, _, gw string) error {
			return s.AssignGateway(ctx, p, u.ID, gw)
		}},
		{auth.OpUserGatewayUnassign, "unassign gateway", func(ctx context.Context, s *Service, p *auth.Principal, u *store.User, _, gw string) error {
			return s.UnassignGateway(ctx, p, u.ID, gw)
		}},
		{auth.OpUserDelete, "delete user", func(ctx context.Context, s *Service, p *auth.Principal, u *store.User, _, _ string) error {
			return s.DeleteUser(ctx, p, u.ID)
		}},
	}
}

// TestRankRuleOnEveryUserWrite checks defect 4 of issue 12 in the domain: a
// Tenant Administrator may change no Administrator of its tenant, nor
// anything the Administrator owns — its tokens above all — and every such
// write answers 403, changes nothing and leaves a denied audit row.
func TestRankRuleOnEveryUserWrite(t *testing.T) {
	writes := userWrites()
	t.Run("every user write op is covered", func(t *testing.T) {
		// A new write op on a user (user.*, user_token.*, user_gateway.*)
		// must get a row above. user.create makes a new user and is held
		// to the grant rule instead.
		var want []auth.Op
		for _, op := range auth.Ops() {
			s := string(op)
			if op.Writes() && op != auth.OpUserCreate &&
				(strings.HasPrefix(s, "user.") || strings.HasPrefix(s, "user_token.") || strings.HasPrefix(s, "user_gateway.")) {
				want = append(want, op)
			}
		}
		var got []auth.Op
		for _, w := range writes {
			got = append(got, w.op)
		}
		slices.Sort(want)
		slices.Sort(got)
		if diff := cmp.Diff(want, slices.Compact(got)); diff != "" {
			t.Fatalf("user write ops without a case (-want +got):\n%s", diff)
		}
	})
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		ta := tenantWithAdmin(t, s, admin, "acme")
		g, err := s.CreateGateway(ctx, admin, "acme", GatewayInput{Slug: "prod"})
		if err != nil {
			t.Fatal(err)
		}
		g2, err := s.CreateGateway(ctx, admin, "acme", GatewayInput{Slug: "other"})
		if err != nil {
			t.Fatal(err)
		}
		boss, err := s.CreateUser(ctx, admin, "acme", UserInput{Email: "boss@acme.test", Role: auth.Administrator,
			Budget: &store.Budget{AmountUSD: 5, Period: "monthly"}})
		if err != nil {
			t.Fatal(err)
		}
		exp := s.now().Add(time.Hour)
		tok, err := s.CreateUserToken(ctx, admin, boss.ID, TokenInput{Name: "boss", ExpiresAt: &exp, AllowedModels: []string{"gpt-4o-mini"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AssignGateway(ctx, admin, boss.ID, g.ID); err != nil {
			t.Fatal(err)
		}

		for _, w := range writes {
			t.Run(w.name, func(t *testing.T) {
				gw := g2.ID
				if w.op == auth.OpUserGatewayUnassign {
					gw = g.ID
				}
				n := len(deniedRows(t, s, ta.UserID))
				before := snapshotUser(t, s, boss.ID)
				err := w.call(ctx, s, ta, boss, tok.ID, gw)
				wantCode(t, err, 403, "forbidden")
				if diff := cmp.Diff(before, snapshotUser(t, s, boss.ID)); diff != "" {
					t.Fatalf("the refused write changed the user or what it owns (-before +after):\n%s", diff)
				}
				rows := deniedRows(t, s, ta.UserID)
				if len(rows) != n+1 {
					t.Fatalf("got %d denied audit rows, want %d", len(rows), n+1)
				}
				if last := rows[len(rows)-1]; last.Action != string(w.op) || last.ResourceID != boss.ID {
					t.Fatalf("denied row %s on %s, want %s on %s", last.Action, last.ResourceID, w.op, boss.ID)
				}
				// The transports' pre-check applies the same rule.
				wantCode(t, s.Authorize(ctx, ta, w.op, Ref{Kind: "user", ID: boss.ID}), 403, "forbidden")
			})
			s.denials = newWindowLimiter(maxDeniedPerMinute, time.Minute, defaultMaxKeys) // keep counting every row
		}

		// Reading is not changing.
		if _, err := s.GetUser(ctx, ta, boss.ID); err != nil {
			t.Fatalf("read the administrator: %v", err)
		}
		if _, err := s.ListUserTokens(ctx, ta, boss.ID, Page{}); err != nil {
			t.Fatalf("list its tokens: %v", err)
		}
		// The Administrator may do all of it.
		for _, w := range writes {
			gw := g2.ID
			if w.op == auth.OpUserGatewayUnassign {
				gw = g.ID
			}
			if err := w.call(ctx, s, admin, boss, tok.ID, gw); err != nil && w.op != auth.OpUserTokenUpdate {
				t.Fatalf("%s as the Administrator: %v", w.name, err)
			}
		}
	})
}

// userState is what a refused write must leave as it was.
type userState struct {
	User     store.User
	Tokens   []store.Token
	Gateways []string
}

func snapshotUser(t *testing.T, s *Service, id string) userState {
	t.Helper()
	ctx := context.Background()
	u, err := store.Get[store.User](ctx, s.db, store.Eq("id", id))
	if err != nil {
		t.Fatal(err)
	}
	toks, err := store.All[store.Token](ctx, s.db, "id", store.Eq("user_id", id), store.Eq("kind", store.TokenUser))
	if err != nil {
		t.Fatal(err)
	}
	as, err := store.All[store.UserGateway](ctx, s.db, "gateway_id", store.Eq("user_id", id))
	if err != nil {
		t.Fatal(err)
	}
	st := userState{User: *u, Tokens: toks}
	for _, a := range as {
		st.Gateways = append(st.Gateways, a.GatewayID)
	}
	return st
}

// TestDeniedAuditIsBounded checks defect 16b of issue 12: refused writes
// are audited at most maxDeniedPerMinute a minute per actor (before, every
// one added a row), and a lookup of another tenant's resource — which
// answers 404 and before left no trace — is audited as denied, within the
// same bound.
func TestDeniedAuditIsBounded(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		ta := tenantWithAdmin(t, s, admin, "acme")
		tenantWithAdmin(t, s, admin, "beta")
		betaGW, err := s.CreateGateway(ctx, admin, "beta", GatewayInput{Slug: "prod"})
		if err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
		s.cfg.Now = func() time.Time { return now }

		// One cross-tenant read, one cross-tenant write, one miss: a row each.
		_, err = s.GetGateway(ctx, ta, betaGW.ID)
		wantCode(t, err, 404, "not_found")
		name := "mine now"
		_, err = s.UpdateGateway(ctx, ta, betaGW.ID, GatewaySettings{Name: &name})
		wantCode(t, err, 404, "not_found")
		_, err = s.GetGateway(ctx, ta, "gw_nope")
		wantCode(t, err, 404, "not_found")
		rows := deniedRows(t, s, ta.UserID)
		var got []string
		for _, r := range rows {
			got = append(got, r.Action+" "+r.ResourceID+" "+r.Changes["reason"].(string))
		}
		want := []string{
			"gateway.lookup " + betaGW.ID + " other_tenant",
			"gateway.lookup " + betaGW.ID + " other_tenant",
			"gateway.lookup gw_nope not_found",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("denied rows (-want +got):\n%s", diff)
		}
		// The Administrator's misses are plain misses.
		_, err = s.GetGateway(ctx, admin, "gw_nope")
		wantCode(t, err, 404, "not_found")
		if n := len(deniedRows(t, s, admin.UserID)); n != 0 {
			t.Fatalf("the Administrator's miss left %d denied rows", n)
		}

		// A flood of refused writes (403) and probes (404) by one user.
		viewer := mkUser(t, s, "acme", auth.Viewer)
		for range 3 * maxDeniedPerMinute {
			_, err := s.CreateGateway(ctx, viewer, "acme", GatewayInput{Slug: "nope"})
			wantCode(t, err, 403, "forbidden")
			_, err = s.GetGateway(ctx, ta, betaGW.ID)
			wantCode(t, err, 404, "not_found")
		}
		if n := len(deniedRows(t, s, viewer.UserID)); n != maxDeniedPerMinute {
			t.Fatalf("a viewer's %d refused writes left %d rows, want %d", 3*maxDeniedPerMinute, n, maxDeniedPerMinute)
		}
		if n := len(deniedRows(t, s, ta.UserID)); n != maxDeniedPerMinute {
			t.Fatalf("%d cross-tenant probes left %d rows, want %d", 3*maxDeniedPerMinute, n, maxDeniedPerMinute)
		}
		// The bound is per minute.
		now = now.Add(time.Minute)
		_, err = s.CreateGateway(ctx, viewer, "acme", GatewayInput{Slug: "nope"})
		wantCode(t, err, 403, "forbidden")
		if n := len(deniedRows(t, s, viewer.UserID)); n != maxDeniedPerMinute+1 {
			t.Fatalf("a minute later: %d rows, want %d", n, maxDeniedPerMinute+1)
		}
	})
}

// TestEmailOfAnotherTenant checks defect 16a of issue 12: a Tenant
// Administrator adding or renaming a user to an email held in another
// tenant is not told so (before, the 409 named the email and thereby
// confirmed it): the answer is the one for any taken email, it is audited,
// and such writes are rate-limited.
func TestEmailOfAnotherTenant(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		ta := tenantWithAdmin(t, s, admin, "acme")
		tenantWithAdmin(t, s, admin, "beta")
		if _, err := s.CreateUser(ctx, admin, "beta", UserInput{Email: "secret.person@beta.test", Role: auth.Member}); err != nil {
			t.Fatal(err)
		}
		mine, err := s.CreateUser(ctx, ta, "acme", UserInput{Email: "m@acme.test", Role: auth.Member})
		if err != nil {
			t.Fatal(err)
		}

		_, errOther := s.CreateUser(ctx, ta, "acme", UserInput{Email: "Secret.Person@beta.test", Role: auth.Member})
		wantParam(t, errOther, 409, "conflict", "email")
		_, errOwn := s.CreateUser(ctx, ta, "acme", UserInput{Email: "m@acme.test", Role: auth.Member})
		wantParam(t, errOwn, 409, "conflict", "email")
		if errOther.Error() != errOwn.Error() {
			t.Fatalf("another tenant's email answers %q, the own tenant's %q: they tell the tenants apart", errOther, errOwn)
		}
		if strings.Contains(errOther.Error(), "secret.person") || strings.Contains(errOther.Error(), "beta") {
			t.Fatalf("the answer %q names the taken email", errOther)
		}
		other := "secret.person@beta.test"
		_, err = s.UpdateUser(ctx, ta, mine.ID, UserPatch{Email: &other})
		if err == nil || err.Error() != errOwn.Error() {
			t.Fatalf("email change to another tenant's email: %v, want %q", err, errOwn)
		}
		rows := deniedRows(t, s, ta.UserID)
		if len(rows) != 3 || rows[0].Action != "user.email_unavailable" {
			t.Fatalf("denied rows %+v, want 3 user.email_unavailable", rows)
		}
		// The Administrator is told which email.
		_, err = s.CreateUser(ctx, admin, "acme", UserInput{Email: other, Role: auth.Member})
		if err == nil || !strings.Contains(err.Error(), other) {
			t.Fatalf("the Administrator's answer %v does not name the email", err)
		}
		// Enumeration is slow: the writes that can meet a taken email are limited.
		limited := false
		for i := range maxEmailWritesPerMinute + 1 {
			_, err := s.CreateUser(ctx, ta, "acme", UserInput{Email: "probe" + string(rune('a'+i%26)) + "@beta.test", Role: auth.Member})
			if err != nil && strings.Contains(err.Error(), "too many user creations") {
				limited = true
				break
			}
		}
		if !limited {
			t.Fatalf("%d user creations in a minute were not limited", maxEmailWritesPerMinute+1)
		}
	})
}

// TestEscalationIsAudited checks security checklist item 22 in the domain:
// each attempt at a higher role — granting a role above one's own, on a
// new user or an existing one, changing one's own role, a Member or
// Viewer reaching for user management or tokens — answers 403, changes
// nothing and leaves a denied audit row.
func TestEscalationIsAudited(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		ta := tenantWithAdmin(t, s, admin, "acme")
		m, err := s.CreateUser(ctx, admin, "acme", UserInput{Email: "m@acme.test", Role: auth.Member})
		if err != nil {
			t.Fatal(err)
		}
		member := principalOf(m)
		viewer := mkUser(t, s, "acme", auth.Viewer)
		up := auth.Administrator
		for _, tc := range []struct {
			name   string
			p      *auth.Principal
			call   func() error
			reason string
		}{
			{"TA creates an Administrator", ta, func() error {
				_, err := s.CreateUser(ctx, ta, "acme", UserInput{Email: "boss@acme.test", Role: auth.Administrator})
				return err
			}, "grant"},
			{"TA promotes a member to Administrator", ta, func() error {
				_, err := s.UpdateUser(ctx, ta, m.ID, UserPatch{Role: &up})
				return err
			}, "grant"},
			{"TA changes its own role", ta, func() error {
				_, err := s.UpdateUser(ctx, ta, ta.UserID, UserPatch{Role: &up})
				return err
			}, "own_role"},
			{"member changes its own role", member, func() error {
				_, err := s.UpdateUser(ctx, member, m.ID, UserPatch{Role: &up})
				return err
			}, ""},
			{"viewer mints a token", viewer, func() error {
				_, err := s.CreateMyToken(ctx, viewer, TokenInput{Name: "x"})
				return err
			}, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				n := len(deniedRows(t, s, tc.p.UserID))
				wantCode(t, tc.call(), 403, "forbidden")
				rows := deniedRows(t, s, tc.p.UserID)
				if len(rows) != n+1 {
					t.Fatalf("%d denied rows, want %d", len(rows), n+1)
				}
				if got, _ := rows[len(rows)-1].Changes["reason"].(string); got != tc.reason {
					t.Fatalf("reason %q, want %q", got, tc.reason)
				}
			})
		}
		if u, err := s.GetUser(ctx, admin, m.ID); err != nil || u.Role != auth.Member {
			t.Fatalf("the member is now %v (%v)", u.Role, err)
		}
		if n, _ := store.Count[store.User](ctx, s.db, store.Eq("email", "boss@acme.test")); n != 0 {
			t.Fatal("the refused Administrator was created")
		}
	})
}
