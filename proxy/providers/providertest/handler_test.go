package providertest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

func FuzzParseModel(f *testing.F) {
	for _, s := range []string{"gpt-4o", "m@chunks=5@delay=50ms", "m@@", "@status=503", "m@latency=-1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		model, _, err := parseModel(name)
		if err == nil && !strings.HasPrefix(name, model) {
			t.Errorf("parseModel(%q) = %q, not a prefix", name, model)
		}
	})
}

func FuzzOpenAIRequest(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a\"b"}]}],"stream":true}`))
	f.Add([]byte(`{"model":"m","input":[[1,2],[3]]}`))
	s := New(Options{MaxRecorded: -1})
	h := s.Handler()
	f.Fuzz(func(t *testing.T, body []byte) {
		if bytes.IndexByte(body, '@') >= 0 {
			t.Skip("directives can wait for hours; parseModel has its own fuzz target")
		}
		for _, path := range []string{"/v1/chat/completions", "/v1/completions", "/v1/embeddings"} {
			var ctx fasthttp.RequestCtx
			ctx.Init(&fasthttp.Request{}, nil, nil)
			ctx.Request.Header.SetMethod("POST")
			ctx.Request.SetRequestURI(path)
			ctx.Request.Header.Set("Authorization", "Bearer k")
			ctx.Request.SetBody(body)
			h(&ctx)
			if ctx.Response.IsBodyStream() {
				ctx.Response.Reset() // closes the stream, ending its writer
				continue
			}
			if !json.Valid(ctx.Response.Body()) {
				t.Errorf("%s: invalid JSON answer %q", path, ctx.Response.Body())
			}
		}
	})
}

// BenchmarkChat measures the handler alone for a plain chat completion,
// the benchmark path of `sluice bench`.
func BenchmarkChat(b *testing.B) {
	s := New(Options{})
	h := s.Handler()
	body := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Write one sentence about rivers."}]}`)
	var ctx fasthttp.RequestCtx
	ctx.Init(&fasthttp.Request{}, nil, nil)
	b.ReportAllocs()
	for b.Loop() {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.Header.SetMethod("POST")
		ctx.Request.SetRequestURI("/v1/chat/completions")
		ctx.Request.Header.Set("Authorization", "Bearer sk-bench")
		ctx.Request.Header.SetContentType("application/json")
		ctx.Request.SetBody(body)
		h(&ctx)
		if ctx.Response.StatusCode() != 200 || !bytes.Contains(ctx.Response.Body(), []byte("Hello from mock")) {
			b.Fatalf("status %d: %s", ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
}
