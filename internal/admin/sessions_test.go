package admin

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/ids"
	"github.com/sluicehq/sluice/internal/store"
)

func TestPasswordHash(t *testing.T) {
	h, err := hashPassword("a long enough password")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("got %q, want an argon2id PHC string", h)
	}
	if !verifyPassword(h, "a long enough password") || verifyPassword(h, "a long enough passwore") {
		t.Fatal("verify does not tell the right password from a wrong one")
	}
	h2, _ := hashPassword("a long enough password")
	if h == h2 {
		t.Fatal("two hashes of one password are equal: the salt is not random")
	}
	if _, ok := parsePHC(dummyHash); !ok {
		t.Fatal("dummyHash does not parse, so unknown emails would answer faster")
	}
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5", "$argon2id$v=19$m=999999999,t=2,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5"} {
		if verifyPassword(bad, "") {
			t.Fatalf("malformed hash %q verified", bad)
		}
	}
}

// member creates tenant acme and a member with a password.
func member(t *testing.T, s *Service, email, password string) *store.User {
	t.Helper()
	ctx := context.Background()
	admin := platformAdmin(t, s)
	if _, err := s.CreateTenant(ctx, admin, TenantInput{ID: "acme"}); err != nil {
		t.Fatal(err)
	}
	u, err := s.CreateUser(ctx, admin, "acme", UserInput{Email: email, Role: auth.Member, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestSessions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		const pw = "member password 1"
		u := member(t, s, "m@acme.test", pw)
		admin := &auth.Principal{UserID: "usr_root", Email: "root@test", Role: auth.Administrator, TenantID: "platform"}

		sess, err := s.CreateSession(ctx, " M@Acme.Test ", pw, "10.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		ttl := sess.ExpiresAt.Sub(s.now())
		if !secretRE.MatchString(sess.Token) || sess.User == nil || sess.User.ID != u.ID || ttl > 12*time.Hour || ttl < 11*time.Hour {
			t.Fatalf("got %+v", sess)
		}
		p, err := s.Authenticate(ctx, sess.Token)
		if err != nil {
			t.Fatal(err)
		}
		if p.Kind != auth.CredSession || p.UserID != u.ID || p.Role != auth.Member || p.TenantID != "acme" || p.Email != u.Email {
			t.Fatalf("got principal %+v", p)
		}
		wantSecretNowhere(t, s, sess.Token)
		got, err := s.GetUser(ctx, admin, u.ID)
		if err != nil || got.LastSeenAt == nil {
			t.Fatalf("last_seen_at not set: %v %+v", err, got)
		}

		// Every failure answers the same.
		wrong := func(email, password string) *apierr.Error {
			t.Helper()
			_, err := s.CreateSession(ctx, email, password, "10.0.0.2")
			wantCode(t, err, 401, "invalid_credentials")
			ae, _ := apierr.From(err)
			return ae
		}
		base := wrong("m@acme.test", "wrong password!!")
		if ae := wrong("nobody@acme.test", pw); *ae != *base {
			t.Fatalf("unknown email answers %+v, wrong password %+v", ae, base)
		}
		nopw, err := s.CreateUser(ctx, admin, "acme", UserInput{Email: "nopw@acme.test", Role: auth.Viewer})
		if err != nil {
			t.Fatal(err)
		}
		if ae := wrong(nopw.Email, ""); *ae != *base {
			t.Fatalf("user without password answers %+v", ae)
		}

		// Finance, Viewer and Demo users sign in with sessions.
		fin, err := s.CreateUser(ctx, admin, "acme", UserInput{Email: "fin@acme.test", Role: auth.Finance, Password: "finance password"})
		if err != nil {
			t.Fatal(err)
		}
		fs, err := s.CreateSession(ctx, fin.Email, "finance password", "10.0.0.3")
		if err != nil {
			t.Fatal(err)
		}
		if fp, err := s.Authenticate(ctx, fs.Token); err != nil || fp.Role != auth.Finance {
			t.Fatalf("finance session: %v %+v", err, fp)
		}

		// Signing out deletes the session; an API token cannot sign out.
		wantCode(t, s.DeleteSession(ctx, &auth.Principal{UserID: u.ID, Role: auth.Member, TenantID: "acme", Kind: auth.CredUserToken}), 400, "invalid_request")
		if err := s.DeleteSession(ctx, p); err != nil {
			t.Fatal(err)
		}
		_, err = s.Authenticate(ctx, sess.Token)
		wantCode(t, err, 401, "invalid_token")

		// Disabled users and users of a suspended tenant cannot sign in.
		disabled := store.UserDisabled
		if _, err := s.UpdateUser(ctx, admin, fin.ID, UserPatch{Status: &disabled}); err != nil {
			t.Fatal(err)
		}
		if ae := wrong(fin.Email, "finance password"); *ae != *base {
			t.Fatalf("disabled user answers %+v", ae)
		}
		_, err = s.Authenticate(ctx, fs.Token)
		wantCode(t, err, 401, "invalid_token") // disabling deleted the session
		suspended := store.TenantSuspended
		if _, err := s.UpdateTenant(ctx, admin, "acme", TenantPatch{Status: &suspended}); err != nil {
			t.Fatal(err)
		}
		if ae := wrong("m@acme.test", pw); *ae != *base {
			t.Fatalf("suspended tenant answers %+v", ae)
		}
	})
}

func TestSessionRateLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		const pw = "member password 1"
		member(t, s, "m@acme.test", pw)
		for i := range 10 {
			_, err := s.CreateSession(ctx, "m@acme.test", "wrong password "+string(rune('a'+i)), "10.0.0.1")
			wantCode(t, err, 401, "invalid_credentials")
		}
		_, err := s.CreateSession(ctx, "M@acme.test", pw, "10.0.0.1")
		wantCode(t, err, 429, "rate_limit_exceeded")
		if _, err := s.CreateSession(ctx, "m@acme.test", pw, "10.0.0.9"); err != nil {
			t.Fatalf("another address is limited separately: %v", err)
		}
	})
}

func TestPasswordChangeRevokesSessions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		const pw = "member password 1"
		u := member(t, s, "m@acme.test", pw)
		admin := &auth.Principal{UserID: "usr_root", Email: "root@test", Role: auth.Administrator, TenantID: "platform"}
		sess, err := s.CreateSession(ctx, u.Email, pw, "10.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		tok, err := s.CreateUserToken(ctx, admin, u.ID, TokenInput{Name: "api"})
		if err != nil {
			t.Fatal(err)
		}
		newPW := "a brand new password"
		if _, err := s.UpdateUser(ctx, admin, u.ID, UserPatch{Password: &newPW}); err != nil {
			t.Fatal(err)
		}
		_, err = s.Authenticate(ctx, sess.Token)
		wantCode(t, err, 401, "invalid_token")
		if _, err := s.Authenticate(ctx, tok.Secret); err != nil {
			t.Fatalf("API tokens survive a password change: %v", err)
		}
		_, err = s.CreateSession(ctx, u.Email, pw, "10.0.0.1")
		wantCode(t, err, 401, "invalid_credentials")
		sess, err = s.CreateSession(ctx, u.Email, newPW, "10.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		// A role change signs the user out too.
		aim := auth.AIManager
		if _, err := s.UpdateUser(ctx, admin, u.ID, UserPatch{Role: &aim}); err != nil {
			t.Fatal(err)
		}
		_, err = s.Authenticate(ctx, sess.Token)
		wantCode(t, err, 401, "invalid_token")
	})
}

func TestAuthenticate(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		ta := tenantWithAdmin(t, s, admin, "acme")
		u, err := s.CreateUser(ctx, ta, "acme", UserInput{Email: "m@acme.test", Role: auth.Member})
		if err != nil {
			t.Fatal(err)
		}
		root, err := s.CreateUser(ctx, admin, "acme", UserInput{Email: "root@acme.test", Role: auth.Administrator})
		if err != nil {
			t.Fatal(err)
		}
		g, err := s.CreateGateway(ctx, ta, "acme", GatewayInput{Slug: "prod"})
		if err != nil {
			t.Fatal(err)
		}
		exp := s.now().Add(time.Hour)
		ut, err := s.CreateUserToken(ctx, ta, u.ID, TokenInput{Name: "api", ExpiresAt: &exp})
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Authenticate(ctx, ut.Secret)
		if err != nil {
			t.Fatal(err)
		}
		if p.Kind != auth.CredUserToken || p.UserID != u.ID || p.TokenID != ut.ID || p.Role != auth.Member {
			t.Fatalf("got %+v", p)
		}
		used, err := store.Get[store.Token](ctx, s.db, store.Eq("id", ut.ID))
		if err != nil || used.LastUsedAt == nil {
			t.Fatalf("last_used_at not recorded: %v %+v", err, used)
		}

		gt, err := s.CreateGatewayToken(ctx, ta, g.ID, TokenInput{Name: "gw"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Authenticate(ctx, gt.Secret)
		wantCode(t, err, 401, "invalid_token")

		for _, bad := range []string{
			"' OR '1'='1", "sk-sl-' OR 1=1; --", `"; DROP TABLE tokens; --`, "sk-sl-\x00abc", "sk-sl-ab cd",
			"sk-sl-é", strings.Repeat("a", 513), "sk-sl-" + strings.Repeat("A", 40), ut.Secret + "x", strings.ToUpper(ut.Secret),
		} {
			_, err := s.Authenticate(ctx, bad)
			wantCode(t, err, 401, "invalid_token")
			if ae, _ := apierr.From(err); strings.Contains(ae.Message, bad) {
				t.Fatalf("error message %q repeats the secret", ae.Message)
			}
		}
		_, err = s.Authenticate(ctx, "")
		wantCode(t, err, 401, "missing_token")

		// Playground tokens are inference-only.
		now := s.now()
		pt, psecret := newToken(store.TokenPlayground, "acme", &g.ID, &u.ID, "playground", now)
		if err := store.Insert(ctx, s.db, pt); err != nil {
			t.Fatal(err)
		}
		_, err = s.Authenticate(ctx, psecret)
		wantCode(t, err, 401, "invalid_token")

		// Expired.
		clock := s.cfg.Now
		s.cfg.Now = func() time.Time { return clock().Add(2 * time.Hour) }
		_, err = s.Authenticate(ctx, ut.Secret)
		wantCode(t, err, 401, "token_expired")
		s.cfg.Now = clock

		// Disabled user; then the tenant suspended, which only the Administrator survives.
		rt, err := s.CreateUserToken(ctx, admin, root.ID, TokenInput{Name: "root"})
		if err != nil {
			t.Fatal(err)
		}
		mt, err := s.CreateUserToken(ctx, ta, u.ID, TokenInput{Name: "api-2"})
		if err != nil {
			t.Fatal(err)
		}
		suspended := store.TenantSuspended
		if _, err := s.UpdateTenant(ctx, admin, "acme", TenantPatch{Status: &suspended}); err != nil {
			t.Fatal(err)
		}
		_, err = s.Authenticate(ctx, mt.Secret)
		wantCode(t, err, 401, "invalid_token")
		if rp, err := s.Authenticate(ctx, rt.Secret); err != nil || rp.Role != auth.Administrator {
			t.Fatalf("administrator of a suspended tenant: %v %+v", err, rp)
		}
		active := store.TenantActive
		if _, err := s.UpdateTenant(ctx, admin, "acme", TenantPatch{Status: &active}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate(ctx, mt.Secret); err != nil {
			t.Fatal(err)
		}
		disabled := store.UserDisabled
		if _, err := s.UpdateUser(ctx, ta, u.ID, UserPatch{Status: &disabled}); err != nil {
			t.Fatal(err)
		}
		_, err = s.Authenticate(ctx, mt.Secret)
		wantCode(t, err, 401, "invalid_token")
		enabled := store.UserActive
		if _, err := s.UpdateUser(ctx, ta, u.ID, UserPatch{Status: &enabled}); err != nil {
			t.Fatal(err)
		}

		// Revoked.
		yes := true
		if err := store.Update(ctx, s.db, &store.Token{ID: mt.ID, Revoked: yes}, "revoked"); err != nil {
			t.Fatal(err)
		}
		_, err = s.Authenticate(ctx, mt.Secret)
		wantCode(t, err, 401, "invalid_token")
	})
}

func TestBootstrap(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		if _, _, err := s.Bootstrap(ctx, "short"); err == nil {
			t.Fatal("a short SLUICE_ADMIN_TOKEN was accepted")
		}
		if _, _, err := s.Bootstrap(ctx, "has a space in it ok"); err == nil {
			t.Fatal("a SLUICE_ADMIN_TOKEN with spaces was accepted")
		}
		const given = "my-admin-token-1234567890"
		secret, created, err := s.Bootstrap(ctx, given)
		if err != nil || !created || secret != given {
			t.Fatalf("got %q %v %v", secret, created, err)
		}
		secret, created, err = s.Bootstrap(ctx, given)
		if err != nil || created || secret != "" {
			t.Fatalf("second bootstrap: %q %v %v", secret, created, err)
		}
		p, err := s.Authenticate(ctx, given)
		if err != nil {
			t.Fatal(err)
		}
		if p.Role != auth.Administrator || p.Email != "admin@localhost" || p.TenantID != "platform" || p.Kind != auth.CredUserToken {
			t.Fatalf("got %+v", p)
		}
		tn, err := s.GetTenant(ctx, p, "platform")
		if err != nil || tn.Name != "Platform" || tn.Status != store.TenantActive {
			t.Fatalf("platform tenant: %v %+v", err, tn)
		}
		tok, err := store.Get[store.Token](ctx, s.db, store.Eq("id", p.TokenID))
		if err != nil || tok.Name != "bootstrap" || tok.Hash != ids.Hash(given) {
			t.Fatalf("bootstrap token: %v %+v", err, tok)
		}
		wantSecretNowhere(t, s, given)

		minted, err := s.MintUserToken(ctx, "Admin@Localhost", "recovery")
		if err != nil {
			t.Fatal(err)
		}
		if !secretRE.MatchString(minted) {
			t.Fatalf("minted %q", minted)
		}
		if mp, err := s.Authenticate(ctx, minted); err != nil || mp.UserID != p.UserID {
			t.Fatalf("minted token: %v %+v", err, mp)
		}
		_, err = s.MintUserToken(ctx, "nobody@localhost", "")
		wantCode(t, err, 404, "not_found")

		audit, err := store.All[store.AuditEntry](ctx, s.db, "id")
		if err != nil {
			t.Fatal(err)
		}
		var actors []string
		for _, a := range audit {
			actors = append(actors, a.ActorEmail+"/"+a.ActorRole+"/"+a.Action)
		}
		want := "bootstrap/administrator/bootstrap,cli/administrator/user_token.create"
		if strings.Join(actors, ",") != want {
			t.Fatalf("audit %v, want %s", actors, want)
		}
	})
}

func TestBootstrapGeneratesSecret(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		secret, created, err := s.Bootstrap(ctx, "")
		if err != nil || !created || !secretRE.MatchString(secret) {
			t.Fatalf("got %q %v %v", secret, created, err)
		}
		if p, err := s.Authenticate(ctx, secret); err != nil || p.Role != auth.Administrator {
			t.Fatalf("authenticate: %v %+v", err, p)
		}
	})
}
