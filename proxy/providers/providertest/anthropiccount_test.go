package providertest

import (
	"net/http"
	"strings"
	"testing"
)

func TestAnthropicCountTokens(t *testing.T) {
	s := start(t)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+"/v1/messages/count_tokens",
		strings.NewReader(`{"model":"claude-sonnet-4-5","system":"Be brief.","messages":[{"role":"user","content":"Say hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Api-Key", testKey)
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if body := readAll(t, resp); resp.StatusCode != 200 || string(body) != `{"input_tokens":4}` {
		t.Errorf("status %d: %s", resp.StatusCode, body)
	}
}
