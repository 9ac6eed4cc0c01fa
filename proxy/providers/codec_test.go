package providers

import (
	"context"
	"io"
	"net/http"
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

// TestNotAStreamSameForOpenAIAndAzure sends a streamed chat to the OpenAI
// and the Azure adapters, whose upstream answers 200 with each content
// type: both must refuse the same ones with a 502 carrying the upstream's
// message, and stream the others.
func TestNotAStreamSameForOpenAIAndAzure(t *testing.T) {
	const events = "data: {\"choices\":[]}\n\ndata: [DONE]\n\n"
	tests := []struct {
		name, ct, body string
		wantErr        bool
	}{
		{"json", "application/json", `{"error":{"message":"stream ignored"}}`, true},
		{"problem json", "application/problem+json", `{"detail":"stream ignored"}`, true},
		{"html", "text/html", "<html>gateway</html>", true},
		{"event stream", "text/event-stream", events, false},
		{"event stream with json parameter", "text/event-stream; profile=json", events, false},
	}
	for _, tt := range tests {
		for _, provider := range []string{"openai", "azure-openai"} {
			t.Run(tt.name+"/"+provider, func(t *testing.T) {
				u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", tt.ct)
					_, _ = io.WriteString(w, tt.body)
				})
				c := newTestClient(t, ClientConfig{})
				var p Provider = NewOpenAI("openai", c)
				if provider == "azure-openai" {
					p = newAzure(c)
				}
				req := chatRequest(u.URL, `{"model":"m","messages":[{"role":"user","content":"Hi"}],"stream":true}`)
				req.Stream = true
				s, err := p.ChatStream(context.Background(), req)
				if !tt.wantErr {
					if err != nil {
						t.Fatalf("got %v, want a stream", err)
					}
					defer s.Close()
					if _, err := readChunks(s); err != io.EOF {
						t.Errorf("stream ended with %v, want io.EOF", err)
					}
					return
				}
				if e := AsError(err); e == nil || e.Status != http.StatusBadGateway || e.Message == "" {
					t.Fatalf("got %v, want a 502 *Error", err)
				}
			})
		}
	}
}
