package admin

import (
	"context"
	"testing"

	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/canary"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
)

// testService returns a service on a fresh store of backend b.
func testService(t *testing.T, b testenv.Backend) *Service {
	t.Helper()
	st := testenv.Store(t, b)
	box, err := secret.NewBox(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: st, Box: box, AllowPrivateBaseURLs: true, Logger: canary.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// forEachBackend runs fn as a subtest on SQLite and on PostgreSQL.
func forEachBackend(t *testing.T, fn func(t *testing.T, s *Service)) {
	for _, b := range testenv.Backends {
		t.Run(string(b), func(t *testing.T) { fn(t, testService(t, b)) })
	}
}

// platformAdmin is an Administrator principal of tenant "platform", which
// the helper creates.
func platformAdmin(t *testing.T, s *Service) *auth.Principal {
	t.Helper()
	ctx := context.Background()
	now := s.now()
	err := store.Insert(ctx, s.db, &store.Tenant{ID: "platform", Name: "Platform", Status: store.TenantActive,
		Settings: DefaultTenantSettings(), CreatedAt: now, UpdatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	return &auth.Principal{UserID: "usr_root", Email: "root@test", Role: auth.Administrator, TenantID: "platform"}
}
