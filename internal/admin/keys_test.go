package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/store"
)

// openedKey is a stored provider key with its secret opened.
type openedKey struct {
	store.ProviderKey
	Secret secret.Value
}

// providerKeys opens every stored provider key with the service's box, by
// gateway id, leaving out the keys that do not open: what the proxy's
// snapshot serves (proxy/snapshot reads and opens the keys itself).
func providerKeys(ctx context.Context, s *Service) (map[string][]openedKey, error) {
	rows, err := store.All[store.ProviderKey](ctx, s.db, "id")
	if err != nil {
		return nil, fmt.Errorf("read provider keys: %w", err)
	}
	out := make(map[string][]openedKey)
	for _, k := range rows {
		if v, err := s.cfg.Box.Open(k.SealedKey); err == nil {
			out[k.GatewayID] = append(out[k.GatewayID], openedKey{ProviderKey: k, Secret: v})
		}
	}
	return out, nil
}

// mkGateway creates tenant tenantID (unless it is "platform") and a gateway
// "prod" in it.
func mkGateway(t *testing.T, s *Service, admin *auth.Principal, tenantID string) *store.Gateway {
	t.Helper()
	ctx := context.Background()
	if tenantID != "platform" {
		if _, err := s.CreateTenant(ctx, admin, TenantInput{ID: tenantID}); err != nil {
			t.Fatal(err)
		}
	}
	g, err := s.CreateGateway(ctx, admin, tenantID, GatewayInput{Slug: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// mkUser inserts a user of role in tenantID and returns its principal.
func mkUser(t *testing.T, s *Service, tenantID string, role auth.Role) *auth.Principal {
	t.Helper()
	now := s.now()
	id := fmt.Sprintf("usr_%s_%s", tenantID, role)
	u := &store.User{ID: id, TenantID: tenantID, Email: id + "@test", Role: role, Status: store.UserActive, CreatedAt: now, UpdatedAt: now}
	if err := store.Insert(context.Background(), s.db, u); err != nil {
		t.Fatal(err)
	}
	return &auth.Principal{UserID: u.ID, Email: u.Email, TenantID: tenantID, Role: role}
}

// wantErrParam checks the status, code and param of an error.
func wantErrParam(t *testing.T, err error, status int, code, param string) {
	t.Helper()
	wantCode(t, err, status, code)
	if ae, _ := apierr.From(err); ae.Param != param {
		t.Fatalf("got param %q (%v), want %q", ae.Param, err, param)
	}
}

const testKey = "sk-proj-CANARYabcdefghijklmnopqrstuv7890WXYZ"

// canaryPieces are 8-character substrings of testKey that must never show up
// outside the sealed column.
func canaryPieces(key string) []string {
	var out []string
	for i := 0; i+8 <= len(key); i += 4 {
		out = append(out, key[i:i+8])
	}
	return out
}

func TestProviderKeys(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		g := mkGateway(t, s, admin, "acme")

		k, err := s.CreateKey(ctx, admin, g.ID, KeyInput{Provider: "openai", Alias: "main", Key: " " + testKey + "\n"})
		if err != nil {
			t.Fatal(err)
		}
		if k.Last4 != "WXYZ" || k.Weight != 1 || k.TenantID != "acme" || len(k.Models) != 0 {
			t.Fatalf("got %+v, want last4 WXYZ, weight 1", k)
		}
		body, err := json.Marshal(k)
		if err != nil {
			t.Fatal(err)
		}
		for _, piece := range canaryPieces(testKey) {
			if strings.Contains(string(body), piece) {
				t.Fatalf("key JSON %s contains %q of the key", body, piece)
			}
		}
		if !strings.Contains(string(body), `"last4":"WXYZ"`) {
			t.Fatalf("key JSON %s has no last4", body)
		}

		var sealed string
		if err := s.db.NewSelect().Table("provider_keys").Column("sealed_key").Where("id = ?", k.ID).Scan(ctx, &sealed); err != nil {
			t.Fatal(err)
		}
		if sealed == testKey || strings.Contains(sealed, testKey) || strings.Contains(sealed, "CANARY") {
			t.Fatalf("stored key %q holds the plaintext", sealed)
		}

		_, err = s.CreateKey(ctx, admin, g.ID, KeyInput{Provider: "openai", Alias: "main", Key: testKey})
		wantErrParam(t, err, 409, "conflict", "alias")
		w := 5
		k2, err := s.CreateKey(ctx, admin, g.ID, KeyInput{Provider: "anthropic", Alias: "main", Key: "sk-ant-" + testKey, Weight: &w,
			Models: []string{"claude-sonnet-4-5", "claude-sonnet-4-5"}})
		if err != nil {
			t.Fatal(err)
		}
		if k2.Weight != 5 || len(k2.Models) != 1 {
			t.Fatalf("got %+v, want weight 5 and deduplicated models", k2)
		}

		list, err := s.ListKeys(ctx, admin, g.ID)
		if err != nil || len(list.Data) != 2 {
			t.Fatalf("list: %v %+v", err, list)
		}

		resolved, err := providerKeys(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if rk := resolved[g.ID]; len(rk) != 2 || rk[0].Secret.Reveal() != testKey || rk[1].Secret.Reveal() != "sk-ant-"+testKey {
			t.Fatalf("resolved keys %d, want 2 decrypted", len(rk))
		}
		if got := fmt.Sprint(resolved[g.ID][0].Secret); got != "[REDACTED]" {
			t.Fatalf("secret prints %q", got)
		}

		wantCode(t, s.DeleteKey(ctx, admin, g.ID, "openai", "nope"), 404, "not_found")
		if err := s.DeleteKey(ctx, admin, g.ID, "openai", "main"); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.DeleteKey(ctx, admin, g.ID, "openai", "main"), 404, "not_found")

		audit, err := store.All[store.AuditEntry](ctx, s.db, "id")
		if err != nil {
			t.Fatal(err)
		}
		var actions []string
		for _, a := range audit {
			raw, _ := json.Marshal(a)
			for _, piece := range canaryPieces(testKey) {
				if strings.Contains(string(raw), piece) {
					t.Fatalf("audit row %s contains %q of the key", raw, piece)
				}
			}
			actions = append(actions, a.Action+":"+a.Outcome)
		}
		want := "tenant.create:ok gateway.create:ok key.create:ok key.create:ok key.delete:ok"
		if got := strings.Join(actions, " "); got != want {
			t.Fatalf("audit %q, want %q", got, want)
		}
		created := audit[2].Changes
		if created["last4"] != "WXYZ" || created["provider"] != "openai" || created["alias"] != "main" {
			t.Fatalf("audit changes %v, want provider, alias, last4", created)
		}
	})
}

func TestProviderKeyValidation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		g := mkGateway(t, s, admin, "acme")
		zero, big := 0, 1001
		tests := []struct {
			name  string
			in    KeyInput
			param string
		}{
			{"unknown provider", KeyInput{Provider: "nope", Alias: "a", Key: testKey}, "provider"},
			{"empty alias", KeyInput{Provider: "openai", Key: testKey}, "alias"},
			{"bad alias", KeyInput{Provider: "openai", Alias: "Main Key", Key: testKey}, "alias"},
			{"no key", KeyInput{Provider: "openai", Alias: "a"}, "key"},
			{"short key", KeyInput{Provider: "openai", Alias: "a", Key: "sk-short"}, "key"},
			{"space in key", KeyInput{Provider: "openai", Alias: "a", Key: "sk-abc def-ghijklmnop"}, "key"},
			{"control in key", KeyInput{Provider: "openai", Alias: "a", Key: "sk-abc\x00def-ghijklmnop"}, "key"},
			{"huge key", KeyInput{Provider: "openai", Alias: "a", Key: strings.Repeat("k", 4097)}, "key"},
			{"weight 0", KeyInput{Provider: "openai", Alias: "a", Key: testKey, Weight: &zero}, "weight"},
			{"weight 1001", KeyInput{Provider: "openai", Alias: "a", Key: testKey, Weight: &big}, "weight"},
			{"too many models", KeyInput{Provider: "openai", Alias: "a", Key: testKey, Models: make([]string, 501)}, "models"},
			{"empty model", KeyInput{Provider: "openai", Alias: "a", Key: testKey, Models: []string{""}}, "models[0]"},
			{"compatible without base_url", KeyInput{Provider: "openai-compatible", Alias: "a", Key: testKey}, "base_url"},
			{"azure without endpoint", KeyInput{Provider: "azure-openai", Alias: "a", Key: testKey}, "base_url"},
			{"azure resource with dots", KeyInput{Provider: "azure-openai", Alias: "a", Key: testKey,
				Options: &store.KeyOptions{Resource: "evil.example/x#"}}, "options.resource"},
			{"bedrock without region", KeyInput{Provider: "bedrock", Alias: "a", Key: testKey}, "options.region"},
		}
		for _, base := range []string{
			"http://169.254.169.254/", "http://[::ffff:a9fe:a9fe]/", "http://2852039166/", "http://ok.example@127.0.0.1/",
			"http://metadata.google.internal/", "ftp://x", "http://[fd00:ec2::254]/", "http://0x7f.1/", "/v1",
		} {
			tests = append(tests, struct {
				name  string
				in    KeyInput
				param string
			}{"base_url " + base, KeyInput{Provider: "openai-compatible", Alias: "a", Key: testKey, BaseURL: base}, "base_url"})
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				_, err := s.CreateKey(ctx, admin, g.ID, tc.in)
				wantErrParam(t, err, 400, "invalid_request", tc.param)
				if strings.Contains(err.Error(), "CANARY") {
					t.Fatalf("error %q echoes the key", err)
				}
			})
		}

		for _, ok := range []KeyInput{
			{Provider: "openai-compatible", Alias: "vllm", Key: testKey, BaseURL: "http://127.0.0.1:8000/v1/"},
			{Provider: "azure-openai", Alias: "az", Key: testKey, Options: &store.KeyOptions{Resource: "my-res", APIVersion: "2024-10-21",
				Deployments: map[string]string{"gpt-4o": "gpt4o-prod"}}},
			{Provider: "bedrock", Alias: "aws", Key: testKey, Options: &store.KeyOptions{Region: "us-east-1", AccessKeyID: "AKIAIOSFODNN7EXAMPLE"}},
		} {
			k, err := s.CreateKey(ctx, admin, g.ID, ok)
			if err != nil {
				t.Fatalf("%s: %v", ok.Provider, err)
			}
			if ok.Provider == "openai-compatible" && k.BaseURL != "http://127.0.0.1:8000/v1" {
				t.Fatalf("base_url %q, want the trailing slash trimmed", k.BaseURL)
			}
		}

		// A tenant's allowed providers bound the keys of its gateways.
		settings := DefaultTenantSettings()
		settings.AllowedProviders = []string{"anthropic"}
		if _, err := s.UpdateTenant(ctx, admin, "acme", TenantPatch{Settings: &settings}); err != nil {
			t.Fatal(err)
		}
		_, err := s.CreateKey(ctx, admin, g.ID, KeyInput{Provider: "openai", Alias: "x", Key: testKey})
		wantErrParam(t, err, 400, "invalid_request", "provider")
		if _, err := s.CreateKey(ctx, admin, g.ID, KeyInput{Provider: "anthropic", Alias: "x", Key: testKey}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestProviderKeysAcrossTenants(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		g := mkGateway(t, s, admin, "acme")
		mkGateway(t, s, admin, "other")
		if _, err := s.CreateKey(ctx, admin, g.ID, KeyInput{Provider: "openai", Alias: "main", Key: testKey}); err != nil {
			t.Fatal(err)
		}
		otherTA := mkUser(t, s, "other", auth.TenantAdministrator)
		_, err := s.ListKeys(ctx, otherTA, g.ID)
		wantCode(t, err, 404, "not_found")
		_, err = s.CreateKey(ctx, otherTA, g.ID, KeyInput{Provider: "openai", Alias: "x", Key: testKey})
		wantCode(t, err, 404, "not_found")
		wantCode(t, s.DeleteKey(ctx, otherTA, g.ID, "openai", "main"), 404, "not_found")

		ta := mkUser(t, s, "acme", auth.TenantAdministrator)
		if l, err := s.ListKeys(ctx, ta, g.ID); err != nil || len(l.Data) != 1 {
			t.Fatalf("own tenant admin: %v %+v", err, l)
		}
		member := mkUser(t, s, "acme", auth.Member)
		_, err = s.ListKeys(ctx, member, g.ID)
		wantCode(t, err, 403, "forbidden")
		_, err = s.CreateKey(ctx, member, g.ID, KeyInput{Provider: "openai", Alias: "x", Key: testKey})
		wantCode(t, err, 403, "forbidden")
	})
}
