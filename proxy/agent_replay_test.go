package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
)

// agentBlock is one content block of an Anthropic message, the fields a
// replayed agent session uses.
type agentBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	Thinking     string          `json:"thinking"`
	Signature    string          `json:"signature"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	Content      json.RawMessage `json:"content"`
	IsError      bool            `json:"is_error"`
	CacheControl json.RawMessage `json:"cache_control"`
}

type agentMessage struct {
	Role    string       `json:"role"`
	Content []agentBlock `json:"content"`
}

// toolResultText is the text of a tool_result's content: a string or
// an array of text blocks.
func toolResultText(c json.RawMessage) string {
	var s string
	if json.Unmarshal(c, &s) == nil {
		return s
	}
	var blocks []agentBlock
	_ = json.Unmarshal(c, &blocks)
	var b strings.Builder
	for _, x := range blocks {
		b.WriteString(x.Text)
	}
	return b.String()
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// TestAgentReplay (issue 14): a recorded 10-turn Claude Code-style agent
// session (testdata/agent-session/session.json: a cached system prompt,
// three tools with cache_control on the last, assistant turns with
// signed thinking, text and tool_use, user turns with tool_result blocks,
// one is_error, two with cache_control) is replayed turn by turn, each
// prefix ending on a user turn sent streamed and not, through
// /compat/v1/messages to Anthropic and to Claude on Bedrock and through
// the native /anthropic/v1/messages. Every request is a 200 with a
// well-formed Anthropic answer or event stream, and the mock provider
// receives every earlier turn's content blocks unchanged: thinking text
// and signature, tool_use ids, names and inputs, tool_result contents
// and is_error, cache_control (on Bedrock as cachePoint blocks).
func TestAgentReplay(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	h.addNativeProviders()
	hdr := http.Header{"X-Api-Key": {h.token}, "Content-Type": {"application/json"}, "Anthropic-Version": {"2023-06-01"}}
	raw, err := os.ReadFile("testdata/agent-session/session.json")
	must(t, err)
	var session map[string]json.RawMessage
	must(t, json.Unmarshal(raw, &session))
	var turns []json.RawMessage
	must(t, json.Unmarshal(session["messages"], &turns))
	if len(turns) != 21 {
		t.Fatalf("session has %d messages, want 21 (10 assistant turns)", len(turns))
	}
	targets := []struct {
		name, path, model string
		check             func(t *testing.T, sent []agentMessage, got []byte)
	}{
		{"compat/anthropic", messagesPath, "anthropic/claude-sonnet-4-5", checkAnthropicReplay},
		{"compat/bedrock", messagesPath, "bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0", checkBedrockReplay},
		{"native/anthropic", nativeMessagesPath, "claude-sonnet-4-5", nil},
	}
	for k := 1; k <= 10; k++ {
		prefix := turns[:2*k+1]
		var sent []agentMessage
		for _, m := range prefix {
			var am agentMessage
			must(t, json.Unmarshal(m, &am))
			sent = append(sent, am)
		}
		for _, tg := range targets {
			for _, stream := range []bool{false, true} {
				req := make(map[string]json.RawMessage, len(session)+1)
				for key, v := range session {
					req[key] = v
				}
				req["messages"], _ = json.Marshal(prefix)
				req["model"], _ = json.Marshal(tg.model)
				req["stream"], _ = json.Marshal(stream)
				body, err := json.Marshal(req)
				must(t, err)
				before := len(h.mock.Requests())
				resp, out := h.do("POST", tg.path, hdr, string(body))
				name := fmt.Sprintf("%s/turn%02d", tg.name, k)
				if stream {
					name += "/stream"
				}
				if resp.StatusCode != 200 {
					t.Fatalf("%s: status %d %s", name, resp.StatusCode, out)
				}
				checkAnthropicOutput(t, name, stream, out)
				reqs := h.mock.Requests()[before:]
				if len(reqs) != 1 {
					t.Fatalf("%s: %d upstream requests", name, len(reqs))
				}
				if tg.check == nil {
					// The native door passes the body through untouched.
					if !jsonEqual(reqs[0].Body, body) {
						t.Errorf("%s: native upstream body differs:\n%s\nsent\n%s", name, reqs[0].Body, body)
					}
					continue
				}
				t.Run(name, func(t *testing.T) { tg.check(t, sent, reqs[0].Body) })
			}
		}
	}
}

// checkAnthropicOutput checks a well-formed Anthropic message, or event
// stream from message_start to message_stop.
func checkAnthropicOutput(t *testing.T, name string, stream bool, out []byte) {
	t.Helper()
	if stream {
		checkEventStream(t, out)
		if !bytes.HasPrefix(out, []byte("event: message_start\n")) || !bytes.HasSuffix(bytes.TrimSpace(out), []byte(`{"type":"message_stop"}`)) ||
			bytes.Contains(out, []byte("event: error")) {
			t.Errorf("%s: stream %s", name, out)
		}
		return
	}
	var msg struct {
		Type, Role string
		Content    []agentBlock
		StopReason string `json:"stop_reason"`
	}
	must(t, json.Unmarshal(out, &msg))
	if msg.Type != "message" || msg.Role != "assistant" || len(msg.Content) == 0 || msg.StopReason == "" {
		t.Errorf("%s: answer %s", name, out)
	}
}

// checkAnthropicReplay: the translating door's body to Anthropic holds
// every block as sent: tool_result.is_error and the cache_control on a
// tool included.
func checkAnthropicReplay(t *testing.T, sent []agentMessage, got []byte) {
	var body struct {
		System []agentBlock
		Tools  []struct {
			Name         string
			CacheControl json.RawMessage `json:"cache_control"`
		}
		Messages []agentMessage
	}
	must(t, json.Unmarshal(got, &body))
	if len(body.System) != 1 || !jsonEqual(body.System[0].CacheControl, []byte(`{"type":"ephemeral"}`)) {
		t.Errorf("system %+v, want the cached system prompt", body.System)
	}
	if len(body.Tools) != 3 || body.Tools[2].Name != "edit_file" || !jsonEqual(body.Tools[2].CacheControl, []byte(`{"type":"ephemeral"}`)) {
		t.Errorf("tools %+v: want 3, the last with its cache_control", body.Tools)
	}
	if len(body.Messages) != len(sent) {
		t.Fatalf("%d messages upstream, sent %d", len(body.Messages), len(sent))
	}
	for i, want := range sent {
		m := body.Messages[i]
		if m.Role != want.Role || len(m.Content) != len(want.Content) {
			t.Fatalf("message %d: %+v, sent %+v", i, m, want)
		}
		for j, w := range want.Content {
			g := m.Content[j]
			ok := g.Type == w.Type
			switch w.Type {
			case "thinking":
				ok = ok && g.Thinking == w.Thinking && g.Signature == w.Signature
			case "text":
				ok = ok && g.Text == w.Text && string(g.CacheControl) == string(w.CacheControl)
			case "tool_use":
				ok = ok && g.ID == w.ID && g.Name == w.Name && jsonEqual(g.Input, w.Input)
			case "tool_result":
				// A cache_control on the tool_result arrives on the
				// text block closing its content, the same cache
				// breakpoint.
				ok = ok && g.ToolUseID == w.ToolUseID && toolResultText(g.Content) == toolResultText(w.Content) &&
					g.IsError == w.IsError && g.CacheControl == nil
				if w.CacheControl != nil {
					var inner []agentBlock
					_ = json.Unmarshal(g.Content, &inner)
					ok = ok && len(inner) > 0 && jsonEqual(inner[len(inner)-1].CacheControl, w.CacheControl)
				}
			}
			if !ok {
				t.Errorf("message %d block %d: got %+v, sent %+v", i, j, g, w)
			}
		}
	}
}

// checkBedrockReplay: the Converse body holds every block as its
// Converse counterpart (reasoningContent, text, toolUse, toolResult with
// status "error" for is_error), and a cachePoint after each block, the
// system prompt and the tool that had a cache_control.
func checkBedrockReplay(t *testing.T, sent []agentMessage, got []byte) {
	type cachePoint *struct{ Type string }
	var body struct {
		System []struct {
			Text       string
			CachePoint cachePoint
		}
		ToolConfig struct {
			Tools []struct {
				ToolSpec   *struct{ Name string }
				CachePoint cachePoint
			}
		}
		Messages []struct {
			Role    string
			Content []struct {
				CachePoint       cachePoint
				Text             *string
				ReasoningContent *struct {
					ReasoningText struct{ Text, Signature string }
				}
				ToolUse *struct {
					ToolUseID string
					Name      string
					Input     json.RawMessage
				}
				ToolResult *struct {
					ToolUseID string
					Content   []struct{ Text string }
					Status    string
				}
			}
		}
	}
	must(t, json.Unmarshal(got, &body))
	if len(body.System) != 2 || !strings.HasPrefix(body.System[0].Text, "You are Claude Code") || body.System[1].CachePoint == nil {
		t.Errorf("system %+v, want the prompt and a cachePoint", body.System)
	}
	if tools := body.ToolConfig.Tools; len(tools) != 4 || tools[2].ToolSpec == nil || tools[2].ToolSpec.Name != "edit_file" || tools[3].CachePoint == nil {
		t.Errorf("tools %+v, want 3 and a cachePoint after edit_file", tools)
	}
	if len(body.Messages) != len(sent) {
		t.Fatalf("%d messages upstream, sent %d", len(body.Messages), len(sent))
	}
	for i, want := range sent {
		m := body.Messages[i]
		content := m.Content[:0:0]
		for j, g := range m.Content {
			if g.CachePoint == nil {
				content = append(content, g)
				continue
			}
			// A cachePoint follows the block that had the cache_control.
			if k := len(content) - 1; k < 0 || j == 0 || want.Content[k].CacheControl == nil {
				t.Errorf("message %d: a cachePoint at %d where no block asked for one", i, j)
			}
		}
		if m.Role != want.Role || len(content) != len(want.Content) {
			t.Fatalf("message %d: %+v, sent %+v", i, m, want)
		}
		points := 0
		for _, w := range want.Content {
			if w.CacheControl != nil {
				points++
			}
		}
		if len(m.Content)-len(content) != points {
			t.Errorf("message %d: %d cachePoints, want %d", i, len(m.Content)-len(content), points)
		}
		for j, w := range want.Content {
			g := content[j]
			var ok bool
			switch w.Type {
			case "thinking":
				ok = g.ReasoningContent != nil && g.ReasoningContent.ReasoningText.Text == w.Thinking &&
					g.ReasoningContent.ReasoningText.Signature == w.Signature
			case "text":
				ok = g.Text != nil && *g.Text == w.Text
			case "tool_use":
				ok = g.ToolUse != nil && g.ToolUse.ToolUseID == w.ID && g.ToolUse.Name == w.Name && jsonEqual(g.ToolUse.Input, w.Input)
			case "tool_result":
				if ok = g.ToolResult != nil && g.ToolResult.ToolUseID == w.ToolUseID && (g.ToolResult.Status == "error") == w.IsError; ok {
					var text strings.Builder
					for _, c := range g.ToolResult.Content {
						text.WriteString(c.Text)
					}
					ok = text.String() == toolResultText(w.Content)
				}
			}
			if !ok {
				t.Errorf("message %d block %d: got %+v, sent %+v", i, j, g, w)
			}
		}
	}
}
