package rest

import (
	"bufio"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluicehq/sluice/internal/apierr"
)

// echo answers which route matched and its parameters.
func echo(name string) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, p Params) error {
		return JSON(w, http.StatusOK, map[string]any{"route": name, "params": p})
	}
}

type echoed struct {
	Route  string  `json:"route"`
	Params []Param `json:"params"`
}

func testRouter() *Router {
	rt := NewRouter()
	rt.Handle(http.MethodGet, "/", echo("root"))
	rt.Handle(http.MethodGet, "/admin/v1/tenants", echo("tenants.list"))
	rt.Handle(http.MethodPost, "/admin/v1/tenants", echo("tenants.create"))
	rt.Handle(http.MethodGet, "/admin/v1/tenants/{id}", echo("tenants.read"))
	rt.Handle(http.MethodPatch, "/admin/v1/tenants/{id}", echo("tenants.update"))
	rt.Handle(http.MethodDelete, "/admin/v1/tenants/{id}", echo("tenants.delete"))
	rt.Handle(http.MethodGet, "/admin/v1/tenants/me", echo("tenants.me"))
	rt.Handle(http.MethodDelete, "/admin/v1/gateways/{id}/keys/{provider}/{alias}", echo("keys.delete"))
	rt.Handle(http.MethodGet, "/admin/v1/model-prices", echo("prices.list"))
	rt.Handle(http.MethodPut, "/admin/v1/model-prices", echo("prices.put"))
	rt.Handle(http.MethodDelete, "/admin/v1/model-prices/{provider}/{model...}", echo("prices.delete"))
	rt.Handle(http.MethodGet, "/admin/v1/model-prices/{provider}/default", echo("prices.default"))
	return rt
}

func serve(h http.Handler, method, target string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec
}

func TestRouterMatches(t *testing.T) {
	rt := testRouter()
	tests := []struct {
		method, path string
		want         echoed
	}{
		{"GET", "/", echoed{Route: "root", Params: []Param{}}},
		{"GET", "/admin/v1/tenants", echoed{Route: "tenants.list", Params: []Param{}}},
		{"POST", "/admin/v1/tenants", echoed{Route: "tenants.create", Params: []Param{}}},
		{"GET", "/admin/v1/tenants/acme", echoed{"tenants.read", []Param{{"id", "acme"}}}},
		{"PATCH", "/admin/v1/tenants/acme", echoed{"tenants.update", []Param{{"id", "acme"}}}},
		// A literal beats a wildcard.
		{"GET", "/admin/v1/tenants/me", echoed{Route: "tenants.me", Params: []Param{}}},
		// ... but only for the methods the literal has.
		{"DELETE", "/admin/v1/tenants/me", echoed{"tenants.delete", []Param{{"id", "me"}}}},
		{"DELETE", "/admin/v1/gateways/gw_1/keys/openai/prod", echoed{"keys.delete",
			[]Param{{"id", "gw_1"}, {"provider", "openai"}, {"alias", "prod"}}}},
		// Percent-escapes are decoded in values.
		{"DELETE", "/admin/v1/gateways/gw_1/keys/openai/caf%C3%A9%20x", echoed{"keys.delete",
			[]Param{{"id", "gw_1"}, {"provider", "openai"}, {"alias", "café x"}}}},
		{"GET", "/admin/v1/tenants/caf%c3%a9", echoed{"tenants.read", []Param{{"id", "café"}}}},
		// The rest capture takes several segments.
		{"DELETE", "/admin/v1/model-prices/together/meta-llama/Llama-3-70b", echoed{"prices.delete",
			[]Param{{"provider", "together"}, {"model", "meta-llama/Llama-3-70b"}}}},
		{"DELETE", "/admin/v1/model-prices/openai/gpt-4.1", echoed{"prices.delete",
			[]Param{{"provider", "openai"}, {"model", "gpt-4.1"}}}},
		{"DELETE", "/admin/v1/model-prices/x/a/b%20c/d", echoed{"prices.delete",
			[]Param{{"provider", "x"}, {"model", "a/b c/d"}}}},
		// A literal beats a rest capture.
		{"GET", "/admin/v1/model-prices/openai/default", echoed{"prices.default", []Param{{"provider", "openai"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			rec := serve(rt, tt.method, tt.path)
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, want 200; body %s", rec.Code, rec.Body)
			}
			var got echoed
			if err := jsonUnmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("match (-want +got):\n%s", diff)
			}
			if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
			}
		})
	}
}

func TestRouterNotFoundAndMethodNotAllowed(t *testing.T) {
	rt := testRouter()
	tests := []struct {
		method, path string
		want         wireError
		allow        string
	}{
		{"GET", "/admin/v1/nope", wantErr(404, "not_found", ""), ""},
		{"GET", "/admin/v1/tenants/acme/extra", wantErr(404, "not_found", ""), ""},
		{"GET", "/admin/v1/gateways/gw_1/keys/openai", wantErr(404, "not_found", ""), ""},
		// Literals are matched as sent: an escaped letter is another path.
		{"GET", "/admin/v1/%74enants", wantErr(404, "not_found", ""), ""},
		// The rest capture needs at least one segment.
		{"DELETE", "/admin/v1/model-prices/openai", wantErr(404, "not_found", ""), ""},
		{"DELETE", "/admin/v1/tenants", wantErr(405, "method_not_allowed", ""), "GET, POST"},
		{"HEAD", "/admin/v1/tenants", wantErr(405, "method_not_allowed", ""), "GET, POST"},
		{"OPTIONS", "/admin/v1/tenants", wantErr(405, "method_not_allowed", ""), "GET, POST"},
		{"PUT", "/admin/v1/tenants/acme", wantErr(405, "method_not_allowed", ""), "DELETE, GET, PATCH"},
		// The literal route and the wildcard route both match: their methods add up.
		{"POST", "/admin/v1/tenants/me", wantErr(405, "method_not_allowed", ""), "DELETE, GET, PATCH"},
		{"POST", "/admin/v1/model-prices/openai/default", wantErr(405, "method_not_allowed", ""), "DELETE, GET"},
		{"GET", "/admin/v1/model-prices/openai/a/b", wantErr(405, "method_not_allowed", ""), "DELETE"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			rec := serve(rt, tt.method, tt.path)
			if diff := diffError(readError(t, rec), tt.want); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if got := rec.Header().Get("Allow"); got != tt.allow {
				t.Errorf("Allow = %q, want %q", got, tt.allow)
			}
		})
	}
}

func TestRouterRejectsNonCanonicalPaths(t *testing.T) {
	rt := testRouter()
	tests := []string{
		"/admin/v1//tenants",
		"//admin/v1/tenants",
		"/admin/v1/tenants/..",
		"/admin/v1/tenants/../tenants",
		"/admin/v1/./tenants",
		"/admin/v1/tenants/.",
		"/admin/v1/tenants/%2e%2e",
		"/admin/v1/tenants/%2E%2E",
		"/admin/v1/tenants/%2e",
		"/admin/v1/tenants/a%2eb",
		"/admin/v1/tenants/a%2Fb",
		"/admin/v1/tenants/a%2fb",
		"/admin/v1/tenants/a%5cb",
		"/admin/v1/tenants/a%5Cb",
		"/admin/v1/tenants/a%00b",
		"/admin/v1/tenants/a%0ab",
		"/admin/v1/tenants/a%7fb",
		"/admin/v1/tenants/a%1Fb",
		"/admin/v1/tenants/",
		"/admin/v1/tenants/%ff",
		"/admin/v1/tenants/%c3",
		"/admin/v1/model-prices/x/a//b",
		"/admin/v1/model-prices/x/a/../b",
		"/admin/v1/model-prices/x/a%2fb",
	}
	for _, path := range tests {
		t.Run(path, func(t *testing.T) {
			rec := serve(rt, http.MethodDelete, path)
			if diff := diffError(readError(t, rec), wantErr(400, "invalid_path", "")); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSplitPath covers what no HTTP request can carry to the router
// (net/http refuses malformed escapes) and the accepted forms.
func TestSplitPath(t *testing.T) {
	tests := []struct {
		raw       string
		wantSegs  []string
		wantError bool
	}{
		{"/", nil, false},
		{"/a/b", []string{"a", "b"}, false},
		{"/a/%41%c3%a9%25", []string{"a", "Aé%"}, false},
		{"/a/...", []string{"a", "..."}, false},
		{"/a/gpt-4.1", []string{"a", "gpt-4.1"}, false},
		{"", nil, true},
		{"a/b", nil, true},
		{"*", nil, true},
		{"/a/%", nil, true},
		{"/a/%2", nil, true},
		{"/a/%zz", nil, true},
		{"/a/%2x", nil, true},
		{"/a/b\\c", nil, true},
		{"/a/b\x00c", nil, true},
		{"/a/b\tc", nil, true},
		{"/a/\xff", nil, true},
		{"/a/%E2%80", nil, true},
		{"/a/%5C", nil, true},
		{"/a/%2E", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			_, segs, err := splitPath(tt.raw)
			if tt.wantError {
				if diff := diffError(asWire(t, err), wantErr(400, "invalid_path", "")); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("splitPath(%q) = %v", tt.raw, err)
			}
			if diff := cmp.Diff(tt.wantSegs, segs); diff != "" {
				t.Errorf("segments (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRouterRejectsRawBytes sends request lines that httptest.NewRequest
// cannot build (a backslash, raw control bytes) through a real server.
func TestRouterRejectsRawBytes(t *testing.T) {
	srv := httptest.NewServer(testRouter())
	defer srv.Close()
	tests := []struct {
		path string
		// byServer: net/http refuses the request line itself (plain-text
		// 400), so the path never reaches the router.
		byServer bool
	}{
		{path: `/admin/v1/tenants/a\b`},
		{path: `/admin/v1/tenants\..\x`},
		{path: "/admin/v1/tenants/\xff"},
		{path: "/admin/v1/tenants/a%2Fb"},
		{path: "/admin/v1/tenants/a\x01b", byServer: true},
		{path: "/admin/v1/tenants/a%zz", byServer: true},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			status, body := rawRequest(t, srv.Listener.Addr().String(), "GET "+tt.path+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
			if status != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400; body %s", status, body)
			}
			if !tt.byServer && !strings.Contains(body, `"code":"invalid_path"`) {
				t.Errorf("body = %s, want invalid_path", body)
			}
		})
	}
}

func rawRequest(t *testing.T, addr, req string) (int, string) {
	t.Helper()
	conn, err := dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&sb)
	return resp.StatusCode, sb.String()
}

func TestRouterErrorMapping(t *testing.T) {
	rt := NewRouter()
	secret := "pq: password authentication failed for user sluice at 10.0.0.7"
	rt.Handle("GET", "/internal", func(http.ResponseWriter, *http.Request, Params) error {
		return errors.New(secret)
	})
	rt.Handle("GET", "/classified", func(http.ResponseWriter, *http.Request, Params) error {
		return fmtWrap(apierr.Conflict("slug", "a gateway with this slug exists"))
	})
	rt.Handle("GET", "/panic", func(http.ResponseWriter, *http.Request, Params) error {
		panic(secret)
	})
	rt.Handle("GET", "/late", func(w http.ResponseWriter, _ *http.Request, _ Params) error {
		_ = JSON(w, http.StatusOK, map[string]int{"n": 1})
		return errors.New("late failure")
	})

	t.Run("unclassified is a generic 500, logged with the request id", func(t *testing.T) {
		logs := captureLog(t)
		req := httptest.NewRequest("GET", "/internal", strings.NewReader(`{"password":"hunter2"}`))
		req.Header.Set(RequestIDHeader, "req-123")
		rec := httptest.NewRecorder()
		rt.ServeHTTP(rec, req)
		got := readError(t, rec)
		if diff := diffError(got, wireError{Status: 500, Type: "api_error", Code: "internal_error",
			Message: apierr.Internal().Message}); diff != "" {
			t.Errorf("error (-want +got):\n%s", diff)
		}
		if strings.Contains(rec.Body.String(), "password") || strings.Contains(rec.Body.String(), "10.0.0.7") {
			t.Errorf("500 body leaks the cause: %s", rec.Body)
		}
		for _, want := range []string{secret, `"request_id":"req-123"`} {
			if !strings.Contains(logs.String(), want) {
				t.Errorf("log %s lacks %q", logs, want)
			}
		}
		if strings.Contains(logs.String(), "hunter2") {
			t.Errorf("log contains the request body: %s", logs)
		}
	})
	t.Run("wrapped apierr keeps its shape", func(t *testing.T) {
		logs := captureLog(t)
		rec := serve(rt, "GET", "/classified")
		if diff := diffError(readError(t, rec), wireError{Status: 409, Type: "invalid_request_error", Code: "conflict",
			Message: "a gateway with this slug exists", Param: ptr("slug")}); diff != "" {
			t.Errorf("error (-want +got):\n%s", diff)
		}
		if logs.Len() != 0 {
			t.Errorf("a classified error was logged: %s", logs)
		}
	})
	t.Run("panic is a generic 500", func(t *testing.T) {
		logs := captureLog(t)
		rec := serve(rt, "GET", "/panic")
		if diff := diffError(readError(t, rec), wantErr(500, "internal_error", "")); diff != "" {
			t.Errorf("error (-want +got):\n%s", diff)
		}
		if strings.Contains(rec.Body.String(), "password") {
			t.Errorf("500 body leaks the panic: %s", rec.Body)
		}
		if !strings.Contains(logs.String(), "admin handler panicked") {
			t.Errorf("panic not logged: %s", logs)
		}
	})
	t.Run("error after writing is logged, response kept", func(t *testing.T) {
		logs := captureLog(t)
		rec := serve(rt, "GET", "/late")
		if rec.Code != 200 || rec.Body.String() != "{\"n\":1}\n" {
			t.Errorf("response = %d %q, want 200 {\"n\":1}", rec.Code, rec.Body)
		}
		if !strings.Contains(logs.String(), "late failure") {
			t.Errorf("late error not logged: %s", logs)
		}
	})
}

func TestRouterLimitsBodies(t *testing.T) {
	rt := NewRouter()
	rt.Handle("POST", "/raw", func(w http.ResponseWriter, r *http.Request, _ Params) error {
		_, err := readAllBody(r)
		var mbe *http.MaxBytesError
		if !errors.As(err, &mbe) {
			t.Errorf("read error = %v, want *http.MaxBytesError", err)
		}
		return NoContent(w)
	})
	req := httptest.NewRequest("POST", "/raw", strings.NewReader(strings.Repeat("a", MaxBodyBytes+1)))
	rt.ServeHTTP(httptest.NewRecorder(), req)
}

func TestHandlePanicsOnBadPatterns(t *testing.T) {
	h := echo("x")
	tests := []struct{ method, pattern string }{
		{"GET", ""},
		{"GET", "admin"},
		{"GET", "/admin/"},
		{"GET", "/admin//x"},
		{"GET", "/admin/{id"},
		{"GET", "/admin/{}"},
		{"GET", "/admin/{1d}"},
		{"GET", "/admin/x{id}"},
		{"GET", "/admin/{id}/{id}"},
		{"GET", "/admin/{rest...}/x"},
		{"GET", "/admin/../x"},
		{"GET", "/admin/a%2fb"},
		{"get", "/admin"},
		{"", "/admin"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.pattern, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Handle(%q, %q) did not panic", tt.method, tt.pattern)
				}
			}()
			NewRouter().Handle(tt.method, tt.pattern, h)
		})
	}
	t.Run("duplicate", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("second registration did not panic")
			}
		}()
		rt := NewRouter()
		rt.Handle("GET", "/a/{id}", h)
		rt.Handle("GET", "/a/{name}", h)
	})
	t.Run("nil handler", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("nil handler did not panic")
			}
		}()
		NewRouter().Handle("GET", "/a", nil)
	})
}

func TestParamsGet(t *testing.T) {
	p := Params{{"id", "gw_1"}, {"model", "a/b"}}
	for _, tt := range []struct{ name, want string }{{"id", "gw_1"}, {"model", "a/b"}, {"nope", ""}} {
		if got := p.Get(tt.name); got != tt.want {
			t.Errorf("Get(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// FuzzSplitPath checks that an accepted path is canonical: no empty, dot or
// escaped-separator segment, and decoded segments free of '/', '\' and
// control bytes.
func FuzzSplitPath(f *testing.F) {
	for _, s := range []string{"/", "/admin/v1/tenants", "/a//b", "/a/%2e%2e", "/a/%2F", "/a/b/", "/a/%c3%a9", "/a/%", "\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		rawSegs, segs, err := splitPath(raw)
		if err != nil {
			var e *apierr.Error
			if !errors.As(err, &e) || e.Code != "invalid_path" || e.Status != 400 {
				t.Fatalf("splitPath(%q) error = %v, want 400 invalid_path", raw, err)
			}
			return
		}
		if raw != "/"+strings.Join(rawSegs, "/") && !(raw == "/" && len(rawSegs) == 0) {
			t.Fatalf("splitPath(%q) raw segments %q do not rebuild it", raw, rawSegs)
		}
		for _, s := range segs {
			if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\\") {
				t.Fatalf("splitPath(%q) accepted segment %q", raw, s)
			}
			for _, c := range []byte(s) {
				if c < 0x20 || c == 0x7f {
					t.Fatalf("splitPath(%q) accepted control byte in %q", raw, s)
				}
			}
		}
	})
}

// BenchmarkRouter measures one dispatch of a three-wildcard route, and a
// 405 (which looks up every registered method for Allow).
func BenchmarkRouter(b *testing.B) {
	rt := testRouter()
	for _, bb := range []struct{ name, method, path string }{
		{"match", http.MethodDelete, "/admin/v1/gateways/gw_1/keys/openai/prod"},
		{"405", http.MethodPut, "/admin/v1/tenants/acme"},
	} {
		b.Run(bb.name, func(b *testing.B) {
			req := httptest.NewRequest(bb.method, bb.path, nil)
			b.ReportAllocs()
			for b.Loop() {
				rt.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}
