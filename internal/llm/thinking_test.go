package llm

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCarryThinking: thinking parts survive the trip through the OpenAI
// chat wire onto the matching assistant messages, in front of their
// content, even where a user message's tool results split into several
// messages; the budget is carried too.
func TestCarryThinking(t *testing.T) {
	body := `{"model":"m","max_tokens":64,"thinking":{"type":"enabled","budget_tokens":2048},"messages":[` +
		`{"role":"user","content":"q"},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"t1","signature":"s1"},{"type":"tool_use","id":"a","name":"f","input":{}},{"type":"tool_use","id":"b","name":"f","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"1"},{"type":"tool_result","tool_use_id":"b","content":"2"}]},` +
		`{"role":"assistant","content":"plain"},` +
		`{"role":"user","content":"more"},` +
		`{"role":"assistant","content":[{"type":"redacted_thinking","data":"enc"},{"type":"text","text":"x"}]}]}`
	r, err := DecodeAnthropicMessages([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if !HasThinking(r) {
		t.Fatal("HasThinking false")
	}
	chat, err := EncodeOpenAIChat(r)
	if err != nil {
		t.Fatal(err)
	}
	n, err := DecodeOpenAIChat(chat)
	if err != nil {
		t.Fatal(err)
	}
	if HasThinking(n) {
		t.Fatal("the chat wire carried thinking")
	}
	CarryThinking(n, r)
	var got [][]Part
	for _, m := range n.Messages {
		if m.Role == RoleAssistant {
			got = append(got, m.Parts)
		}
	}
	if len(got) != 3 {
		t.Fatalf("assistant messages %d, want 3", len(got))
	}
	if p := got[0]; len(p) == 0 || p[0].Kind != PartThinking || p[0].Text != "t1" || p[0].Signature != "s1" || len(n.Messages[1].ToolCalls) != 2 {
		t.Errorf("first assistant %+v", n.Messages[1])
	}
	if p := got[1]; len(p) != 1 || p[0].Kind != PartText {
		t.Errorf("second assistant %+v", p)
	}
	if p := got[2]; len(p) != 2 || p[0].Kind != PartRedactedThinking || p[0].Data != "enc" || p[1].Text != "x" {
		t.Errorf("third assistant %+v", p)
	}
	if n.Reasoning == nil || n.Reasoning.BudgetTokens == nil || *n.Reasoning.BudgetTokens != 2048 {
		t.Errorf("reasoning %+v", n.Reasoning)
	}
	plain, _ := DecodeAnthropicMessages([]byte(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}`))
	if HasThinking(plain) {
		t.Error("HasThinking true without thinking")
	}
	before := *plain
	CarryThinking(plain, &Request{})
	if !reflect.DeepEqual(before, *plain) {
		t.Error("CarryThinking changed a request without thinking")
	}
}

// TestCarryToolExtras: a tool_result's is_error and a tool's
// cache_control, which the OpenAI chat encoding drops, come back on the
// chat body decoded again: on the tool message answering the same call,
// and on the same tool.
func TestCarryToolExtras(t *testing.T) {
	from, err := DecodeAnthropicMessages([]byte(`{"model":"m","max_tokens":9,"messages":[` +
		`{"role":"user","content":"go"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}},{"type":"tool_use","id":"b","name":"f","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"ok"},{"type":"tool_result","tool_use_id":"b","content":"boom","is_error":true}]}],` +
		`"tools":[{"name":"f","input_schema":{"type":"object"}},{"name":"g","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !HasToolExtras(from) {
		t.Fatal("HasToolExtras = false")
	}
	chat, err := EncodeOpenAIChat(from)
	if err != nil {
		t.Fatal(err)
	}
	to, err := DecodeOpenAIChat(chat)
	if err != nil {
		t.Fatal(err)
	}
	CarryToolExtras(to, from)
	var got []string
	for _, m := range to.Messages {
		if m.Role == RoleTool {
			got = append(got, m.ToolCallID+"="+strconv.FormatBool(m.IsError))
		}
	}
	if diff := cmp.Diff([]string{"a=false", "b=true"}, got); diff != "" {
		t.Errorf("tool messages (-want +got):\n%s", diff)
	}
	if to.Tools[0].CacheControl != nil || string(to.Tools[1].CacheControl) != `{"type":"ephemeral"}` {
		t.Errorf("tools' cache_control = %s, %s", to.Tools[0].CacheControl, to.Tools[1].CacheControl)
	}
	plain, _ := DecodeAnthropicMessages([]byte(`{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"hi"}]}`))
	if HasToolExtras(plain) {
		t.Error("HasToolExtras = true for a request without tools")
	}
}
