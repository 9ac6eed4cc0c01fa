package proxy

import (
	"testing"

	"github.com/sluicehq/sluice/internal/llm"
)

func TestParsePath(t *testing.T) {
	tests := []struct {
		path                      string
		ok                        bool
		tenant, gateway, provider string
		op                        llm.Operation
	}{
		{"/v1/acme/prod/compat/chat/completions", true, "acme", "prod", "", llm.OpChat},
		{"/v1/acme/prod/compat/completions", true, "acme", "prod", "", llm.OpCompletions},
		{"/v1/acme/prod/compat/embeddings", true, "acme", "prod", "", llm.OpEmbeddings},
		{"/v1/acme/prod/openai/chat/completions", true, "acme", "prod", "openai", llm.OpChat},
		{"/v1/acme/prod/azure-openai/embeddings", true, "acme", "prod", "azure-openai", llm.OpEmbeddings},
		{"/v1/acme/prod/openai/completions", false, "", "", "", 0},
		{"/v1/acme/prod/compat/chat/completions/", false, "", "", "", 0},
		{"/v1/acme//compat/chat/completions", false, "", "", "", 0},
		{"/v1/acme/../compat/chat/completions", false, "", "", "", 0},
		{"/v1/acme/./prod/compat/embeddings", false, "", "", "", 0},
		{"/v1/acme/prod/%2e%2e/chat/completions", false, "", "", "", 0},
		{"/v1/acme/prod/open%2fai/chat/completions", false, "", "", "", 0},
		{"/v1/ACME/prod/compat/embeddings", false, "", "", "", 0},
		{"/v1/acme/prod/compat/chat/completions/extra", false, "", "", "", 0},
		{"/v1/acme/prod/compat", false, "", "", "", 0},
		{"/v1/acme/prod\\x/compat/embeddings", false, "", "", "", 0},
		{"/v2/acme/prod/compat/embeddings", false, "", "", "", 0},
		{"/v1/-acme/prod/compat/embeddings", false, "", "", "", 0},
		{"/v1/acme/prod./compat/embeddings", false, "", "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			r, ok := parsePath([]byte(tt.path))
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if string(r.tenant) != tt.tenant || string(r.gateway) != tt.gateway || string(r.provider) != tt.provider || r.op != tt.op {
				t.Fatalf("got %s %s %s %v, want %s %s %s %v", r.tenant, r.gateway, r.provider, r.op, tt.tenant, tt.gateway, tt.provider, tt.op)
			}
		})
	}
}

func TestParsePathMessages(t *testing.T) {
	tests := []struct {
		path string
		ok   bool
		kind routeKind
	}{
		{"/v1/acme/prod/compat/v1/messages", true, kindMessages},
		{"/v1/acme/prod/compat/v1/messages/count_tokens", true, kindCountTokens},
		{"/v1/acme/prod/compat/chat/completions", true, kindOpenAI},
		{"/v1/acme/prod/openai/v1/messages", false, 0},
		{"/v1/acme/prod/compat/v1/messages/", false, 0},
		{"/v1/acme/prod/compat/v1/messages/count-tokens", false, 0},
		{"/v1/acme/prod/compat/v1/count_tokens", false, 0},
		{"/v1/acme/prod/compat/count_tokens/messages", false, 0},
		{"/v1/acme/prod/compat/v2/messages", false, 0},
		{"/v1/acme/prod/compat/responses", true, kindResponses},
		{"/v1/acme/prod/compat/responses/", false, 0},
		{"/v1/acme/prod/compat/v1/responses", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			r, ok := parsePath([]byte(tt.path))
			if ok != tt.ok || ok && (r.kind != tt.kind || r.op != llm.OpChat || r.provider != nil) {
				t.Fatalf("got %v %+v, want %v kind %v", ok, r, tt.ok, tt.kind)
			}
		})
	}
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"/v1/a/b/compat/v1/messages/count_tokens", "/v1/acme/prod/compat/chat/completions", "/v1/a/b/openai/embeddings", "/v1//", "/v1/a/b/c/d/e/f/g", "/v1/%2e/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		r, ok := parsePath([]byte(p))
		if !ok {
			return
		}
		// Whatever is accepted is canonical: rebuilding it gives the input.
		got := "/v1/" + string(r.tenant) + "/" + string(r.gateway) + "/"
		if r.provider == nil {
			got += "compat/"
		} else {
			got += string(r.provider) + "/"
		}
		switch r.kind {
		case kindMessages:
			got += "v1/messages"
		case kindCountTokens:
			got += "v1/messages/count_tokens"
		case kindResponses:
			got += "responses"
		default:
			got += r.op.String()
		}
		if got != p {
			t.Fatalf("accepted %q but it rebuilds as %q", p, got)
		}
	})
}
