package rest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/testenv"
)

// TestProviderKeyEndpointNeedsTheKey (checklist 31): a provider key's base
// URL, region or deployment cannot change without the key being entered
// again. PUT answers 405 (Allow: DELETE, PATCH); PATCH changes only the
// weight, the models and the disabled flag, and a base_url or options in
// it is refused as an unknown field; the key is unchanged, and the only
// way to another endpoint is a new key (POST, with the key, through the
// SSRF checks of base_url).
func TestProviderKeyEndpointNeedsTheKey(t *testing.T) {
	s := newAdminServer(t, testenv.SQLite)
	s.ok(testAdminToken, "POST", "/admin/v1/tenants", map[string]any{"id": "acme"}, 201, nil)
	var gw struct{ ID string }
	s.ok(testAdminToken, "POST", "/admin/v1/tenants/acme/gateways", map[string]any{"slug": "prod"}, 201, &gw)
	keys := "/admin/v1/gateways/" + gw.ID + "/keys"
	s.ok(testAdminToken, "POST", keys, map[string]any{"provider": "openai-compatible", "alias": "main",
		"key": "sk-test-1234567890abcdef", "base_url": "http://127.0.0.1:8000/v1"}, 201, nil)

	r := s.do(testAdminToken, "PUT", keys+"/openai-compatible/main", map[string]any{"base_url": "http://127.0.0.1:9999/v1"})
	if r.status != 405 || r.header.Get("Allow") != "DELETE, PATCH" || !strings.Contains(string(r.body), `"method_not_allowed"`) {
		t.Errorf("PUT a key: %d Allow %q %s, want 405 Allow DELETE, PATCH", r.status, r.header.Get("Allow"), r.body)
	}
	for _, field := range []string{"base_url", "options", "key"} {
		r := s.do(testAdminToken, "PATCH", keys+"/openai-compatible/main", map[string]any{field: "http://127.0.0.1:9999/v1"})
		if r.status != 400 || !strings.Contains(string(r.body), `"param":"`+field+`"`) {
			t.Errorf("PATCH %s of a key: %d %s, want 400 naming it", field, r.status, r.body)
		}
	}
	var list struct {
		Data []struct {
			BaseURL string `json:"base_url"`
			Key     *string
		} `json:"data"`
	}
	r = s.ok(testAdminToken, "GET", keys, nil, 200, &list)
	if len(list.Data) != 1 || list.Data[0].BaseURL != "http://127.0.0.1:8000/v1" || list.Data[0].Key != nil ||
		strings.Contains(string(r.body), "1234567890abcdef") {
		t.Errorf("keys after the refused updates: %s", r.body)
	}
	// A new endpoint is a new key, which needs the key (of a provider that
	// takes one: a self-hosted openai-compatible server may run without).
	r = s.do(testAdminToken, "POST", keys, map[string]any{"provider": "openai", "alias": "moved", "base_url": "http://127.0.0.1:9999/v1"})
	var e struct {
		Error struct{ Param string } `json:"error"`
	}
	if err := json.Unmarshal(r.body, &e); r.status != 400 || err != nil || e.Error.Param != "key" {
		t.Errorf("a key without the key: %d %s, want 400 naming key", r.status, r.body)
	}
}

// TestGatewayFiguresREST: ?gateway= limits stats, timeseries and analytics
// to one gateway; a gateway of another tenant than ?tenant= is 404.
func TestGatewayFiguresREST(t *testing.T) {
	s := newAdminServer(t, testenv.SQLite)
	var gw, other struct{ ID string }
	s.ok(testAdminToken, "POST", "/admin/v1/tenants", map[string]any{"id": "acme"}, 201, nil)
	s.ok(testAdminToken, "POST", "/admin/v1/tenants/acme/gateways", map[string]any{"slug": "prod"}, 201, &gw)
	s.ok(testAdminToken, "POST", "/admin/v1/tenants", map[string]any{"id": "beta"}, 201, nil)
	s.ok(testAdminToken, "POST", "/admin/v1/tenants/beta/gateways", map[string]any{"slug": "prod"}, 201, &other)
	for _, path := range []string{"/admin/v1/stats", "/admin/v1/stats/timeseries", "/admin/v1/stats/analytics"} {
		s.ok(testAdminToken, "GET", path+"?gateway="+gw.ID, nil, 200, nil)
		if r := s.do(testAdminToken, "GET", path+"?tenant=acme&gateway="+other.ID, nil); r.status != 404 {
			t.Errorf("GET %s of another tenant's gateway: %d %s, want 404", path, r.status, r.body)
		}
	}
}
