package admin

import (
	"context"
	"testing"

	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/store"
)

func TestChangeMyPassword(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		const oldPW, newPW = "member password 1", "a brand new passphrase"
		u := member(t, s, "m@acme.test", oldPW)
		signIn := func(pw string) *auth.Principal {
			t.Helper()
			sess, err := s.CreateSession(ctx, u.Email, pw, "10.0.0.1")
			if err != nil {
				t.Fatalf("sign in: %v", err)
			}
			p, err := s.Authenticate(ctx, sess.Token)
			if err != nil {
				t.Fatal(err)
			}
			p.IP = "10.0.0.1"
			return p
		}
		here := signIn(oldPW)
		signIn(oldPW) // another session, which the change ends

		wantCode(t, s.ChangeMyPassword(ctx, here, PasswordChange{Current: "not my password", New: newPW}), 400, "invalid_request")
		wantCode(t, s.ChangeMyPassword(ctx, here, PasswordChange{Current: oldPW, New: "short"}), 400, "invalid_request")
		wantCode(t, s.ChangeMyPassword(ctx, here, PasswordChange{Current: oldPW, New: oldPW}), 400, "invalid_request")
		if err := s.ChangeMyPassword(ctx, here, PasswordChange{Current: oldPW, New: newPW}); err != nil {
			t.Fatal(err)
		}

		// The other session ended, this one survives; the old password no
		// longer signs in and the new one does.
		sessions, err := store.All[store.Token](ctx, s.db, "id", store.Eq("user_id", u.ID), store.Eq("kind", store.TokenSession))
		if err != nil {
			t.Fatal(err)
		}
		if len(sessions) != 1 || sessions[0].ID != here.TokenID {
			t.Fatalf("sessions after the change: %+v, want only %s", sessions, here.TokenID)
		}
		_, err = s.CreateSession(ctx, u.Email, oldPW, "10.0.0.2")
		wantCode(t, err, 401, "invalid_credentials")
		signIn(newPW)

		// One audit row of the change, one denied row of the wrong
		// password; the passwords appear nowhere.
		rows, err := store.All[store.AuditEntry](ctx, s.db, "ts", store.Eq("action", string(auth.OpMePasswordChange)))
		if err != nil {
			t.Fatal(err)
		}
		var ok, denied int
		for _, r := range rows {
			switch {
			case r.Outcome == "ok" && r.Changes["password"] == redacted && r.ResourceID == u.ID:
				ok++
			case r.Outcome == "denied" && r.Changes["reason"] == "wrong_password":
				denied++
			}
		}
		if ok != 1 || denied != 1 {
			t.Fatalf("audit rows %+v: want one ok with the password redacted and one denied", rows)
		}
		for _, pw := range []string{oldPW, newPW, "not my password"} {
			wantSecretNowhere(t, s, pw)
		}
	})
}

func TestChangeMyPasswordLimits(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		const pw = "member password 1"
		u := member(t, s, "m@acme.test", pw)
		p := &auth.Principal{UserID: u.ID, Email: u.Email, TenantID: "acme", Role: auth.Member, Kind: auth.CredUserToken, IP: "10.0.0.1"}
		// Guesses of the current password count on the sign-in limits.
		for range 10 {
			wantCode(t, s.ChangeMyPassword(ctx, p, PasswordChange{Current: "a wrong guess!", New: "a brand new passphrase"}), 400, "invalid_request")
		}
		wantCode(t, s.ChangeMyPassword(ctx, p, PasswordChange{Current: pw, New: "a brand new passphrase"}), 429, "rate_limit_exceeded")
		_, err := s.CreateSession(ctx, u.Email, pw, "10.0.0.1")
		wantCode(t, err, 429, "rate_limit_exceeded")

		// The shared Demo User changes no password.
		demo := &auth.Principal{UserID: "usr_demo", Email: "demo@acme.test", TenantID: "acme", Role: auth.DemoUser, IP: "10.0.0.3"}
		wantCode(t, s.ChangeMyPassword(ctx, demo, PasswordChange{Current: "x", New: "a brand new passphrase"}), 403, "forbidden")
	})
}
