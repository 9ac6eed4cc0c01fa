package providertest

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// postAzure sends body to path with the given api-key (none when "").
func postAzure(t *testing.T, s *Server, path, key, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Api-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type azureError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

const azureChatPath = "/openai/deployments/prod-4o/chat/completions?api-version=2024-10-21"

func TestAzureChat(t *testing.T) {
	s := start(t)
	// Azure ignores the body's model: the deployment names the answer.
	resp := postAzure(t, s, azureChatPath, testKey, `{"model":"ignored","messages":[{"role":"user","content":"Say hi"}]}`)
	body := readAll(t, resp)
	c := decode[chatResponse](t, body)
	if resp.StatusCode != 200 || c.Model != "prod-4o" || len(c.Choices) != 1 || c.Choices[0].Message.Content != "Hello from mock: Say hi" ||
		c.Usage == nil || c.Usage.PromptTokens != 2 || c.Usage.CompletionTokens != 5 {
		t.Errorf("status %d: %s", resp.StatusCode, body)
	}
	rec := s.Requests()[0]
	if rec.Path != "/openai/deployments/prod-4o/chat/completions" || rec.Query != "api-version=2024-10-21" ||
		rec.Header.Get("Api-Key") != testKey || rec.Header.Get("Authorization") != "" ||
		string(rec.Body) != `{"model":"ignored","messages":[{"role":"user","content":"Say hi"}]}` {
		t.Errorf("recorded %s?%s %v %s", rec.Path, rec.Query, rec.Header, rec.Body)
	}
}

func TestAzureOperations(t *testing.T) {
	s := start(t)
	tests := []struct {
		name, path, body, want string
	}{
		{"no model in body", azureChatPath, `{"messages":[{"role":"user","content":"x"}]}`, `"content":"Hello from mock: x"`},
		{"completions", "/openai/deployments/instruct/completions?api-version=2024-06-01", `{"prompt":"Once upon"}`, `"text":"Hello from mock: Once upon"`},
		{"embeddings", "/openai/deployments/emb/embeddings?api-version=2025-01-01-preview", `{"input":["a","b"]}`, `"object":"list","data":[{"object":"embedding","index":0`},
		{"escaped deployment", "/openai/deployments/a%2Fb/chat/completions?api-version=2024-10-21", `{"messages":[{"role":"user","content":"x"}]}`, `"model":"a/b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := postAzure(t, s, tt.path, testKey, tt.body)
			if body := readAll(t, resp); resp.StatusCode != 200 || !strings.Contains(string(body), tt.want) {
				t.Errorf("status %d: %s, want ~%s", resp.StatusCode, body, tt.want)
			}
		})
	}
}

func TestAzureStream(t *testing.T) {
	s := start(t)
	resp := postAzure(t, s, "/openai/deployments/prod-4o@chunks=2/chat/completions?api-version=2024-10-21", testKey,
		`{"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Say hi"}]}`)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, ct)
	}
	events, err := readSSE(t, resp, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Hello from ", "mock: Say hi"}, contents(t, events)); diff != "" {
		t.Errorf("contents (-want +got):\n%s", diff)
	}
	last := decode[chatResponse](t, []byte(events[len(events)-2].data))
	if events[len(events)-1].data != "[DONE]" || last.Usage == nil || last.Model != "prod-4o" {
		t.Errorf("events %v", events)
	}
}

func TestAzureErrors(t *testing.T) {
	s := start(t)
	const chat = `{"messages":[{"role":"user","content":"x"}]}`
	tests := []struct {
		name, path, key, body string
		step                  *Step
		status                int
		code, msg, retryAfter string
	}{
		{name: "no key", path: azureChatPath, body: chat, status: 401, code: "401", msg: "Access denied"},
		{name: "no api-version", key: testKey, path: "/openai/deployments/d/chat/completions", body: chat, status: 404, code: "404", msg: "Resource not found"},
		{name: "bad api-version", key: testKey, path: "/openai/deployments/d/chat/completions?api-version=latest", body: chat, status: 404, code: "404", msg: "Resource not found"},
		{name: "unknown operation", key: testKey, path: "/openai/deployments/d/images/generations?api-version=2024-10-21", body: chat, status: 404, code: "404", msg: "Resource not found"},
		{name: "no deployment", key: testKey, path: "/openai/deployments//chat/completions?api-version=2024-10-21", body: chat, status: 404, code: "404", msg: "Resource not found"},
		{name: "not an object", key: testKey, path: azureChatPath, body: `[1]`, status: 400, code: "BadRequest", msg: "not a JSON object"},
		{name: "429 step", step: &Step{Status: 429, RetryAfter: "7"}, path: azureChatPath, body: chat, status: 429, code: "429", msg: "rate limit", retryAfter: "7"},
		{name: "400 step", step: &Step{Status: 400}, path: azureChatPath, body: chat, status: 400, code: "content_filter", msg: "content management policy"},
		{name: "500 step", step: &Step{Status: 500}, path: azureChatPath, body: chat, status: 500, code: "InternalServerError", msg: "error while processing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.step != nil {
				s.Script(*tt.step)
			}
			resp := postAzure(t, s, tt.path, tt.key, tt.body)
			body := readAll(t, resp)
			got := decode[azureError](t, body)
			if resp.StatusCode != tt.status || got.Error.Code != tt.code || !strings.Contains(got.Error.Message, tt.msg) ||
				resp.Header.Get("Retry-After") != tt.retryAfter {
				t.Errorf("status %d, %s, Retry-After %q", resp.StatusCode, body, resp.Header.Get("Retry-After"))
			}
		})
	}
	// A bearer token is not Azure's api-key.
	if resp := post(t, s, azureChatPath, testKey, chat); resp.StatusCode != 401 {
		t.Errorf("bearer token: status %d", resp.StatusCode)
	}
	// Directives in the deployment name work as in the OpenAI format.
	resp := postAzure(t, s, "/openai/deployments/d@status=503/chat/completions?api-version=2024-10-21", testKey, chat)
	if resp.StatusCode != 503 {
		t.Errorf("directive: status %d", resp.StatusCode)
	}
}
