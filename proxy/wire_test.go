package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/openaischema"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// nativeProvider is one provider wire format the mock speaks, with the
// model ids its adapter is tested with.
type nativeProvider struct {
	provider, chat, embedding, completion string
	key                                   string
	opts                                  *store.KeyOptions
}

// nativeProviders are the six wire formats of the mock provider, each
// with its own key so that a leak names the adapter.
var nativeProviders = []nativeProvider{
	{provider: "openai", chat: "gpt-4o-mini", embedding: "text-embedding-3-small", completion: "gpt-3.5-turbo-instruct",
		key: "sk-wire-openai-Q7vT2mXc9LpR4"},
	{provider: "anthropic", chat: "claude-sonnet-4-5", key: "sk-ant-wire-Hs8Kd2Pq5Zr1"},
	{provider: "google", chat: "gemini-2.5-flash", embedding: "gemini-embedding-001", key: "AIzaWireGoogleKq93Lm27Xv"},
	{provider: "bedrock", chat: "amazon.nova-lite-v1:0", embedding: "amazon.titan-embed-text-v2:0",
		key: providertest.MockSecretAccessKey, opts: &store.KeyOptions{Region: "us-east-1", AccessKeyID: providertest.MockAccessKeyID}},
	{provider: "azure-openai", chat: "gpt-4o-mini", embedding: "text-embedding-3-small", key: "azurewirekey7Gf3Np0Qs8Wd",
		opts: &store.KeyOptions{APIVersion: "2024-10-21", Deployments: map[string]string{
			"gpt-4o-mini": "chat-dep", "text-embedding-3-small": "emb-dep"}}},
	{provider: "cohere", chat: "command-a-03-2025", embedding: "embed-v4.0", key: "co-wire-cohere-Rb6Yt1Vn4"},
}

// addNativeProviders gives the harness gateway a key of every native
// provider, all pointing at the mock, and rebuilds the snapshot. The
// openai key is added under the alias "native" beside the harness's own.
func (h *harness) addNativeProviders() {
	h.tb.Helper()
	for _, p := range nativeProviders {
		base := h.mockURL
		if p.provider == "openai" {
			base += "/v1"
		}
		_, err := h.svc.CreateKey(h.ctx, h.root, h.gw.ID, admin.KeyInput{Provider: p.provider, Alias: "native",
			Key: p.key, BaseURL: base, Options: p.opts})
		must(h.tb, err)
	}
	h.rebuild()
}

// TestUpstreamKeyRejected checks that an upstream's refusal of the
// gateway's provider key (401, 403, Google's 400 API_KEY_INVALID) reaches
// the client as 502 upstream_error naming the provider and the status,
// never as the client's own authentication_error, for every adapter,
// streamed or not; it is not retried and tells SDKs not to retry.
func TestUpstreamKeyRejected(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(3, 0)}})
	h.addNativeProviders()
	googleBadKey := `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT",` +
		`"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}`
	for _, p := range nativeProviders {
		steps := []providertest.Step{{Status: 401}, {Status: 403}}
		if p.provider == "google" {
			steps = append(steps, providertest.Step{Status: 400, Body: googleBadKey})
		}
		for _, step := range steps {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%d/stream=%v", p.provider, step.Status, stream), func(t *testing.T) {
					extra := ""
					if stream {
						extra = `,"stream":true`
					}
					before := h.mock.Count()
					h.mock.Script(step)
					resp, b := h.do("POST", gwPath(p.provider+"/chat/completions"), bearer(h.token), chatBody(p.chat, extra))
					wantAPIError(t, resp, b, 502, "api_error", "upstream_error", "")
					msg := string(b)
					if !strings.Contains(msg, "provider "+p.provider) || !strings.Contains(msg, fmt.Sprint(step.Status)) {
						t.Errorf("message %s does not name provider %s and status %d", b, p.provider, step.Status)
					}
					if strings.Contains(msg, p.key) || strings.Contains(msg, h.token) {
						t.Errorf("answer %s holds a credential", b)
					}
					if got := resp.Header.Get("x-should-retry"); got != "false" {
						t.Errorf("x-should-retry %q, want false", got)
					}
					if n := h.mock.Count() - before; n != 1 {
						t.Errorf("upstream requests %d, want 1 (a refused key is not retried)", n)
					}
					rec := h.record(resp.Header.Get(RequestIDHeader))
					if rec.Status != 502 || rec.ErrorCode != "upstream_error" || rec.Provider != p.provider {
						t.Errorf("record status %d code %q provider %q, want 502 upstream_error %s", rec.Status, rec.ErrorCode, rec.Provider, p.provider)
					}
				})
			}
		}
	}
}

// TestNumericParameters checks checklist item 4's numbers and the numeric
// parameters of the three operations: a number that is not a finite
// double anywhere in the body, and a parameter out of its range or not an
// integer where one is due, are refused with 400 naming the parameter,
// before any upstream call.
func TestNumericParameters(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	chat := func(extra string) string { return `{"model":"openai/gpt-4o-mini",` + msgs + extra + `}` }
	completion := func(extra string) string {
		return `{"model":"openai/gpt-3.5-turbo-instruct","prompt":"hi"` + extra + `}`
	}
	embedding := func(extra string) string {
		return `{"model":"openai/text-embedding-3-small","input":"hi"` + extra + `}`
	}
	for _, tc := range []struct {
		name, op, body, param string
	}{
		{"temperature 1e400", "chat/completions", chat(`,"temperature":1e400`), "temperature"},
		{"temperature -1e400", "chat/completions", chat(`,"temperature":-1e400`), "temperature"},
		{"temperature 2.5", "chat/completions", chat(`,"temperature":2.5`), "temperature"},
		{"temperature -0.1", "chat/completions", chat(`,"temperature":-0.1`), "temperature"},
		{"temperature string", "chat/completions", chat(`,"temperature":"1"`), "temperature"},
		{"top_p 1e400", "chat/completions", chat(`,"top_p":1e400`), "top_p"},
		{"top_p 1.5", "chat/completions", chat(`,"top_p":1.5`), "top_p"},
		{"frequency_penalty 3", "chat/completions", chat(`,"frequency_penalty":3`), "frequency_penalty"},
		{"presence_penalty -2.5", "chat/completions", chat(`,"presence_penalty":-2.5`), "presence_penalty"},
		{"presence_penalty 1E+999", "chat/completions", chat(`,"presence_penalty":1E+999`), "presence_penalty"},
		{"seed 1e400", "chat/completions", chat(`,"seed":1e400`), "seed"},
		{"seed 2^64", "chat/completions", chat(`,"seed":18446744073709551616`), "seed"},
		{"seed 1.5", "chat/completions", chat(`,"seed":1.5`), "seed"},
		{"seed with exponent", "chat/completions", chat(`,"seed":1e3`), "seed"},
		{"n 1e400", "chat/completions", chat(`,"n":1e400`), "n"},
		{"n -0", "chat/completions", chat(`,"n":-0`), "n"},
		{"n 2.0", "chat/completions", chat(`,"n":2.0`), "n"},
		{"max_tokens 1e400", "chat/completions", chat(`,"max_tokens":1e400`), "max_tokens"},
		{"max_tokens -0", "chat/completions", chat(`,"max_tokens":-0`), "max_tokens"},
		{"max_completion_tokens 9e18", "chat/completions", chat(`,"max_completion_tokens":9000000000000000000`), "max_completion_tokens"},
		{"top_logprobs 21", "chat/completions", chat(`,"top_logprobs":21`), "top_logprobs"},
		{"logit_bias 101", "chat/completions", chat(`,"logit_bias":{"50256":101}`), "logit_bias"},
		{"logit_bias 1e400", "chat/completions", chat(`,"logit_bias":{"50256":1e400}`), "logit_bias"},
		{"1e400 deep in a tool schema", "chat/completions", chat(`,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"number","maximum":1e400}}}]`), "tools"},
		{"1e400 in metadata", "chat/completions", chat(`,"metadata":{"x":[1,2,-1e400]}`), "metadata"},
		{"completions logprobs 6", "compat/completions", completion(`,"logprobs":6`), "logprobs"},
		{"completions best_of 1e400", "compat/completions", completion(`,"best_of":1e400`), "best_of"},
		{"completions temperature 9", "compat/completions", completion(`,"temperature":9`), "temperature"},
		{"embeddings dimensions 0", "compat/embeddings", embedding(`,"dimensions":0`), "dimensions"},
		{"embeddings dimensions 1e400", "compat/embeddings", embedding(`,"dimensions":1e400`), "dimensions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := gwPath(tc.op)
			if tc.op == "chat/completions" {
				path = chatPath
			}
			before := h.mock.Count()
			resp, b := h.do("POST", path, bearer(h.token), tc.body)
			wantAPIError(t, resp, b, 400, "invalid_request_error", "invalid_request", tc.param)
			if h.mock.Count() != before {
				t.Error("the request reached the upstream")
			}
		})
	}
	// In range, and the edges, still pass.
	for _, body := range []string{
		chat(`,"temperature":0,"top_p":1,"frequency_penalty":-2,"presence_penalty":2,"seed":-9223372036854775808,"n":1,"top_logprobs":0,"logprobs":true`),
		chat(`,"temperature":2,"top_p":0.0,"seed":9223372036854775807,"logit_bias":{"50256":-100},"max_tokens":5`),
		chat(`,"temperature":-0,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"number","maximum":1e308,"minimum":1e-400}}}]`),
	} {
		resp, b := h.do("POST", chatPath, bearer(h.token), body)
		wantStatus(t, resp, b, 200)
	}
	resp, b := h.do("POST", gwPath("compat/completions"), bearer(h.token), completion(`,"logprobs":5,"best_of":1,"temperature":0.7`))
	wantStatus(t, resp, b, 200)
	resp, b = h.do("POST", gwPath("compat/embeddings"), bearer(h.token), embedding(`,"dimensions":256`))
	wantStatus(t, resp, b, 200)
}

// TestAnswersConformToOpenAI checks what a client receives through the
// gateway, for every native provider's adapter against the mock, against
// OpenAI's published schema: the chat answer, every chunk of a stream
// (with and without the usage chunk), embeddings, legacy completions,
// the SSE error event that ends a broken stream, and error bodies.
func TestAnswersConformToOpenAI(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(1, 0)}})
	h.addNativeProviders()
	chunks := func(t *testing.T, path, body string) []string {
		t.Helper()
		resp, b := h.do("POST", path, bearer(h.token), body)
		wantStatus(t, resp, b, 200)
		var out []string
		for _, line := range strings.Split(string(b), "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok && data != "[DONE]" {
				out = append(out, data)
			}
		}
		if len(out) == 0 {
			t.Fatalf("no chunks in %s", b)
		}
		return out
	}
	for _, p := range nativeProviders {
		t.Run(p.provider, func(t *testing.T) {
			path := gwPath(p.provider + "/chat/completions")
			for _, tools := range []string{"", `,"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}],"tool_choice":"required"`} {
				resp, b := h.do("POST", path, bearer(h.token), chatBody(p.chat, tools))
				wantStatus(t, resp, b, 200)
				openaischema.Check(t, openaischema.ChatCompletion, p.provider+" answer", b)
				for _, usage := range []string{"", `,"stream_options":{"include_usage":true}`} {
					for i, c := range chunks(t, path, chatBody(p.chat, `,"stream":true`+usage+tools)) {
						openaischema.Check(t, openaischema.ChatCompletionChunk, fmt.Sprintf("%s chunk %d", p.provider, i), []byte(c))
					}
				}
			}
			if p.embedding != "" {
				resp, b := h.do("POST", gwPath(p.provider+"/embeddings"), bearer(h.token), `{"model":"`+p.embedding+`","input":["a","b"]}`)
				wantStatus(t, resp, b, 200)
				openaischema.Check(t, openaischema.Embeddings, p.provider+" embeddings", b)
			}
			// A stream the upstream breaks ends with an error event.
			h.mock.Script(providertest.Step{ResetAfter: 1})
			cs := chunks(t, path, chatBody(p.chat, `,"stream":true`))
			last := cs[len(cs)-1]
			if !strings.Contains(last, `"error"`) {
				t.Fatalf("a broken stream ended with %s, want an error event", last)
			}
			openaischema.Check(t, openaischema.Error, p.provider+" stream error event", []byte(last))
			// An upstream failure is answered in the error shape.
			h.mock.Script(providertest.Step{Status: 500})
			resp, b := h.do("POST", path, bearer(h.token), chatBody(p.chat, ""))
			wantAPIError(t, resp, b, 502, "api_error", "upstream_error", "")
		})
	}
	t.Run("completions", func(t *testing.T) {
		body := `{"model":"openai/gpt-3.5-turbo-instruct","prompt":"Once upon a time"}`
		resp, b := h.do("POST", gwPath("compat/completions"), bearer(h.token), body)
		wantStatus(t, resp, b, 200)
		openaischema.Check(t, openaischema.Completion, "completion", b)
		// The spec gives streamed completions the shape of the answer, but
		// OpenAI's own streams send finish_reason and usage null before the
		// last chunk (and the SDKs read them): a chunk is checked as if it
		// were the last.
		nulls := strings.NewReplacer(`"finish_reason":null`, `"finish_reason":"stop"`, `,"usage":null`, ``)
		for i, c := range chunks(t, gwPath("compat/completions"), strings.TrimSuffix(body, "}")+`,"stream":true}`) {
			openaischema.Check(t, openaischema.Completion, fmt.Sprintf("completion chunk %d", i), []byte(nulls.Replace(c)))
		}
	})
}

// TestPathConfusion extends TestNonCanonicalPaths with the rest of
// checklist item 14: encoded and raw dot segments, backslashes, a double
// slash before admin, trailing dots, mixed case, homoglyphs, overlong
// UTF-8, NUL and parameters. Each is answered 400 or 404 and nothing
// reaches the upstream; the canonical path is served.
func TestPathConfusion(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	body := chatBody("openai/gpt-4o-mini", "")
	for _, p := range []string{
		"/v1/acme/prod/compat/chat/completions/..",
		"/v1/acme/prod/compat/chat/completions/../completions",
		"/v1/acme/prod/compat/%2e%2e%2fcompat/chat/completions",
		"/v1/acme/prod/compat/chat%2Fcompletions",
		"/v1/acme/prod/compat/chat%2fcompletions",
		"/v1/acme/prod/compat%5Cchat/completions",
		"/v1/acme/prod/compat\\chat/completions",
		"/v1//admin/v1/tenants",
		"/v1/acme/prod/compat//admin",
		"/v1/../admin/v1/tenants",
		"/v1/acme./prod/compat/chat/completions",
		"/v1/acme/prod./compat/chat/completions",
		"/v1/acme/prod/compat./chat/completions",
		"/v1/acme/prod/OpenAI/chat/completions",
		"/v1/acme/prod/compat/Chat/Completions",
		"/v1/Acme/prod/compat/chat/completions",
		"/v1/\xd0\xb0cme/prod/compat/chat/completions",           // Cyrillic а
		"/v1/%D0%B0cme/prod/compat/chat/completions",             // the same, escaped
		"/v1/acme/prod/compat/chat/c\xd0\xbempletions",           // Cyrillic о
		"/v1/acme/prod/compat/chat/%c0%ae%c0%ae/completions",     // overlong "..": escaped
		"/v1/acme/prod/compat/chat/\xc0\xae\xc0\xae/completions", // and raw
		"/v1/acme/prod/compat/chat/completions%00",
		"/v1/acme/prod/compat/chat/completions;x=1",
		"/v1/acme/prod/compat/chat/completions%3Bx=1",
		"/v1/acme/prod/compat/chat/completions\xef\xbc\x8f", // fullwidth solidus
		"/v1/acme/prod/compat/chat/completions ",
	} {
		t.Run(p, func(t *testing.T) {
			before := h.mock.Count()
			out := rawExchange(t, h.addr, rawPost(h, p, body))
			if !strings.HasPrefix(out, "HTTP/1.1 400 ") && !strings.HasPrefix(out, "HTTP/1.1 404 ") {
				t.Errorf("answer:\n%s\nwant 400 or 404", out)
			}
			if h.mock.Count() != before {
				t.Error("a confusing path was routed upstream")
			}
		})
	}
	out := rawExchange(t, h.addr, rawPost(h, chatPath, body))
	if !strings.HasPrefix(out, "HTTP/1.1 200 ") {
		t.Errorf("the canonical path: %s", out)
	}
}

// TestUpstreamHeadersNotReflected checks checklist item 8 on the upstream
// side: nothing of an upstream's answer headers reaches the client's raw
// response — not a cookie, a redirect, a forged Sluice header nor a value
// with a control character, which fails the attempt instead.
func TestUpstreamHeadersNotReflected(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(1, 0)}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { ln.Close() })
	bad := make(chan bool, 8) // one per request the test sends
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, req.Body)
				answer := `{"id":"c","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,` +
					`"message":{"role":"assistant","content":"hi","refusal":null},"logprobs":null,"finish_reason":"stop"}],` +
					`"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
				head := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nSet-Cookie: upstream=1\r\n" +
					"Location: http://evil.example/\r\nX-Sluice-Provider: evil\r\nX-Upstream-Probe: 1\r\n"
				if <-bad {
					head += "X-Probe-Ctl: a\rX-Injected: 1\r\n"
				}
				_, _ = io.WriteString(c, head+"Content-Length: "+itoa(len(answer))+"\r\n\r\n"+answer)
			}()
		}
	}()
	h.addKeyAt(h.gw.ID, "openai", "raw", "sk-raw-upstream-0001", "http://"+ln.Addr().String()+"/v1")
	routes := []store.Route{{Name: "raw", Targets: []store.RouteTarget{{Provider: "openai", Model: "gpt-4o-mini", KeyAlias: ptr("raw")}}}}
	h.update(admin.GatewaySettings{Routes: &routes})

	for _, withCtl := range []bool{false, true} {
		bad <- withCtl
		out := rawExchange(t, h.addr, rawPost(h, chatPath, chatBody("raw", "")))
		head, _, _ := strings.Cut(out, "\r\n\r\n")
		want := "HTTP/1.1 200 "
		if withCtl {
			want = "HTTP/1.1 502 "
		}
		if !strings.HasPrefix(head, want) {
			t.Errorf("control character %v: answer\n%s\nwant %s", withCtl, out, want)
		}
		lower := strings.ToLower(head)
		for _, leak := range []string{"set-cookie", "location", "x-upstream-probe", "x-injected", "x-probe-ctl", "evil"} {
			if strings.Contains(lower, leak) {
				t.Errorf("control character %v: the upstream's %q reached the client:\n%s", withCtl, leak, head)
			}
		}
	}
}
