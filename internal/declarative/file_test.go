package declarative

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/declarative/schemacheck"
)

func exampleFile(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(filepath.Dir(schemacheck.SchemaPath()), "sluice-config.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestExampleValidates checks the documented example against the schema
// and Parse, and that writing it is stable: Marshal(Parse(Marshal(x))) is
// Marshal(x), byte for byte, and validates too.
func TestExampleValidates(t *testing.T) {
	data := exampleFile(t)
	if err := schemacheck.Check(data); err != nil {
		t.Fatalf("example: %v", err)
	}
	root, err := Parse(data)
	if err != nil {
		t.Fatalf("parse the example: %v", err)
	}
	once, err := Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := schemacheck.Check(once); err != nil {
		t.Fatalf("written example: %v", err)
	}
	again, err := Parse(once)
	if err != nil {
		t.Fatal(err)
	}
	twice, err := Marshal(again)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(once), string(twice)); d != "" {
		t.Fatalf("writing is not stable (-once +twice):\n%s", d)
	}
	if !strings.HasPrefix(string(once), "apiVersion: sluice.dev/v1\nkind: Config\ntenants:\n  - id: acme\n    name: Acme Corp\n") {
		t.Fatalf("written file does not lead with its identity fields:\n%.200s", once)
	}
}

// TestConfigurationDocShowsTheExample keeps the complete example of
// docs/configuration.md the same as the example file the tests apply.
func TestConfigurationDocShowsTheExample(t *testing.T) {
	example := string(exampleFile(t))
	example = example[strings.Index(example, "apiVersion:"):]
	doc, err := os.ReadFile(filepath.Join(filepath.Dir(schemacheck.SchemaPath()), "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```yaml\n"+example+"```") {
		t.Fatal("docs/configuration.md does not show docs/sluice-config.example.yaml as it is")
	}
}

// TestSchemaRefuses checks that the schema catches what editors should
// flag: unknown fields, secrets where only references belong, bad enums.
func TestSchemaRefuses(t *testing.T) {
	head := "apiVersion: sluice.dev/v1\nkind: Config\n"
	for name, body := range map[string]string{
		"wrong apiVersion": "apiVersion: sluice.dev/v2\nkind: Config\n",
		"key value inline": head + "tenants:\n  - id: acme\n    gateways:\n      - slug: prod\n        keys:\n" +
			"          - {provider: openai, alias: main, key: sk-proj-0123456789abcdef}\n",
		"bad key_ref":       head + "tenants:\n  - id: acme\n    gateways:\n      - slug: prod\n        keys:\n          - {provider: openai, alias: main, key_ref: vault:x}\n",
		"token secret":      head + "tenants:\n  - id: acme\n    gateways:\n      - slug: prod\n        tokens:\n          - {name: ci, secret: sk-sl-x}\n",
		"user password":     head + "tenants:\n  - id: acme\n    users:\n      - {email: a@b.example, password: correct-horse-battery}\n",
		"unknown role":      head + "tenants:\n  - id: acme\n    users:\n      - {email: a@b.example, role: owner}\n",
		"budget state":      head + "tenants:\n  - id: acme\n    gateways:\n      - slug: prod\n        budget: {amount_usd: 1, period: daily, spent_usd: 0}\n",
		"tenant id":         head + "tenants:\n  - id: Acme\n",
		"unknown top-level": head + "gateways: []\n",
		"alert secret inline": head + "tenants:\n  - id: acme\n    settings: {alert_webhook_url: 'https://203.0.113.7/h', " +
			"alert_webhook_secret: whsec-0123456789abcdef}\n",
		"bad alert secret ref": head + "tenants:\n  - id: acme\n    settings: {alert_webhook_secret_ref: whsec-0123456789abcdef}\n",
	} {
		t.Run(name, func(t *testing.T) {
			if err := schemacheck.Check([]byte(body)); err == nil {
				t.Fatalf("the schema accepts:\n%s", body)
			}
		})
	}
}

// TestParseRefuses checks the structural checks apply relies on before it
// asks the server anything.
func TestParseRefuses(t *testing.T) {
	head := "apiVersion: sluice.dev/v1\nkind: Config\n"
	for _, tc := range []struct{ name, body, want string }{
		{"apiVersion", "apiVersion: v1\nkind: Config\n", `apiVersion is "v1"`},
		{"kind", "apiVersion: sluice.dev/v1\nkind: Gateway\n", `kind is "Gateway"`},
		{"top-level", head + "users: []\n", `unknown top-level field "users"`},
		{"no tenant id", head + "tenants:\n  - name: x\n", `tenant "id" is required`},
		{"duplicate gateway", head + "tenants:\n  - id: acme\n    gateways:\n      - slug: prod\n      - slug: prod\n", `gateway "prod" appears twice`},
		{"duplicate key", head + "tenants:\n  - id: acme\n    gateways:\n      - slug: prod\n        keys:\n" +
			"          - {provider: openai, alias: a}\n          - {provider: openai, alias: a}\n", `key "openai/a" appears twice`},
		{"key_ref", head + "tenants:\n  - id: acme\n    gateways:\n      - slug: prod\n        keys:\n" +
			"          - {provider: openai, alias: a, key_ref: 'sk-proj-abc'}\n", `want env:NAME or file:PATH`},
		{"not a list", head + "tenants:\n  id: acme\n", "tenants: must be a list"},
		{"alert secret inline", head + "tenants:\n  - id: acme\n    settings: {alert_webhook_secret: whsec-0123456789abcdef}\n",
			"settings.alert_webhook_secret is write-only"},
		{"alert secret ref", head + "tenants:\n  - id: acme\n    settings: {alert_webhook_secret_ref: 'whsec-0123456789abcdef'}\n",
			`settings.alert_webhook_secret_ref "whsec-0123456789abcdef": want env:NAME or file:PATH`},
		{"not YAML", "{", "parse YAML"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.body))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestDiffComparesValues checks that equal values in other forms are not
// changes: numbers written as 100 or 100.0, times with any offset, and
// fields the file leaves out.
func TestDiffComparesValues(t *testing.T) {
	file, err := Parse([]byte("apiVersion: sluice.dev/v1\nkind: Config\ntenants:\n  - id: acme\n    gateways:\n" +
		"      - slug: prod\n        request_timeout_ms: 120000.0\n        tokens:\n" +
		"          - {name: ci, expires_at: '2030-06-30T02:00:00+02:00'}\n"))
	if err != nil {
		t.Fatal(err)
	}
	gw := list(list(file, "tenants")[0], "gateways")[0]
	server := kGateway.fromAPI(Object{"id": "gw_1", "slug": "prod", "name": "Production", "request_timeout_ms": 120000.0,
		"created_at": "2026-11-22T10:59:51Z", "budget": map[string]any{"amount_usd": 1.0, "period": "daily", "spent_usd": 0.5}})
	if got := diff(kGateway.own(gw), server); len(got) != 0 {
		t.Fatalf("diff %v, want none", got)
	}
	if _, ok := server["created_at"]; ok {
		t.Fatal("a read-only field was kept")
	}
	if got, want := server["budget"], (Object{"amount_usd": int64(1), "period": "daily"}); !cmp.Equal(got, want) {
		t.Fatalf("budget %v, want %v (state left out)", got, want)
	}
	tok := kToken.fromAPI(Object{"name": "ci", "expires_at": "2030-06-30T00:00:00Z", "prefix": "sk-sl-abcd"})
	if got := diff(list(gw, "tokens")[0], tok); len(got) != 0 {
		t.Fatalf("token diff %v, want none", got)
	}
	// A nested object the file names in part: only its fields are
	// compared, and the PATCH sends the whole object.
	want := Object{"settings": Object{"log_retention_days": int64(7)}}
	have := kTenant.fromAPI(Object{"settings": Object{"log_retention_days": 30.0, "alert_webhook_url": "", "alert_webhook_secret_set": false}})
	if got := diff(want, have); !cmp.Equal(got, []string{"settings"}) {
		t.Fatalf("diff %v, want [settings]", got)
	}
	if got, w := patchBody(want, have, []string{"settings"}), (Object{"settings": Object{"log_retention_days": int64(7), "alert_webhook_url": ""}}); !cmp.Equal(got, w) {
		t.Fatalf("patch body %v, want %v (whole, read-only fields left out)", got, w)
	}
	if got := diff(Object{"settings": Object{"log_retention_days": int64(30)}}, have); len(got) != 0 {
		t.Fatalf("diff %v, want none: a setting the file leaves out is not compared", got)
	}
	if got := diff(Object{"name": "B", "retry": Object{"max_attempts": int64(3)}}, Object{"name": "A", "retry": Object{"max_attempts": int64(2)}}); !cmp.Equal(got, []string{"name", "retry"}) {
		t.Fatalf("diff %v, want [name retry]", got)
	}
}

func TestKeyEnvName(t *testing.T) {
	if got, want := KeyEnvName("acme-eu", "prod", "azure-openai", "main_2"), "SLUICE_KEY_ACME_EU_PROD_AZURE_OPENAI_MAIN_2"; got != want {
		t.Fatalf("KeyEnvName = %q, want %q", got, want)
	}
	if got, want := AlertSecretEnvName("acme-eu"), "SLUICE_ALERT_SECRET_ACME_EU"; got != want {
		t.Fatalf("AlertSecretEnvName = %q, want %q", got, want)
	}
}

// TestAlertSecretSent checks when apply sends a tenant's write-only
// webhook secret: on create, when the file changes the URL, when the
// server has none — and otherwise not (it cannot compare values). The
// reference itself is never sent.
func TestAlertSecretSent(t *testing.T) {
	file, err := Parse([]byte("apiVersion: sluice.dev/v1\nkind: Config\ntenants:\n  - id: acme\n" +
		"    settings: {alert_webhook_url: 'https://203.0.113.7/a', alert_webhook_secret_ref: 'file:acme.secret'}\n" +
		"  - id: beta\n    settings: {log_retention_days: 7}\n"))
	if err != nil {
		t.Fatal(err)
	}
	const secret = "whsec-0123456789abcdef"
	secrets, err := resolveAlertSecrets(file, Options{ReadFile: func(p string) ([]byte, error) {
		if p != "acme.secret" {
			t.Fatalf("read %q, want acme.secret", p)
		}
		return []byte(secret + "\n"), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"acme": secret}; !cmp.Equal(secrets, want) {
		t.Fatalf("secrets %v, want %v", secrets, want)
	}
	acme := list(file, "tenants")[0]
	server := func(url string, set bool) *node {
		return &node{obj: Object{"id": "acme", "settings": Object{"alert_webhook_url": url}}, alertSecretSet: set}
	}
	for _, tc := range []struct {
		name string
		cur  *node
		sent bool
	}{
		{"create", nil, true},
		{"same URL, secret set", server("https://203.0.113.7/a", true), false},
		{"same URL, no secret on the server", server("https://203.0.113.7/a", false), true},
		{"URL changed", server("https://203.0.113.7/old", true), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := settingsOf(withAlertSecret(acme, tc.cur, secret, true))
			if _, ok := st["alert_webhook_secret_ref"]; ok {
				t.Fatal("the reference is sent as a setting")
			}
			if got, sent := st["alert_webhook_secret"]; sent != tc.sent || (sent && got != secret) {
				t.Fatalf("secret sent: %v (%v), want %v", sent, got != nil, tc.sent)
			}
			if tc.cur != nil {
				if changed := diff(kTenant.own(withAlertSecret(acme, tc.cur, secret, true)), tc.cur.obj); (len(changed) > 0) != tc.sent {
					t.Fatalf("diff %v: a secret to send must make settings a change, and only then", changed)
				}
			}
		})
	}
	if got := settingsOf(withoutSecret(withAlertSecret(acme, nil, secret, true))); got["alert_webhook_secret"] != nil || got["alert_webhook_url"] == nil {
		t.Fatalf("withoutSecret: %v", got)
	}
	if _, ok := settingsOf(acme)["alert_webhook_secret_ref"]; !ok {
		t.Fatal("withAlertSecret changed the file's object")
	}
}

// TestResolveKeys checks key_ref resolution: env: and file: (relative to
// the working directory), values trimmed, an unset variable refused.
func TestResolveKeys(t *testing.T) {
	file, err := Parse([]byte("apiVersion: sluice.dev/v1\nkind: Config\ntenants:\n  - id: acme\n    gateways:\n      - slug: prod\n        keys:\n" +
		"          - {provider: openai, alias: a, key_ref: 'env:K_A'}\n          - {provider: openai, alias: b, key_ref: 'file:b.key'}\n" +
		"          - {provider: ollama, alias: local}\n"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"K_A": " sk-a-0123456789ab\n"}
	opt := Options{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		ReadFile: func(p string) ([]byte, error) {
			if p != "b.key" {
				t.Fatalf("read %q, want the path as written (relative to the working directory)", p)
			}
			return []byte("sk-b-0123456789ab\n"), nil
		},
	}
	got, err := resolveKeys(file, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"acme/prod/openai/a": "sk-a-0123456789ab", "acme/prod/openai/b": "sk-b-0123456789ab"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("keys (-want +got):\n%s", d)
	}
	delete(env, "K_A")
	if _, err := resolveKeys(file, opt); err == nil || !strings.Contains(err.Error(), "env:K_A: the variable is not set") {
		t.Fatalf("unset variable: %v", err)
	}
}
