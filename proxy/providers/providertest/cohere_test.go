package providertest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/valyala/fasthttp"
)

type cohereError struct {
	ID      string `json:"id"`
	Message string `json:"message"`
}

// cohereEvents reads a named event stream into "name data" lines.
func cohereEvents(t *testing.T, resp *http.Response) []string {
	t.Helper()
	var out []string
	var name string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data := strings.TrimPrefix(line, "data: ")
			if !json.Valid([]byte(data)) {
				t.Errorf("invalid event data %q", data)
			}
			out = append(out, name+" "+data)
		}
	}
	return out
}

const cohereHi = `{"model":"command-a-03-2025","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Say hi"}]}`

func TestCohereChat(t *testing.T) {
	s := start(t)
	resp := post(t, s, "/v2/chat", testKey, cohereHi)
	body := readAll(t, resp)
	want := `{"id":"mock-1","message":{"role":"assistant","content":[{"type":"text","text":"Hello from mock: Say hi"}]},"finish_reason":"COMPLETE","usage":{"billed_units":{"input_tokens":4,"output_tokens":5},"tokens":{"input_tokens":4,"output_tokens":5}}}`
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || string(body) != want {
		t.Errorf("status %d %s:\n%s\nwant\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body, want)
	}
	if rec := s.Requests()[0]; rec.Path != "/v2/chat" || rec.Header.Get("Authorization") != "Bearer "+testKey {
		t.Errorf("recorded %s %v", rec.Path, rec.Header)
	}
}

func TestCohereTools(t *testing.T) {
	s := start(t)
	tools := `"tools":[{"type":"function","function":{"name":"search","parameters":{"type":"object"}}},{"type":"function","function":{"name":"other"}}]`
	tests := []struct {
		name, body, want string
	}{
		{"tool call", `{"model":"m",` + tools + `,"messages":[{"role":"user","content":"find \"cats\""}]}`,
			`{"id":"mock-1","message":{"role":"assistant","tool_plan":"I will call search.","tool_calls":[{"id":"search_mock_1","type":"function","function":{"name":"search","arguments":"{\"text\":\"find \\\"cats\\\"\"}"}}]},"finish_reason":"TOOL_CALL","usage":{"billed_units":{"input_tokens":2,"output_tokens":5},"tokens":{"input_tokens":2,"output_tokens":5}}}`},
		{"tool_choice NONE", `{"model":"m",` + tools + `,"tool_choice":"NONE","messages":[{"role":"user","content":"hi"}]}`,
			`{"id":"mock-2","message":{"role":"assistant","content":[{"type":"text","text":"Hello from mock: hi"}]},"finish_reason":"COMPLETE","usage":{"billed_units":{"input_tokens":1,"output_tokens":4},"tokens":{"input_tokens":1,"output_tokens":4}}}`},
		{"after a tool result", `{"model":"m",` + tools + `,"messages":[{"role":"user","content":"hi"},` +
			`{"role":"assistant","tool_plan":"p","tool_calls":[{"id":"t1","type":"function","function":{"name":"search","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"t1","content":[{"type":"text","text":"found"}]}]}`,
			`{"id":"mock-3","message":{"role":"assistant","content":[{"type":"text","text":"Hello from mock: hi"}]},"finish_reason":"COMPLETE","usage":{"billed_units":{"input_tokens":2,"output_tokens":4},"tokens":{"input_tokens":2,"output_tokens":4}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if body := readAll(t, post(t, s, "/v2/chat", testKey, tt.body)); string(body) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", body, tt.want)
			}
		})
	}
}

func TestCohereStream(t *testing.T) {
	s := start(t)
	resp := post(t, s, "/v2/chat", testKey, `{"model":"command-a@chunks=2","stream":true,"messages":[{"role":"user","content":"Say hi"}]}`)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, ct)
	}
	want := []string{
		`message-start {"id":"mock-1","type":"message-start","delta":{"message":{"role":"assistant","content":[],"tool_plan":"","tool_calls":[],"citations":[]}}}`,
		`content-start {"type":"content-start","index":0,"delta":{"message":{"content":{"type":"text","text":""}}}}`,
		`content-delta {"type":"content-delta","index":0,"delta":{"message":{"content":{"text":"Hello from "}}}}`,
		`content-delta {"type":"content-delta","index":0,"delta":{"message":{"content":{"text":"mock: Say hi"}}}}`,
		`content-end {"type":"content-end","index":0}`,
		`message-end {"type":"message-end","delta":{"finish_reason":"COMPLETE","usage":{"billed_units":{"input_tokens":2,"output_tokens":5},"tokens":{"input_tokens":2,"output_tokens":5}}}}`,
	}
	if diff := cmp.Diff(want, cohereEvents(t, resp)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestCohereStreamToolNoUsage(t *testing.T) {
	s := start(t)
	s.Script(Step{NoUsage: true, Chunks: 2})
	resp := post(t, s, "/v2/chat", testKey, `{"model":"m","stream":true,"tools":[{"type":"function","function":{"name":"search"}}],"messages":[{"role":"user","content":"x"}]}`)
	want := []string{
		`message-start {"id":"mock-1","type":"message-start","delta":{"message":{"role":"assistant","content":[],"tool_plan":"","tool_calls":[],"citations":[]}}}`,
		`tool-plan-delta {"type":"tool-plan-delta","delta":{"message":{"tool_plan":"I will call search."}}}`,
		`tool-call-start {"type":"tool-call-start","index":0,"delta":{"message":{"tool_calls":{"id":"search_mock_1","type":"function","function":{"name":"search","arguments":""}}}}}`,
		`tool-call-delta {"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":{"function":{"arguments":"{\"text"}}}}}`,
		`tool-call-delta {"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":{"function":{"arguments":"\":\"x\"}"}}}}}`,
		`tool-call-end {"type":"tool-call-end","index":0}`,
		`message-end {"type":"message-end","delta":{"finish_reason":"TOOL_CALL"}}`,
	}
	if diff := cmp.Diff(want, cohereEvents(t, resp)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestCohereEmbed(t *testing.T) {
	s := start(t)
	resp := post(t, s, "/v2/embed", testKey, `{"model":"embed-v4.0","texts":["hello world","hello world","x"],"input_type":"search_document","embedding_types":["float"]}`)
	body := readAll(t, resp)
	var got struct {
		ID         string `json:"id"`
		Embeddings struct {
			Float [][]float64 `json:"float"`
		} `json:"embeddings"`
		Texts []string `json:"texts"`
		Meta  struct {
			BilledUnits struct {
				InputTokens int `json:"input_tokens"`
			} `json:"billed_units"`
		} `json:"meta"`
		ResponseType string `json:"response_type"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	f := got.Embeddings.Float
	if resp.StatusCode != 200 || len(f) != 3 || len(f[0]) != embeddingDims || !cmp.Equal(f[0], f[1]) || cmp.Equal(f[0], f[2]) ||
		len(got.Texts) != 3 || got.Meta.BilledUnits.InputTokens != 5 || got.ResponseType != "embeddings_by_type" {
		t.Errorf("status %d: %s", resp.StatusCode, body)
	}
	// NoUsage drops billed_units.
	s.Script(Step{NoUsage: true})
	if body := readAll(t, post(t, s, "/v2/embed", testKey, `{"model":"m","texts":["a"],"input_type":"search_query"}`)); bytes.Contains(body, []byte("billed_units")) {
		t.Errorf("NoUsage: %s", body)
	}
}

func TestCohereErrors(t *testing.T) {
	s := start(t)
	tests := []struct {
		name, path, key, body string
		step                  *Step
		status                int
		msg, retryAfter       string
	}{
		{name: "no key", path: "/v2/chat", body: cohereHi, status: 401, msg: "no api key supplied"},
		{name: "embed no key", path: "/v2/embed", body: `{}`, status: 401, msg: "no api key supplied"},
		{name: "bad json", path: "/v2/chat", key: testKey, body: `{"model":`, status: 400, msg: "invalid request"},
		{name: "no model", path: "/v2/chat", key: testKey, body: `{"messages":[{"role":"user","content":"x"}]}`, status: 400, msg: "model is required"},
		{name: "no messages", path: "/v2/chat", key: testKey, body: `{"model":"m","messages":[]}`, status: 400, msg: "messages must not be empty"},
		{name: "system later", path: "/v2/chat", key: testKey, body: `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"system","content":"s"}]}`, status: 400, msg: "system turn must be the first"},
		{name: "tool without id", path: "/v2/chat", key: testKey, body: `{"model":"m","messages":[{"role":"tool","content":"x"}]}`, status: 400, msg: "must have a tool_call_id"},
		{name: "unknown role", path: "/v2/chat", key: testKey, body: `{"model":"m","messages":[{"role":"developer","content":"x"}]}`, status: 400, msg: `unknown role "developer"`},
		{name: "tool_choice", path: "/v2/chat", key: testKey, body: `{"model":"m","tool_choice":"auto","messages":[{"role":"user","content":"x"}]}`, status: 400, msg: "tool_choice must be one of REQUIRED, NONE"},
		{name: "bad directive", path: "/v2/chat", key: testKey, body: `{"model":"m@nope=1","messages":[{"role":"user","content":"x"}]}`, status: 400, msg: "unknown mock directive"},
		{name: "embed no input_type", path: "/v2/embed", key: testKey, body: `{"model":"m","texts":["a"]}`, status: 400, msg: "valid input_type must be provided"},
		{name: "embed no texts", path: "/v2/embed", key: testKey, body: `{"model":"m","texts":[],"input_type":"search_document"}`, status: 400, msg: "texts must not be empty"},
		{name: "embed too many", path: "/v2/embed", key: testKey, body: `{"model":"m","input_type":"search_document","texts":[` + strings.Repeat(`"a",`, cohereMaxTexts) + `"a"]}`, status: 400, msg: "at most 96"},
		{name: "embed int8", path: "/v2/embed", key: testKey, body: `{"model":"m","texts":["a"],"input_type":"search_document","embedding_types":["int8"]}`, status: 400, msg: `only float embeddings, not "int8"`},
		{name: "429 step", step: &Step{Status: 429, RetryAfter: "7"}, path: "/v2/chat", body: cohereHi, status: 429, msg: "Trial key", retryAfter: "7"},
		{name: "500 step embed", step: &Step{Status: 500}, path: "/v2/embed", body: `{}`, status: 500, msg: "internal server error"},
		{name: "404 directive", path: "/v2/chat", key: testKey, body: `{"model":"m@status=404","messages":[{"role":"user","content":"x"}]}`, status: 404, msg: "model not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.step != nil {
				s.Script(*tt.step)
			}
			resp := post(t, s, tt.path, tt.key, tt.body)
			got := decode[cohereError](t, readAll(t, resp))
			if resp.StatusCode != tt.status || got.ID == "" || !strings.Contains(got.Message, tt.msg) ||
				resp.Header.Get("Retry-After") != tt.retryAfter {
				t.Errorf("status %d, %+v, Retry-After %q", resp.StatusCode, got, resp.Header.Get("Retry-After"))
			}
		})
	}
}

func TestCohereResetAndLatency(t *testing.T) {
	s := start(t)
	s.Script(Step{ResetAfter: 1, Latency: 30 * time.Millisecond})
	began := time.Now()
	resp := post(t, s, "/v2/chat", testKey, `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`)
	events := cohereEvents(t, resp)
	if time.Since(began) < 30*time.Millisecond {
		t.Error("latency not honoured")
	}
	// message-start, content-start and one delta; then the cut.
	if len(events) != 3 || !strings.HasPrefix(events[2], "content-delta ") {
		t.Errorf("events %q", events)
	}
}

func FuzzCohereRequest(f *testing.F) {
	f.Add("/v2/chat", []byte(cohereHi))
	f.Add("/v2/chat", []byte(`{"model":"m","stream":true,"tools":[{"function":{"name":"t"}}],"messages":[{"role":"user","content":[{"type":"text","text":"a\"b"}]}]}`))
	f.Add("/v2/embed", []byte(`{"model":"m","texts":["a"],"input_type":"search_document"}`))
	s := New(Options{MaxRecorded: -1})
	h := s.Handler()
	f.Fuzz(func(t *testing.T, path string, body []byte) {
		if bytes.IndexByte(body, '@') >= 0 {
			t.Skip("directives can wait for hours; parseModel has its own fuzz target")
		}
		if path != "/v2/embed" {
			path = "/v2/chat"
		}
		var ctx fasthttp.RequestCtx
		ctx.Init(&fasthttp.Request{}, nil, nil)
		ctx.Request.Header.SetMethod("POST")
		ctx.Request.SetRequestURI(path)
		ctx.Request.Header.Set("Authorization", "Bearer k")
		ctx.Request.SetBody(body)
		h(&ctx)
		if ctx.Response.IsBodyStream() {
			ctx.Response.Reset()
			return
		}
		if !json.Valid(ctx.Response.Body()) {
			t.Errorf("invalid JSON answer %q", ctx.Response.Body())
		}
	})
}
