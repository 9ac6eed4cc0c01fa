package proxy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/valyala/fastjson"
)

// answerFacts reads the model and the finish reasons of an answer in each
// door's shape, whole or one stream event at a time.
func TestAnswerFacts(t *testing.T) {
	tests := []struct {
		name    string
		events  []string
		model   string
		reasons []string
	}{
		{"openai chat", []string{`{"model":"gpt-4o","choices":[{"finish_reason":"stop"},{"finish_reason":"length"}]}`}, "gpt-4o", []string{"stop", "length"}},
		{"openai stream", []string{`{"model":"gpt-4o","choices":[{"delta":{"content":"hi"},"finish_reason":null}]}`,
			`{"model":"gpt-4o","choices":[{"delta":{},"finish_reason":"tool_calls"}]}`}, "gpt-4o", []string{"tool_calls"}},
		{"messages", []string{`{"type":"message","model":"claude-x","stop_reason":"end_turn","content":[]}`}, "claude-x", []string{"end_turn"}},
		{"messages stream", []string{`{"type":"message_start","message":{"model":"claude-x"}}`,
			`{"type":"message_delta","delta":{"stop_reason":"max_tokens"}}`}, "claude-x", []string{"max_tokens"}},
		{"responses", []string{`{"object":"response","model":"gpt-5","status":"completed","output":[]}`}, "gpt-5", []string{"completed"}},
		{"responses stream", []string{`{"type":"response.created","response":{"model":"gpt-5","status":"in_progress"}}`,
			`{"type":"response.completed","response":{"model":"gpt-5","status":"completed"}}`}, "gpt-5", []string{"completed"}},
		{"embeddings", []string{`{"object":"list","model":"text-embedding-3-small","data":[]}`}, "text-embedding-3-small", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var model string
			var reasons []string
			for _, ev := range tt.events {
				model, reasons = answerFacts(fastjson.MustParse(ev), model, reasons)
			}
			if model != tt.model || !cmp.Equal(reasons, tt.reasons) {
				t.Errorf("got %q %v, want %q %v", model, reasons, tt.model, tt.reasons)
			}
		})
	}
}
