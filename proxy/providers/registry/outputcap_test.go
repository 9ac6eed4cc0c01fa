package registry

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/internal/codectest"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// TestMaxOutputTokens: every adapter sends Request.MaxOutputTokens in its
// wire format's field when the client set no maximum, so that an upstream
// answers at most that many tokens (the mock stops there as a provider
// does); the client's own max_tokens wins; without the cap nothing is
// added. OpenAI's o-series and GPT-5 models take max_completion_tokens.
func TestMaxOutputTokens(t *testing.T) {
	m := codectest.StartMock(t)
	reg := New(codectest.NewTestClient(t, providers.ClientConfig{}))
	adapters := []struct {
		provider, model string
		cred            providers.Credential
		// field is where the cap must appear in the upstream body.
		field string
		// uncapped is the answer's length without a cap: the mock's, or
		// the adapter's own default.
		uncapped int64
	}{
		{"openai", "gpt-4o-mini", providers.Credential{Key: codectest.TestKey, BaseURL: m.URL() + "/v1"}, `"max_tokens":300`, 5000},
		{"openai", "o3-mini", providers.Credential{Key: codectest.TestKey, BaseURL: m.URL() + "/v1"}, `"max_completion_tokens":300`, 5000},
		{"openai", "gpt-5-mini", providers.Credential{Key: codectest.TestKey, BaseURL: m.URL() + "/v1"}, `"max_completion_tokens":300`, 5000},
		{"groq", "o3-like", providers.Credential{Key: codectest.TestKey, BaseURL: m.URL() + "/v1"}, `"max_tokens":300`, 5000},
		{"azure-openai", "o4-mini", providers.Credential{Key: codectest.TestKey, BaseURL: m.URL(),
			Options: providers.KeyOptions{APIVersion: "2024-10-21"}}, `"max_completion_tokens":300`, 5000},
		{"anthropic", "claude-sonnet-4-5", providers.Credential{Key: codectest.TestKey, BaseURL: m.URL()}, `"max_tokens":300`, 4096},
		{"google", "gemini-2.5-flash", providers.Credential{Key: codectest.TestKey, BaseURL: m.URL()}, `"maxOutputTokens":300`, 5000},
		{"bedrock", "amazon.nova-lite-v1:0", providers.Credential{Key: secret.Value(providertest.MockSecretAccessKey), BaseURL: m.URL(),
			Options: providers.KeyOptions{Region: "us-east-1", AccessKeyID: providertest.MockAccessKeyID}}, `"maxTokens":300`, 5000},
		{"cohere", "command-a-03-2025", providers.Credential{Key: codectest.TestKey, BaseURL: m.URL()}, `"max_tokens":300`, 5000},
	}
	for _, a := range adapters {
		t.Run(a.provider+"/"+a.model, func(t *testing.T) {
			prov, ok := reg.Get(a.provider)
			if !ok {
				t.Fatalf("no adapter %s", a.provider)
			}
			for _, tc := range []struct {
				name       string
				extra      string
				capOut     int64
				stream     bool
				completion int64
				field      string
			}{
				{"capped", "", 300, false, 300, a.field},
				{"capped stream", "", 300, true, 300, a.field},
				{"the client's max wins", `,"max_tokens":50`, 300, false, 50, ""},
				{"no cap", "", 0, false, a.uncapped, ""},
				{"a null max is no max", `,"max_tokens":null`, 300, false, 300, ""},
			} {
				m.Script(providertest.Step{AnswerTokens: 5000})
				req := &providers.Request{Op: llm.OpChat, Model: a.model, Stream: tc.stream, MaxOutputTokens: tc.capOut, Cred: a.cred,
					Deadline: time.Now().Add(10 * time.Second),
					Body:     []byte(`{"model":"x","messages":[{"role":"user","content":"hi"}]` + tc.extra + `}`)}
				var u llm.Usage
				if tc.stream {
					st, err := prov.ChatStream(context.Background(), req)
					if err != nil {
						t.Fatalf("%s: %v", tc.name, err)
					}
					for {
						if _, err := st.Next(); err != nil {
							break
						}
					}
					u = st.Usage()
					_ = st.Close()
				} else {
					resp, err := prov.Chat(context.Background(), req)
					if err != nil {
						t.Fatalf("%s: %v", tc.name, err)
					}
					u = resp.Usage
				}
				if u.CompletionTokens != tc.completion {
					t.Errorf("%s: completion tokens %d, want %d", tc.name, u.CompletionTokens, tc.completion)
				}
				reqs := m.Requests()
				sent := string(reqs[len(reqs)-1].Body)
				if tc.field != "" && !strings.Contains(sent, tc.field) {
					t.Errorf("%s: upstream body %s lacks %s", tc.name, sent, tc.field)
				}
				if tc.capOut == 0 && strings.Contains(sent, ":300") {
					t.Errorf("%s: upstream body %s has a cap nobody asked for", tc.name, sent)
				}
			}
		})
	}
}

// TestMaxOutputTokensNotOnEmbeddings: embeddings produce no output; the
// cap adds nothing to their body.
func TestMaxOutputTokensNotOnEmbeddings(t *testing.T) {
	m := codectest.StartMock(t)
	prov, _ := New(codectest.NewTestClient(t, providers.ClientConfig{})).Get("openai")
	req := &providers.Request{Op: llm.OpEmbeddings, Model: "text-embedding-3-small", MaxOutputTokens: 300,
		Cred: providers.Credential{Key: codectest.TestKey, BaseURL: m.URL() + "/v1"}, Deadline: time.Now().Add(10 * time.Second),
		Body: []byte(`{"model":"x","input":"hi"}`)}
	if _, err := prov.(providers.Embedder).Embed(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var sent map[string]any
	if err := json.Unmarshal(m.Requests()[0].Body, &sent); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"model": "text-embedding-3-small", "input": "hi"}, sent); diff != "" {
		t.Errorf("upstream body (-want +got):\n%s", diff)
	}
}
