package providers

import (
	"testing"
)

// TestNotAStreamRule holds the one rule, shared by every codec since the
// transport applies it, for which 2xx answers to a streamed call are no
// stream: a JSON document (application/json or a +json type) or HTML.
// OpenAI and Azure used to disagree: one matched "json" anywhere in the
// header, the other only application/json.
func TestNotAStreamRule(t *testing.T) {
	tests := []struct {
		ct   string
		want bool // true: a document, refused with a 502
	}{
		{"application/json", true},
		{"Application/JSON; charset=utf-8", true},
		{"application/problem+json", true},
		{" application/vnd.api+json ; q=1", true},
		{"text/html", true},
		{"text/html; charset=UTF-8", true},
		{"application/xhtml+xml", true},
		{"text/event-stream", false},
		{"text/event-stream; charset=utf-8", false},
		{"text/event-stream; profile=json", false},
		{"application/vnd.amazon.eventstream", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := isDocumentType([]byte(tt.ct)); got != tt.want {
			t.Errorf("isDocumentType(%q) = %v, want %v", tt.ct, got, tt.want)
		}
	}
}
