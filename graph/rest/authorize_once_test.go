package rest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/testenv"
)

// lookups counts the statements that read one gateway by id: the lookup
// behind the 404 of a path under /admin/v1/gateways/{id}.
type lookups struct{ n atomic.Int64 }

func (l *lookups) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (l *lookups) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	q := e.Query
	if strings.HasPrefix(q, "SELECT") && strings.Contains(q, `FROM "gateways"`) && strings.Contains(q, `WHERE ("id" = `) {
		l.n.Add(1)
	}
}

// TestRESTAuthorizesOnce holds item 5 of issue 13: a REST call is
// authorized once, by the domain function, not also by the shim. A call
// under a gateway looks the gateway up once when its input reads; a call
// whose input cannot be read is refused after that same one lookup (the
// contract's order: 404 before 400).
func TestRESTAuthorizesOnce(t *testing.T) {
	st := testenv.Store(t, testenv.SQLite)
	box, err := secret.NewBox(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := admin.New(admin.Config{Store: st, Box: box, AllowPrivateBaseURLs: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Bootstrap(context.Background(), testAdminToken); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewAdmin(svc, AdminOptions{}))
	t.Cleanup(srv.Close)
	s := &adminServer{t: t, url: srv.URL}
	s.ok(testAdminToken, "POST", "/admin/v1/tenants", map[string]any{"id": "acme"}, http.StatusCreated, nil)
	var gw struct{ ID string }
	s.ok(testAdminToken, "POST", "/admin/v1/tenants/acme/gateways", map[string]any{"slug": "prod"}, http.StatusCreated, &gw)

	var l lookups
	st.DB.AddQueryHook(&l)
	path := "/admin/v1/gateways/" + gw.ID
	tests := []struct {
		name, method, path string
		body               any
		status             int
	}{
		{"list keys", "GET", path + "/keys", nil, http.StatusOK},
		{"list tokens", "GET", path + "/tokens?limit=5", nil, http.StatusOK},
		{"create a rule with bad JSON", "POST", path + "/rules", `{"name":`, http.StatusBadRequest},
		{"list tokens with a bad limit", "GET", path + "/tokens?limit=-1", nil, http.StatusBadRequest},
		{"unknown gateway", "GET", "/admin/v1/gateways/gw_nope/keys", nil, http.StatusNotFound},
		{"unknown gateway, bad JSON", "POST", "/admin/v1/gateways/gw_nope/rules", `{"name":`, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l.n.Store(0)
			if got := s.do(testAdminToken, tt.method, tt.path, tt.body); got.status != tt.status {
				t.Fatalf("%s %s: status %d, want %d", tt.method, tt.path, got.status, tt.status)
			}
			if n := l.n.Load(); n != 1 {
				t.Errorf("%s %s looked the gateway up %d times, want 1", tt.method, tt.path, n)
			}
		})
	}
}
