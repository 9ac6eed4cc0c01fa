package rest

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/testenv"
)

// TestAlertWebhookREST: PATCH /admin/v1/tenants/{id} refuses a webhook on
// a link-local or metadata address and one without a signing secret;
// accepts a loopback one (the test server allows private addresses, as
// --allow-private-upstreams does); the secret never comes back — reads
// say alert_webhook_secret_set — and a settings PATCH without it keeps
// it. GET /admin/v1/tenants/{id}/alerts lists them (none yet).
func TestAlertWebhookREST(t *testing.T) {
	const canary = "whsec-rest-canary-0d9b3f7a"
	for _, b := range testenv.Backends {
		t.Run(string(b), func(t *testing.T) {
			s := newAdminServer(t, b)
			s.ok(testAdminToken, "POST", "/admin/v1/tenants", map[string]any{"id": "acme"}, 201, nil)
			patch := func(url string, secret any) map[string]any {
				st := map[string]any{"log_retention_days": 30, "log_bodies_default": true, "allowed_providers": []string{},
					"alert_webhook_url": url}
				if secret != nil {
					st["alert_webhook_secret"] = secret
				}
				return map[string]any{"settings": st}
			}
			for _, c := range []struct {
				name, url string
				secret    any
				param     string
			}{
				{"metadata address", "http://169.254.169.254/latest", canary, "settings.alert_webhook_url"},
				{"link-local IPv6", "http://[fe80::1]/hook", canary, "settings.alert_webhook_url"},
				{"metadata host", "http://metadata.google.internal/hook", canary, "settings.alert_webhook_url"},
				{"IPv4-mapped metadata", "http://[::ffff:169.254.169.254]/hook", canary, "settings.alert_webhook_url"},
				{"not http", "ftp://127.0.0.1/hook", canary, "settings.alert_webhook_url"},
				{"no secret", "http://127.0.0.1:9/hook", nil, "settings.alert_webhook_secret"},
				{"short secret", "http://127.0.0.1:9/hook", "short", "settings.alert_webhook_secret"},
			} {
				r := s.do(testAdminToken, "PATCH", "/admin/v1/tenants/acme", patch(c.url, c.secret))
				if d := diffError(s.wireErr(r), wantErr(400, "invalid_request", c.param)); d != "" {
					t.Errorf("%s: %s", c.name, d)
				}
				if strings.Contains(string(r.body), canary) {
					t.Errorf("%s: the secret is in the answer %s", c.name, r.body)
				}
			}

			type settings struct {
				URL string `json:"alert_webhook_url"`
				Set bool   `json:"alert_webhook_secret_set"`
			}
			var got struct {
				Settings settings `json:"settings"`
			}
			bodies := []string{string(s.ok(testAdminToken, "PATCH", "/admin/v1/tenants/acme", patch("http://127.0.0.1:9/hook", canary), 200, &got).body)}
			if got.Settings != (settings{"http://127.0.0.1:9/hook", true}) {
				t.Errorf("PATCH answered settings %+v", got.Settings)
			}
			// A settings PATCH without the secret keeps it.
			bodies = append(bodies, string(s.ok(testAdminToken, "PATCH", "/admin/v1/tenants/acme", patch("http://127.0.0.1:8/hook", nil), 200, &got).body))
			if got.Settings != (settings{"http://127.0.0.1:8/hook", true}) {
				t.Errorf("PATCH without the secret answered settings %+v, want it kept", got.Settings)
			}
			bodies = append(bodies, string(s.ok(testAdminToken, "GET", "/admin/v1/tenants/acme", nil, 200, &got).body))
			if got.Settings != (settings{"http://127.0.0.1:8/hook", true}) {
				t.Errorf("GET answered settings %+v", got.Settings)
			}
			for _, path := range []string{"/admin/v1/tenants", "/admin/v1/audit-log?resource_type=tenant", "/admin/v1/tenants/acme/alerts"} {
				bodies = append(bodies, string(s.ok(testAdminToken, "GET", path, nil, 200, nil).body))
			}
			if last := bodies[len(bodies)-1]; last != `{"data":[],"next_cursor":null}`+"\n" && last != `{"data":[],"next_cursor":null}` {
				t.Errorf("alerts = %s, want an empty list", last)
			}
			for _, body := range bodies {
				if strings.Contains(body, canary) {
					t.Errorf("the secret is in an answer: %s", body)
				}
			}
			// Removing both.
			s.ok(testAdminToken, "PATCH", "/admin/v1/tenants/acme", patch("", ""), 200, &got)
			if got.Settings != (settings{}) {
				t.Errorf("after removal, settings %+v", got.Settings)
			}
		})
	}
}
