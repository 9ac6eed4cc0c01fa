package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// TestKeyTestAndRotation: through `sluice serve` and the mock provider, a
// key test makes one 1-token call with the key and answers ok (and, when
// the upstream refuses the key, its reason without the key); a rotation —
// add the new key, shift the weight, disable the old — is served by the
// proxy at once: afterwards every request goes out with the new key.
func TestKeyTestAndRotation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mock, mockURL, base := startMockServe(t, ctx)
	gwID, token := serveGateway(t, base, mockURL, `{"slug":"prod"}`, "rotation")
	keys := "/admin/v1/gateways/" + gwID + "/keys"
	chat := base + "/v1/acme/prod/compat/chat/completions"

	mock.Reset()
	res := call(t, base, "POST", keys+"/openai/mock/test", `{"model":"gpt-4o-mini"}`, 200)
	if res["ok"] != true || res["model"] != "gpt-4o-mini" || res["message"] != "" {
		t.Fatalf("key test %v, want ok", res)
	}
	reqs := mock.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/chat/completions" || reqs[0].Header.Get("Authorization") != "Bearer "+e2eOpenAIKey ||
		!strings.Contains(string(reqs[0].Body), `"max_tokens":1`) {
		t.Fatalf("upstream calls of a key test: %+v, want one 1-token chat with the key", reqs)
	}
	mock.Script(providertest.Step{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: ` + e2eOpenAIKey + `"}}`})
	res = call(t, base, "POST", keys+"/openai/mock/test", "", 200)
	if res["ok"] != false || !strings.Contains(res["message"].(string), "401") || strings.Contains(res["message"].(string), "upstream-key-0001") {
		t.Fatalf("key test of a refused key %v, want its reason without the key", res)
	}

	// A key the upstream refuses shows as the key's last error, without the key.
	mock.Script(providertest.Step{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: ` + e2eOpenAIKey + `"}}`})
	if s := postJSON(t, chat, token, `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`); s == 200 {
		t.Fatal("a refused key answered 200")
	}
	br := call(t, base, "GET", "/admin/v1/gateways/"+gwID+"/circuit-breaker", "", 200)["data"].([]any)[0].(map[string]any)
	if msg, _ := br["last_error"].(string); !strings.Contains(msg, "401") || strings.Contains(msg, "upstream-key-0001") || br["last_error_at"] == nil {
		t.Errorf("breaker after a refused key %v, want its last error without the key", br)
	}

	const newKey = "sk-mock-upstream-key-0002"
	call(t, base, "POST", keys, fmt.Sprintf(`{"provider":"openai","alias":"next","key":%q,"base_url":%q}`, newKey, mockURL+"/v1"), 201)
	call(t, base, "PATCH", keys+"/openai/next", `{"weight":10}`, 200)
	old := call(t, base, "PATCH", keys+"/openai/mock", `{"disabled":true}`, 200)
	if old["disabled"] != true || old["weight"] != float64(1) {
		t.Fatalf("retired key %v", old)
	}
	mock.Reset()
	for range 5 {
		if s := postJSON(t, chat, token, `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`); s != 200 {
			t.Fatalf("inference after the rotation: %d", s)
		}
	}
	for _, r := range mock.Requests() {
		if got := r.Header.Get("Authorization"); got != "Bearer "+newKey {
			t.Errorf("a request after the rotation went out with %q, want the new key", got)
		}
	}
	audit := call(t, base, "GET", "/admin/v1/audit-log?limit=100", "", 200)
	var actions []string
	for _, e := range audit["data"].([]any) {
		actions = append(actions, e.(map[string]any)["action"].(string))
	}
	for _, want := range []string{"key.test", "key.update"} {
		if !strings.Contains(strings.Join(actions, " "), want) {
			t.Errorf("audit actions %v, want %s", actions, want)
		}
	}
}

func TestCheckPublicURL(t *testing.T) {
	for raw, ok := range map[string]bool{
		"": true, "https://ai.example.com": true, "http://127.0.0.1:8080/gw": true,
		"ai.example.com": false, "ftp://x": false, "https://u:p@x": false, "https://x/?a=1": false, "https://x/#f": false,
	} {
		if err := checkPublicURL(raw); (err == nil) != ok {
			t.Errorf("checkPublicURL(%q) = %v, want ok %v", raw, err, ok)
		}
	}
}
