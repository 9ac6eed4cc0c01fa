package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// The Messages door's translation of what the OpenAI chat wire between
// the door and the codecs does not carry: tool results' is_error,
// anthropic-beta, the stop sequence that matched, cache writes, and
// cache_control as Bedrock cache points.

// extrasHeader is a Messages client's headers.
func extrasHeader(h *harness) http.Header {
	return http.Header{"X-Api-Key": {h.token}, "Content-Type": {"application/json"}, "Anthropic-Version": {"2023-06-01"}}
}

// withStream returns body with "stream":true.
func withStream(body string) string {
	return strings.Replace(body, `{"model"`, `{"stream":true,"model"`, 1)
}

// extrasEvent returns the data of the first event named name of an
// Anthropic event stream.
func extrasEvent(t *testing.T, stream []byte, name string) []byte {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(nil, 1<<20)
	found := false
	for sc.Scan() {
		line := sc.Text()
		if line == "event: "+name {
			found = true
		} else if found && strings.HasPrefix(line, "data: ") {
			return []byte(strings.TrimPrefix(line, "data: "))
		}
	}
	t.Fatalf("no %s event in\n%s", name, stream)
	return nil
}

// TestMessagesToolErrorCarried: a tool_result with is_error reaches
// Anthropic as is_error true and Bedrock as toolResult status "error"; a
// wire without the flag (OpenAI) gets the result's content unchanged.
func TestMessagesToolErrorCarried(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.addNativeProviders()
	body := func(model string) string {
		return `{"model":"` + model + `","max_tokens":64,"messages":[{"role":"user","content":"read a.txt"},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"tu_1","name":"read","input":{"path":"a.txt"}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu_1","content":"ENOENT: no such file","is_error":true}]}],` +
			`"tools":[{"name":"read","input_schema":{"type":"object"}}]}`
	}
	for _, tt := range []struct{ name, model, want, not string }{
		{"anthropic", "anthropic/claude-sonnet-4-5",
			`{"type":"tool_result","tool_use_id":"tu_1","content":"ENOENT: no such file","is_error":true}`, ""},
		{"bedrock", "bedrock/anthropic.claude-sonnet-4-5-v1:0",
			`{"toolResult":{"toolUseId":"tu_1","content":[{"text":"ENOENT: no such file"}],"status":"error"}}`, ""},
		{"openai", "openai/gpt-4o-mini",
			`{"role":"tool","content":"ENOENT: no such file","tool_call_id":"tu_1"}`, "is_error"},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: "", true: "/stream"}[stream], func(t *testing.T) {
				b := body(tt.model)
				if stream {
					b = withStream(b)
				}
				before := len(h.mock.Requests())
				resp, out := h.do("POST", messagesPath, extrasHeader(h), b)
				wantStatus(t, resp, out, 200)
				reqs := h.mock.Requests()[before:]
				if len(reqs) != 1 {
					t.Fatalf("upstream requests %+v", reqs)
				}
				sent := string(reqs[0].Body)
				if !strings.Contains(sent, tt.want) {
					t.Errorf("upstream body lacks %s:\n%s", tt.want, sent)
				}
				if tt.not != "" && strings.Contains(sent, tt.not) {
					t.Errorf("upstream body holds %s:\n%s", tt.not, sent)
				}
			})
		}
	}
}

// TestMessagesAnthropicBeta: the client's anthropic-beta reaches an
// Anthropic target as its header and Claude on Bedrock as
// additionalModelRequestFields.anthropic_beta (the betas Bedrock knows);
// other providers get neither.
func TestMessagesAnthropicBeta(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.addNativeProviders()
	hdr := extrasHeader(h)
	beta := "claude-code-20250219,interleaved-thinking-2025-05-14"
	hdr.Set("Anthropic-Beta", beta)
	for _, tt := range []struct{ name, model, header, body string }{
		{"anthropic", "anthropic/claude-sonnet-4-5", beta, ""},
		{"bedrock", "bedrock/anthropic.claude-sonnet-4-5-v1:0", "", `"additionalModelRequestFields":{"anthropic_beta":["interleaved-thinking-2025-05-14"]}`},
		{"openai", "openai/gpt-4o-mini", "", ""},
		{"gemini", "google/gemini-2.5-flash", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := len(h.mock.Requests())
			resp, out := h.do("POST", messagesPath, hdr, `{"model":"`+tt.model+`","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`)
			wantStatus(t, resp, out, 200)
			reqs := h.mock.Requests()[before:]
			if len(reqs) != 1 {
				t.Fatalf("upstream requests %+v", reqs)
			}
			if got := reqs[0].Header.Get("Anthropic-Beta"); got != tt.header {
				t.Errorf("upstream Anthropic-Beta = %q, want %q", got, tt.header)
			}
			if tt.body != "" && !strings.Contains(string(reqs[0].Body), tt.body) {
				t.Errorf("upstream body lacks %s:\n%s", tt.body, reqs[0].Body)
			}
			if tt.name != "bedrock" && strings.Contains(string(reqs[0].Body), "anthropic_beta") {
				t.Errorf("upstream body holds anthropic_beta:\n%s", reqs[0].Body)
			}
		})
	}
}

// TestMessagesStopSequence: when the upstream says which stop sequence
// ended the answer (Anthropic, Claude on Bedrock), the door answers
// stop_reason "stop_sequence" with it, plain and streamed
// (message_delta).
func TestMessagesStopSequence(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.addNativeProviders()
	for _, model := range []string{"anthropic/claude-sonnet-4-5", "bedrock/anthropic.claude-sonnet-4-5-v1:0"} {
		body := `{"model":"` + model + `","max_tokens":64,"stop_sequences":["STOP","never"],"messages":[{"role":"user","content":"one two STOP three"}]}`
		t.Run(model, func(t *testing.T) {
			resp, out := h.do("POST", messagesPath, extrasHeader(h), body)
			wantStatus(t, resp, out, 200)
			var got struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
				StopReason   string  `json:"stop_reason"`
				StopSequence *string `json:"stop_sequence"`
			}
			must(t, json.Unmarshal(out, &got))
			if got.StopReason != "stop_sequence" || got.StopSequence == nil || *got.StopSequence != "STOP" {
				t.Errorf("stop_reason %q stop_sequence %v; answer %s", got.StopReason, got.StopSequence, out)
			}
			if len(got.Content) != 1 || strings.Contains(got.Content[0].Text, "three") {
				t.Errorf("the answer went past the stop sequence: %s", out)
			}
		})
		t.Run(model+"/stream", func(t *testing.T) {
			resp, out := h.do("POST", messagesPath, extrasHeader(h), withStream(body))
			wantStatus(t, resp, out, 200)
			delta := extrasEvent(t, out, "message_delta")
			if !bytes.Contains(delta, []byte(`"delta":{"stop_reason":"stop_sequence","stop_sequence":"STOP"}`)) {
				t.Errorf("message_delta %s", delta)
			}
		})
	}
	// A provider that does not say which sequence matched: end_turn.
	resp, out := h.do("POST", messagesPath, extrasHeader(h),
		`{"model":"openai/gpt-4o-mini","max_tokens":64,"stop_sequences":["STOP"],"messages":[{"role":"user","content":"hi"}]}`)
	wantStatus(t, resp, out, 200)
	if !bytes.Contains(out, []byte(`"stop_reason":"end_turn","stop_sequence":null`)) {
		t.Errorf("openai answer %s", out)
	}
}

// TestMessagesCacheUsage: cache_control breakpoints reach Anthropic as
// they are and Claude on Bedrock as cachePoint blocks (system, messages
// and tools); the first request writes the prompt cache and the door
// reports cache_creation_input_tokens, the next reads it
// (cache_read_input_tokens), plain and streamed (message_delta).
func TestMessagesCacheUsage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.addNativeProviders()
	for _, tt := range []struct{ name, model, sent string }{
		{"anthropic", "anthropic/claude-sonnet-4-5", `"tools":[{"name":"read","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}]`},
		{"bedrock", "bedrock/anthropic.claude-sonnet-4-5-v1:0", `"tools":[{"toolSpec":{"name":"read","inputSchema":{"json":{"type":"object"}}}},{"cachePoint":{"type":"default"}}]`},
	} {
		for _, stream := range []bool{false, true} {
			name := tt.name + map[bool]string{false: "", true: "/stream"}[stream]
			body := `{"model":"` + tt.model + `","max_tokens":64,` +
				`"system":[{"type":"text","text":"You are a careful coding agent for ` + name + ` with long rules","cache_control":{"type":"ephemeral"}}],` +
				`"tools":[{"name":"read","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}],` +
				`"messages":[{"role":"user","content":[{"type":"text","text":"the repository is large","cache_control":{"type":"ephemeral"}},{"type":"text","text":"what is in it?"}]}]}`
			if stream {
				body = withStream(body)
			}
			t.Run(name, func(t *testing.T) {
				var usages [2]extrasUsage
				for i := range usages {
					before := len(h.mock.Requests())
					resp, out := h.do("POST", messagesPath, extrasHeader(h), body)
					wantStatus(t, resp, out, 200)
					sent := string(h.mock.Requests()[before].Body)
					if !strings.Contains(sent, tt.sent) {
						t.Errorf("upstream body lacks %s:\n%s", tt.sent, sent)
					}
					if tt.name == "bedrock" && strings.Count(sent, `{"cachePoint":{"type":"default"}}`) != 3 {
						t.Errorf("upstream body has not 3 cache points:\n%s", sent)
					}
					if !stream {
						var a struct{ Usage extrasUsage }
						must(t, json.Unmarshal(out, &a))
						usages[i] = a.Usage
						continue
					}
					// message_start holds the gateway's count of the
					// prompt (the provider's comes at the end of a
					// translated stream); message_delta the provider's.
					var delta struct{ Usage extrasUsage }
					must(t, json.Unmarshal(extrasEvent(t, out, "message_delta"), &delta))
					usages[i] = delta.Usage
				}
				if u := usages[0]; u.CacheCreation == 0 || u.CacheRead != 0 || u.Input == 0 {
					t.Errorf("first request's usage %+v: want a cache write", u)
				}
				if u := usages[1]; u.CacheRead != usages[0].CacheCreation || u.CacheCreation != 0 || u.Input != usages[0].Input {
					t.Errorf("second request's usage %+v after %+v: want the write read back", u, usages[0])
				}
			})
		}
	}
}

// extrasUsage is the usage of a Messages answer.
type extrasUsage struct {
	Input         int64 `json:"input_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
	Output        int64 `json:"output_tokens"`
}
