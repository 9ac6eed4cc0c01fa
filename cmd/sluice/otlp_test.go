package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// Canaries that must never leave the gateway in a span or an access log
// line: a prompt (which the mock echoes into its completion) and the
// upstream key.
const (
	promptCanary   = "PROMPT-CANARY-7f3a9c"
	upstreamSecret = "sk-mock-upstream-key-0001"
)

// otlpReceiver is an in-process OTLP/HTTP collector: it decodes every
// export request to /v1/traces and keeps the spans and the raw bytes.
type otlpReceiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	raw   [][]byte
	spans []*tracepb.Span
}

func startReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("OTLP export to %s with Content-Type %q", req.URL.Path, req.Header.Get("Content-Type"))
			http.Error(w, "want protobuf on /v1/traces", http.StatusBadRequest)
			return
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			t.Errorf("read OTLP export: %v", err)
			return
		}
		var ex coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &ex); err != nil {
			t.Errorf("decode OTLP export: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.raw = append(r.raw, body)
		for _, rs := range ex.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// request returns the spans of the request with id: its root and the
// root's children, waiting (the batch timeout is 2 s) until the root and
// at least children spans arrived.
func (r *otlpReceiver) request(t *testing.T, id string, children int) (*tracepb.Span, []*tracepb.Span) {
	t.Helper()
	var root *tracepb.Span
	var kids []*tracepb.Span
	eventually(t, 15*time.Second, "the spans of request "+id, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		root, kids = nil, nil
		for _, s := range r.spans {
			if attrs(s)["sluice.request_id"] == id && s.Kind == tracepb.Span_SPAN_KIND_SERVER {
				root = s
			}
		}
		if root == nil {
			return false
		}
		for _, s := range r.spans {
			if bytes.Equal(s.ParentSpanId, root.SpanId) {
				kids = append(kids, s)
			}
		}
		return len(kids) >= children
	})
	return root, kids
}

// attrs flattens a span's attributes to strings (arrays joined by ",").
func attrs(s *tracepb.Span) map[string]string {
	m := make(map[string]string, len(s.Attributes))
	for _, kv := range s.Attributes {
		m[kv.Key] = anyString(kv.Value)
	}
	return m
}

func anyString(v *commonpb.AnyValue) string {
	switch x := v.Value.(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.Values {
			parts = append(parts, anyString(e))
		}
		return strings.Join(parts, ",")
	}
	return v.String()
}

// post sends body to url with token and extra headers and returns the
// status and the x-sluice-request-id of the answer; it fails the test
// unless the answer holds the prompt canary (the mock's echo), so that
// its absence from the exports below means something.
func post(t *testing.T, url, token, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(res.Body)
	res.Body.Close()
	stream := strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") // the echo is cut into chunks
	if res.StatusCode == http.StatusOK && !stream && !bytes.Contains(answer, []byte(promptCanary)) {
		t.Errorf("the answer does not echo the prompt canary: %s", answer)
	}
	return res.StatusCode, res.Header.Get("x-sluice-request-id")
}

// TestOTLPTracesAndAccessLog serves requests through `sluice serve` with
// SLUICE_OTLP_ENDPOINT pointing at an in-process OTLP receiver and
// SLUICE_ACCESS_LOG at a file: a retried request continuing the client's
// traceparent exports its request span with two attempt children (the
// ids of the admin trace view), a stream and a refused request export
// theirs, every required attribute is set, and neither the exported bytes
// nor the access log hold the prompt, the completion or a secret.
func TestOTLPTracesAndAccessLog(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	recv := startReceiver(t)
	logPath := filepath.Join(t.TempDir(), "access.log")
	t.Setenv("SLUICE_OTLP_ENDPOINT", recv.srv.URL)
	t.Setenv("SLUICE_ACCESS_LOG", logPath)
	base, url, token, mock := serveWithGateway(t, ctx)

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	chat := `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"say ` + promptCanary + `"}]}`
	mock.Script(providertest.Step{Status: http.StatusInternalServerError})
	status, retried := post(t, url, token, chat, map[string]string{"traceparent": "00-" + traceID + "-" + parentID + "-01"})
	if status != http.StatusOK {
		t.Fatalf("retried request: status %d, want 200", status)
	}
	status, streamed := post(t, url, token, strings.Replace(chat, `{"model"`, `{"stream":true,"model"`, 1), nil)
	if status != http.StatusOK {
		t.Fatalf("stream: status %d, want 200", status)
	}
	status, refused := post(t, url, token, `{"model":"nope/unknown","messages":[{"role":"user","content":"`+promptCanary+`"}]}`, nil)
	if status < 400 {
		t.Fatalf("unknown provider: status %d, want an error", status)
	}

	t.Run("retried request", func(t *testing.T) {
		root, kids := recv.request(t, retried, 2)
		if got := hex.EncodeToString(root.TraceId); got != traceID {
			t.Errorf("trace id %s, want the traceparent's %s", got, traceID)
		}
		if got := hex.EncodeToString(root.ParentSpanId); got != parentID {
			t.Errorf("parent span %s, want the traceparent's %s", got, parentID)
		}
		a := attrs(root)
		want := map[string]string{
			"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "openai/gpt-4o-mini",
			"gen_ai.response.finish_reasons": "stop", "sluice.tenant": "acme", "sluice.gateway": "acme/prod",
			"sluice.request_id": retried, "http.response.status_code": "200", "sluice.operation": "chat",
		}
		for k, v := range want {
			if a[k] != v {
				t.Errorf("request span %s = %q, want %q", k, a[k], v)
			}
		}
		for _, k := range []string{"gen_ai.response.model", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"} {
			if a[k] == "" || a[k] == "0" {
				t.Errorf("request span lacks %s (%v)", k, a)
			}
		}
		if _, ok := a["error.type"]; ok {
			t.Errorf("an answered request has error.type %q", a["error.type"])
		}
		if len(kids) != 2 {
			t.Fatalf("%d attempt spans, want 2", len(kids))
		}
		var failed, ok int
		for _, k := range kids {
			ka := attrs(k)
			if k.Kind != tracepb.Span_SPAN_KIND_CLIENT || ka["gen_ai.provider.name"] != "openai" || ka["gen_ai.request.model"] != "gpt-4o-mini" ||
				ka["sluice.request_id"] != retried || ka["sluice.gateway"] != "acme/prod" || ka["sluice.tenant"] != "acme" ||
				ka["gen_ai.operation.name"] != "chat" || ka["sluice.key_alias"] != "mock" {
				t.Errorf("attempt span %s kind %v attributes %v", k.Name, k.Kind, ka)
			}
			switch ka["error.type"] {
			case "500":
				failed++
			case "":
				ok++
			}
		}
		if failed != 1 || ok != 1 {
			t.Errorf("attempts: %d failed with error.type 500, %d answered; want 1 and 1", failed, ok)
		}
		// The admin trace view shows the same tree, with the same ids.
		var tr map[string]any
		eventually(t, 10*time.Second, "the stored trace", func() bool {
			code, body := callStatus(t, base, "GET", "/admin/v1/traces/"+traceID, "")
			tr = body
			return code == http.StatusOK
		})
		stored, _ := tr["root"].(map[string]any)
		if stored["span_id"] != hex.EncodeToString(root.SpanId) {
			t.Errorf("stored root span %v, exported %x", stored["span_id"], root.SpanId)
		}
		// Every attribute the gateway gave its spans is stored (issue 17:
		// they are kept in Span.Fixed, not in a map, until the store).
		hasAll := func(sp map[string]any, keys ...string) bool {
			at, _ := sp["attributes"].(map[string]any)
			for _, k := range keys {
				if _, ok := at[k].(string); !ok {
					return false
				}
			}
			return len(at) == len(keys)
		}
		if !hasAll(stored, "request_id", "status", "route") {
			t.Errorf("stored root span attributes %v, want request_id, status and route", stored["attributes"])
		}
		children, _ := stored["children"].([]any)
		for _, c := range children {
			if sp, _ := c.(map[string]any); !hasAll(sp, "provider", "model", "key_alias", "attempt", "upstream_status", "outcome") {
				t.Errorf("stored attempt span attributes %v, want the six of an attempt", sp["attributes"])
			}
		}
		if len(children) != 2 {
			t.Errorf("stored trace: %d attempt spans, want 2", len(children))
		}
	})

	t.Run("stream", func(t *testing.T) {
		root, kids := recv.request(t, streamed, 1)
		a := attrs(root)
		if len(kids) != 1 || a["gen_ai.response.finish_reasons"] != "stop" || a["gen_ai.usage.output_tokens"] == "" || root.ParentSpanId != nil {
			t.Errorf("stream: %d attempt spans, attributes %v, parent %x", len(kids), a, root.ParentSpanId)
		}
	})

	t.Run("refused request", func(t *testing.T) {
		root, kids := recv.request(t, refused, 0)
		a := attrs(root)
		if len(kids) != 0 || a["error.type"] == "" || a["http.response.status_code"] != strconv.Itoa(status) || root.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
			t.Errorf("refused request: %d attempt spans, attributes %v, status %v", len(kids), a, root.Status)
		}
	})

	t.Run("no prompt or completion exported", func(t *testing.T) {
		recv.mu.Lock()
		defer recv.mu.Unlock()
		for _, b := range recv.raw {
			for _, secret := range []string{promptCanary, upstreamSecret, token} {
				if bytes.Contains(b, []byte(secret)) {
					t.Fatalf("an OTLP export holds %q", secret)
				}
			}
		}
	})

	t.Run("access log", func(t *testing.T) {
		seen := map[string]map[string]any{}
		eventually(t, 5*time.Second, "the access log lines", func() bool {
			data, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range []string{promptCanary, upstreamSecret, token} {
				if bytes.Contains(data, []byte(secret)) {
					t.Fatalf("the access log holds %q", secret)
				}
			}
			sc := bufio.NewScanner(bytes.NewReader(data))
			for sc.Scan() {
				var line map[string]any
				if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
					t.Fatalf("access log line %q: %v", sc.Text(), err)
				}
				id, _ := line["request_id"].(string)
				seen[id] = line
			}
			return seen[retried] != nil && seen[streamed] != nil && seen[refused] != nil
		})
		line := seen[retried]
		for _, k := range []string{"time", "level", "msg", "request_id", "tenant", "gateway", "operation", "provider", "model",
			"status", "error_code", "latency_ms", "tokens_in", "tokens_out", "cost_usd", "attempts", "trace_id"} {
			if _, ok := line[k]; !ok {
				t.Errorf("access log line lacks %q: %v", k, line)
			}
		}
		if line["tenant"] != "acme" || line["gateway"] != "acme/prod" || line["operation"] != "chat" || line["provider"] != "openai" ||
			line["model"] != "gpt-4o-mini" || line["status"] != 200.0 || line["attempts"] != 2.0 || line["trace_id"] != traceID {
			t.Errorf("access log line of the retried request: %v", line)
		}
		if l := seen[refused]; l["status"] == 200.0 || l["error_code"] == "" {
			t.Errorf("access log line of the refused request: %v", l)
		}
	})
}

// TestOTLPCollectorDown serves with SLUICE_OTLP_ENDPOINT on a closed
// port: requests are answered as usual and the spans that could not be
// exported are counted in sluice_otlp_dropped_spans_total.
func TestOTLPCollectorDown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t.Setenv("SLUICE_OTLP_ENDPOINT", "http://127.0.0.1:"+closedPort(t))
	base, url, token, _ := serveWithGateway(t, ctx)
	for range 10 {
		if s := postJSON(t, url, token, `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`); s != http.StatusOK {
			t.Fatalf("inference status %d with the collector down, want 200", s)
		}
	}
	eventually(t, 15*time.Second, "dropped spans counted", func() bool {
		n, _ := strconv.Atoi(metricValue(t, base, "sluice_otlp_dropped_spans_total"))
		return n >= 20 // 10 requests (and the readiness pings), a request span and an attempt span each
	})
	if v := metricValue(t, base, "sluice_otlp_exported_spans_total"); v != "0" {
		t.Errorf("sluice_otlp_exported_spans_total %s with the collector down, want 0", v)
	}
}

// The observability flags refuse what cannot work before the server
// starts: an endpoint that is not a base http(s) URL, a sampling ratio
// outside 0–1, an access log that cannot be opened; off, they add no
// observer.
func TestObserverFlags(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		c    config
		want string // "" means no error
		n    int
	}{
		{"off", config{OTLPSamplingRatio: 1}, "", 0},
		{"both on", config{OTLPEndpoint: "http://127.0.0.1:4318", OTLPSamplingRatio: 1, AccessLog: filepath.Join(dir, "a.log")}, "", 2},
		{"access log to stderr", config{OTLPSamplingRatio: 1, AccessLog: "stderr"}, "", 1},
		{"endpoint without scheme", config{OTLPEndpoint: "collector:4318", OTLPSamplingRatio: 1}, "otlp endpoint", 0},
		{"endpoint with credentials", config{OTLPEndpoint: "http://u:s3cret@collector:4318", OTLPSamplingRatio: 1}, "OTEL_EXPORTER_OTLP_HEADERS", 0},
		{"sampling ratio", config{OTLPEndpoint: "http://collector:4318", OTLPSamplingRatio: 2}, "sampling ratio", 0},
		{"access log dir missing", config{OTLPSamplingRatio: 1, AccessLog: filepath.Join(dir, "no", "a.log")}, "--access-log", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs, stop, err := tt.c.observers(nil, slog.New(slog.DiscardHandler))
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("err %v, want one about %q (without the password)", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			if len(obs) != tt.n {
				t.Errorf("%d observers, want %d", len(obs), tt.n)
			}
		})
	}
}
