package proxy

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/openaischema"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// TestResponsesAnswerGolden encodes the OpenAI answers of
// testdata/responses/answer_*.json as Responses response objects, each
// valid against OpenAI's Response schema.
func TestResponsesAnswerGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/responses/answer_*.json")
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			in, err := os.ReadFile(f)
			must(t, err)
			d := new(responsesDoor)
			d.echo.Metadata = json.RawMessage(`{"team":"a"}`)
			out := d.answer(bytes.TrimSpace(in))
			openaischema.Check(t, openaischema.Response, "the response", out)
			var ind bytes.Buffer
			must(t, json.Indent(&ind, out, "", "  "))
			golden(t, strings.TrimSuffix(f, ".json")+".response", append(ind.Bytes(), '\n'))
		})
	}
}

// TestResponsesStreamGolden translates the OpenAI chunk streams of
// testdata/responses/stream_*.chunks into whole Responses event streams;
// a "cut" stream ends with an error event. Every event is valid against
// OpenAI's ResponseStreamEvent schema, named by its type, and numbered in
// sequence.
func TestResponsesStreamGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/responses/stream_*.chunks")
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			in, err := os.ReadFile(f)
			must(t, err)
			d := new(responsesDoor)
			var out []byte
			for _, line := range bytes.Split(bytes.TrimSpace(in), []byte("\n")) {
				out = d.appendChunk(out, line)
			}
			var end *apierr.Error
			if strings.Contains(f, "cut") {
				end = &apierr.Error{Status: http.StatusBadGateway, Type: apierr.TypeAPI, Code: "upstream_error", Message: "the upstream stream broke"}
			}
			out = d.appendEnd(out, end)
			checkResponsesStream(t, out)
			golden(t, strings.TrimSuffix(f, ".chunks")+".events", out)
		})
	}
}

// checkResponsesStream checks that out is well-formed SSE of Responses
// events: each event's name is its data's type, the data is a valid
// ResponseStreamEvent and sequence numbers count from 0. It returns the
// event types.
func checkResponsesStream(t *testing.T, out []byte) []string {
	t.Helper()
	var types []string
	for i, ev := range bytes.Split(bytes.TrimSuffix(out, []byte("\n\n")), []byte("\n\n")) {
		name, data, ok := bytes.Cut(ev, []byte("\n"))
		if !ok || !bytes.HasPrefix(name, []byte("event: ")) || !bytes.HasPrefix(data, []byte("data: ")) {
			t.Fatalf("malformed event %q", ev)
		}
		data = data[len("data: "):]
		var p fastjson.Parser
		v, err := p.ParseBytes(data)
		if err != nil {
			t.Fatalf("event data %q: %v", data, err)
		}
		typ := string(v.GetStringBytes("type"))
		if typ != string(name[len("event: "):]) {
			t.Errorf("event %s has type %s", name, typ)
		}
		if n := v.GetInt("sequence_number"); n != i {
			t.Errorf("event %d (%s) has sequence_number %d", i, typ, n)
		}
		openaischema.Check(t, openaischema.ResponseStreamEvent, typ, data)
		types = append(types, typ)
	}
	return types
}

func TestResponsesDoorDecode(t *testing.T) {
	var p fastjson.Parser
	d := new(responsesDoor)
	in, e := d.decode(&p, []byte(`{"model":"openai/gpt-4o-mini","max_output_tokens":20,"stream":true,"instructions":"s","input":"hi","temperature":0.5}`), llm.OpChat)
	if e != nil {
		t.Fatal(e)
	}
	if in.model != "openai/gpt-4o-mini" || !in.stream || !in.includeUsage || in.maxTokens != 20 || !bytes.Contains(in.body, []byte(`"role":"system"`)) {
		t.Errorf("got %+v %s", in, in.body)
	}
	if string(d.echo.Temperature) != "0.5" || string(d.echo.Instructions) != `"s"` {
		t.Errorf("echo %+v", d.echo)
	}
	for _, tt := range []struct{ body, code, param string }{
		{`{"model":"m","input":"x","previous_response_id":"resp_1"}`, apierr.CodeUnsupportedFeature, "previous_response_id"},
		{`{"model":"m","input":"x","store":true}`, apierr.CodeUnsupportedFeature, "store"},
		{`{"model":"m","input":"x","tools":[{"type":"web_search"}]}`, apierr.CodeUnsupportedFeature, "tools[0].type"},
		{`{"model":"m","input":"x","api_base":"http://x"}`, apierr.CodeInvalidRequest, "api_base"},
		{`{"model":"m","input":"x","input":"y"}`, apierr.CodeInvalidJSON, ""},
		{`{"model":"m","input":"x","max_output_tokens":0}`, apierr.CodeInvalidRequest, "max_output_tokens"},
		{`{"model":"m","input":5}`, apierr.CodeInvalidRequest, ""},
		{`{"model":"m"}`, apierr.CodeInvalidRequest, ""},
	} {
		_, e := new(responsesDoor).decode(&p, []byte(tt.body), llm.OpChat)
		if e == nil || e.Status != 400 || e.Code != tt.code || e.Param != tt.param {
			t.Errorf("%s: got %+v, want 400 %s %s", tt.body, e, tt.code, tt.param)
		}
	}
}

const compatResponsesPath = "/v1/" + testTenant + "/" + testGateway + "/compat/responses"

// TestResponsesDoor drives /compat/responses through the whole pipeline
// to the mock's OpenAI wire: the upstream receives an OpenAI chat body,
// the client reads a Responses response, its events, and errors of §3.
func TestResponsesDoor(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	hdr := http.Header{"Authorization": {"Bearer " + h.token}, "Content-Type": {"application/json"}}
	body := `{"model":"openai/gpt-4o-mini","max_output_tokens":64,"instructions":"Be brief.","input":[{"role":"user","content":[{"type":"input_text","text":"say hello"}]}]}`

	t.Run("answer", func(t *testing.T) {
		before := len(h.mock.Requests())
		resp, b := h.do("POST", compatResponsesPath, hdr, body)
		wantStatus(t, resp, b, 200)
		openaischema.Check(t, openaischema.Response, "the response", b)
		var r struct {
			Object, Status, Model string
			Output                []struct {
				Type    string
				Content []struct{ Type, Text string }
			}
			Usage struct {
				InputTokens  int64 `json:"input_tokens"`
				OutputTokens int64 `json:"output_tokens"`
			}
		}
		must(t, json.Unmarshal(b, &r))
		if r.Object != "response" || r.Status != "completed" || len(r.Output) != 1 || r.Output[0].Type != "message" ||
			len(r.Output[0].Content) != 1 || !strings.Contains(r.Output[0].Content[0].Text, "say hello") || r.Usage.OutputTokens == 0 || r.Usage.InputTokens == 0 {
			t.Errorf("answer %s", b)
		}
		reqs := h.mock.Requests()[before:]
		if len(reqs) != 1 || reqs[0].Path != "/v1/chat/completions" {
			t.Fatalf("upstream requests %+v", reqs)
		}
		var sent struct {
			Model     string
			MaxTokens int64 `json:"max_tokens"`
			Messages  []struct{ Role string }
		}
		must(t, json.Unmarshal(reqs[0].Body, &sent))
		if sent.Model != "gpt-4o-mini" || sent.MaxTokens != 64 || len(sent.Messages) != 2 || sent.Messages[0].Role != "system" {
			t.Errorf("upstream body %s", reqs[0].Body)
		}
		rec := h.record(resp.Header.Get(RequestIDHeader))
		if rec.Status != 200 || rec.Provider != "openai" || rec.TokensOut == 0 || rec.Operation != "responses" {
			t.Errorf("record %+v", rec)
		}
	})

	t.Run("stream", func(t *testing.T) {
		resp, b := h.do("POST", compatResponsesPath, hdr, strings.Replace(body, `"max_output_tokens":64`, `"max_output_tokens":64,"stream":true`, 1))
		wantStatus(t, resp, b, 200)
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			t.Errorf("content type %q", ct)
		}
		types := checkResponsesStream(t, b)
		var names []string
		for _, n := range types {
			if len(names) == 0 || names[len(names)-1] != n {
				names = append(names, n)
			}
		}
		want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
			"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
		if strings.Join(names, ",") != strings.Join(want, ",") {
			t.Errorf("events %v, want %v\n%s", names, want, b)
		}
		if !bytes.Contains(b, []byte(`"output_tokens":`)) || bytes.Contains(b, []byte("[DONE]")) {
			t.Errorf("stream %s", b)
		}
	})

	t.Run("stream cut", func(t *testing.T) {
		resp, b := h.do("POST", compatResponsesPath, hdr, `{"model":"openai/gpt-4o-mini@chunks=3@reset=1","stream":true,"input":"hi"}`)
		wantStatus(t, resp, b, 200)
		types := checkResponsesStream(t, b)
		if len(types) == 0 || types[len(types)-1] != "error" {
			t.Errorf("events %v, want an error last\n%s", types, b)
		}
	})

	t.Run("tool call", func(t *testing.T) {
		h.mock.Script(providertest.Step{Body: `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"w","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13}}`})
		resp, b := h.do("POST", compatResponsesPath, hdr, `{"model":"openai/gpt-4o-mini","input":"weather?","tools":[{"type":"function","name":"w","parameters":{"type":"object"}}]}`)
		wantStatus(t, resp, b, 200)
		openaischema.Check(t, openaischema.Response, "the response", b)
		if !strings.Contains(string(b), `{"type":"function_call","id":"fc_call_1","call_id":"call_1","name":"w","arguments":"{\"city\":\"Paris\"}","status":"completed"}`) {
			t.Errorf("answer %s", b)
		}
	})

	for _, tt := range []struct {
		name   string
		hdr    http.Header
		body   string
		status int
		code   string
	}{
		{"no token", http.Header{"Content-Type": {"application/json"}}, body, 401, apierr.CodeMissingToken},
		{"unknown model", hdr, strings.Replace(body, "openai/gpt-4o-mini", "nosuch", 1), 400, apierr.CodeUnknownModel},
		{"stateful", hdr, strings.Replace(body, `"max_output_tokens":64`, `"max_output_tokens":64,"previous_response_id":"resp_1"`, 1), 400, apierr.CodeUnsupportedFeature},
		{"built-in tool", hdr, strings.Replace(body, `"max_output_tokens":64`, `"max_output_tokens":64,"tools":[{"type":"file_search"}]`, 1), 400, apierr.CodeUnsupportedFeature},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := h.do("POST", compatResponsesPath, tt.hdr, tt.body)
			wantStatus(t, resp, b, tt.status)
			openaischema.Check(t, openaischema.Error, "the error", b)
			var got struct{ Error struct{ Code string } }
			must(t, json.Unmarshal(b, &got))
			if got.Error.Code != tt.code {
				t.Errorf("error %s, want %s", b, tt.code)
			}
		})
	}

	t.Run("upstream rate limit", func(t *testing.T) {
		resp, b := h.do("POST", compatResponsesPath, hdr, strings.Replace(body, "gpt-4o-mini", "gpt-4o-mini@status=429", 1))
		if resp.StatusCode != 429 {
			t.Errorf("got %d %s", resp.StatusCode, b)
		}
	})
}

// TestResponsesDoorCache: a cached answer is served again in the door's
// shape, streamed or not.
func TestResponsesDoorCache(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: cacheOn(300)})
	hdr := http.Header{"Authorization": {"Bearer " + h.token}, "Content-Type": {"application/json"}}
	for _, stream := range []string{"false", "true"} {
		body := `{"model":"openai/gpt-4o-mini","stream":` + stream + `,"input":"cache me"}`
		_, first := h.do("POST", compatResponsesPath, hdr, body)
		resp, b := h.do("POST", compatResponsesPath, hdr, body)
		wantStatus(t, resp, b, 200)
		wantCache(t, resp, "HIT")
		if stream == "true" {
			checkResponsesStream(t, b)
		} else {
			openaischema.Check(t, openaischema.Response, "the response", b)
		}
		if !strings.Contains(string(b), "Hello from mock") {
			t.Errorf("stream %s: hit %s\nfirst %s", stream, b, first)
		}
	}
}

// FuzzResponsesDoorDecode: client bytes on /compat/responses never panic
// the door, a refusal is a 400 of the gateway's codes, and what is
// accepted hands the pipeline a chat body that the chat door accepts.
func FuzzResponsesDoorDecode(f *testing.F) {
	files, _ := filepath.Glob("../internal/llm/testdata/responses/*.json")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && !strings.HasSuffix(p, ".openai.json") {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"model":"m","input":"x","store":true}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		checkDoorDecode(t, new(responsesDoor).decode, body, llm.OpChat)
	})
}

// FuzzResponsesStream: whatever chunks a provider relays, the door writes
// well-formed events, each valid JSON with its type and sequence number.
func FuzzResponsesStream(f *testing.F) {
	files, _ := filepath.Glob("testdata/responses/stream_*.chunks")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		d := new(responsesDoor)
		var out []byte
		for _, line := range bytes.Split(in, []byte("\n")) {
			out = d.appendChunk(out, line)
		}
		out = d.appendEnd(out, nil)
		for i, ev := range bytes.Split(bytes.TrimSuffix(out, []byte("\n\n")), []byte("\n\n")) {
			_, data, ok := bytes.Cut(ev, []byte("\ndata: "))
			var p fastjson.Parser
			v, err := p.ParseBytes(data)
			if !ok || err != nil || v.GetInt("sequence_number") != i || len(v.GetStringBytes("type")) == 0 {
				t.Fatalf("event %d %q", i, ev)
			}
		}
	})
}
