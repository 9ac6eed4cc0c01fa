package openai

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/internal/codectest"
)

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
				u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", tt.ct)
					_, _ = io.WriteString(w, tt.body)
				})
				c := codectest.NewTestClient(t, providers.ClientConfig{})
				var p providers.Provider = New("openai", c)
				if provider == "azure-openai" {
					p = NewAzure(c)
				}
				req := codectest.ChatRequest(u.URL, `{"model":"m","messages":[{"role":"user","content":"Hi"}],"stream":true}`)
				req.Stream = true
				s, err := p.ChatStream(context.Background(), req)
				if !tt.wantErr {
					if err != nil {
						t.Fatalf("got %v, want a stream", err)
					}
					defer s.Close()
					if _, err := codectest.ReadChunks(s); err != io.EOF {
						t.Errorf("stream ended with %v, want io.EOF", err)
					}
					return
				}
				if e := providers.AsError(err); e == nil || e.Status != http.StatusBadGateway || e.Message == "" {
					t.Fatalf("got %v, want a 502 *Error", err)
				}
			})
		}
	}
}
