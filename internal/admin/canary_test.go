package admin

import (
	"context"
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/canary"
)

// TestMain runs the package's tests under the canary check: no log line
// of the run may hold a planted secret.
func TestMain(m *testing.M) { canary.Main(m) }

// TestCanaryAdmin plants a password, provider keys and tokens, drives the
// writes and failures most likely to echo them (wrong passwords, a
// password typed as the email, refused keys, a key whose base_url is
// refused, key rotation), and checks every error, every row of every
// table (audit rows included: a database dump) and, through the service's
// canary logger, every log line (checklist items 29, 30, 33).
func TestCanaryAdmin(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		password := canary.New("pw-")
		key := canary.New("sk-proj-")
		key2 := canary.New("sk-proj-")
		root := platformAdmin(t, s)
		g := mkGateway(t, s, root, "acme")
		u, err := s.CreateUser(ctx, root, "acme", UserInput{Email: "m@acme.test", Role: auth.Member, Password: password})
		if err != nil {
			t.Fatal(err)
		}
		var errs []error
		try := func(err error) { errs = append(errs, err) }

		_, err = s.CreateSession(ctx, "m@acme.test", password+"x", "10.0.0.1")
		try(err)
		_, err = s.CreateSession(ctx, password, password, "10.0.0.1")
		try(err)
		sess, err := s.CreateSession(ctx, "m@acme.test", password, "10.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		canary.Register(sess.Token)
		_, err = s.CreateKey(ctx, root, g.ID, KeyInput{Provider: "openai", Alias: "main", Key: key})
		try(err)
		_, err = s.CreateKey(ctx, root, g.ID, KeyInput{Provider: "openai", Alias: "main", Key: key2}) // duplicate alias
		try(err)
		_, err = s.CreateKey(ctx, root, g.ID, KeyInput{Provider: "openai-compatible", Alias: "meta", Key: key2,
			BaseURL: "http://169.254.169.254/"})
		try(err)
		_, err = s.CreateKey(ctx, root, g.ID, KeyInput{Provider: "openai", Alias: "ctl", Key: key2 + "\x00"})
		try(err)
		_, err = s.CreateKey(ctx, root, g.ID, KeyInput{Provider: "nope", Alias: "x", Key: key2})
		try(err)
		tok, err := s.CreateGatewayToken(ctx, root, g.ID, TokenInput{Name: "ci"})
		if err != nil {
			t.Fatal(err)
		}
		canary.Register(tok.Secret)
		ut, err := s.CreateUserToken(ctx, root, u.ID, TokenInput{Name: "laptop"})
		if err != nil {
			t.Fatal(err)
		}
		canary.Register(ut.Secret)
		_, err = s.Authenticate(ctx, tok.Secret+"x")
		try(err)
		_, err = s.Authenticate(ctx, key)
		try(err)

		failed := 0
		for i, err := range errs {
			if err == nil {
				continue
			}
			failed++
			canary.Check(t, fmt.Sprintf("error %d", i), err.Error())
		}
		if failed != len(errs)-1 { // all but the first key refused
			t.Errorf("%d of %d calls failed, want %d", failed, len(errs), len(errs)-1)
		}
		for _, table := range tables(t, s) {
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
					canary.Check(t, table+"."+col, text)
				}
			}
		}
	})
}

// tables lists the tables of the service's store.
func tables(t *testing.T, s *Service) []string {
	t.Helper()
	ctx := context.Background()
	var names []string
	q := "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
	if s.db.Dialect().Name().String() == "sqlite" {
		q = "SELECT name FROM sqlite_master WHERE type = 'table'"
	}
	if err := s.db.NewRaw(q).Scan(ctx, &names); err != nil {
		t.Fatalf("list tables: %v", err)
	}
	if len(names) < 5 {
		t.Fatalf("found tables %v, want the whole schema", names)
	}
	return names
}
