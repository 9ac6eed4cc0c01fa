package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

const testIndex = `<!doctype html><html><head><script type="module" src="/ui/assets/index-abc123.js"></script></head><body><div id="root"></div></body></html>`

func builtApp() fstest.MapFS {
	return fstest.MapFS{
		"index.html":              {Data: []byte(testIndex)},
		"favicon.svg":             {Data: []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)},
		"assets/index-abc123.js":  {Data: []byte(strings.Repeat("console.log('sluice');\n", 200))},
		"assets/index-def456.css": {Data: []byte("body{margin:0}")},
		".gitkeep":                {Data: nil},
	}
}

func get(t *testing.T, h http.Handler, method, target string, hdr map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHandlerServesTheApp(t *testing.T) {
	h := NewHandler(builtApp())
	tests := []struct {
		name, path   string
		status       int
		ctype, cache string
		contains     string
	}{
		{"root", "/", 200, "text/html; charset=utf-8", "no-cache", `<div id="root">`},
		{"ui", "/ui", 200, "text/html; charset=utf-8", "no-cache", `<div id="root">`},
		{"ui slash", "/ui/", 200, "text/html; charset=utf-8", "no-cache", `<div id="root">`},
		{"client route", "/ui/gateways/gw_01abc/keys", 200, "text/html; charset=utf-8", "no-cache", `<div id="root">`},
		{"log route with a uuid", "/ui/logs/0193a5f2-7c1e-7b20-9d4e-3f1a2b3c4d5e", 200, "text/html; charset=utf-8", "no-cache", `<div id="root">`},
		{"hashed script", "/ui/assets/index-abc123.js", 200, "text/javascript; charset=utf-8", "public, max-age=31536000, immutable", "console.log"},
		{"hashed style", "/ui/assets/index-def456.css", 200, "text/css; charset=utf-8", "public, max-age=31536000, immutable", "body{"},
		{"unhashed file", "/ui/favicon.svg", 200, "image/svg+xml", "public, max-age=3600", "<svg"},
		{"stale asset", "/ui/assets/index-old.js", 404, "", "no-store", ""},
		{"missing file", "/ui/robots.txt", 404, "", "no-store", ""},
		{"index by name", "/ui/index.html", 200, "text/html; charset=utf-8", "no-cache", `<div id="root">`},
		{"dotfile", "/ui/.gitkeep", 404, "", "no-store", ""},
		{"outside the app", "/elsewhere", 404, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := get(t, h, "GET", tt.path, nil)
			b := body(t, res)
			if res.StatusCode != tt.status {
				t.Fatalf("GET %s: status %d, want %d", tt.path, res.StatusCode, tt.status)
			}
			if tt.ctype != "" && res.Header.Get("Content-Type") != tt.ctype {
				t.Errorf("Content-Type %q, want %q", res.Header.Get("Content-Type"), tt.ctype)
			}
			if got := res.Header.Get("Cache-Control"); got != tt.cache {
				t.Errorf("Cache-Control %q, want %q", got, tt.cache)
			}
			if !strings.Contains(b, tt.contains) {
				t.Errorf("body %.80q does not contain %q", b, tt.contains)
			}
			if got := res.Header.Get("Content-Security-Policy"); got != ContentSecurityPolicy {
				t.Errorf("Content-Security-Policy %q, want %q", got, ContentSecurityPolicy)
			}
			if res.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Error("no X-Content-Type-Options: nosniff")
			}
		})
	}
}

func TestContentSecurityPolicyIsStrict(t *testing.T) {
	for _, want := range []string{"default-src 'self'", "connect-src 'self'", "img-src 'self' data:", "frame-ancestors 'none'"} {
		if !strings.Contains(ContentSecurityPolicy, want) {
			t.Errorf("CSP %q lacks %q", ContentSecurityPolicy, want)
		}
	}
	if strings.Contains(ContentSecurityPolicy, "unsafe-eval") || strings.Contains(ContentSecurityPolicy, "script-src") {
		t.Errorf("CSP %q: scripts must come from 'self' only (default-src)", ContentSecurityPolicy)
	}
}

func TestHandlerConditionalAndCompressed(t *testing.T) {
	h := NewHandler(builtApp())
	res := get(t, h, "GET", "/ui/", nil)
	etag := res.Header.Get("ETag")
	if etag == "" {
		t.Fatal("index.html has no ETag")
	}
	if res := get(t, h, "GET", "/ui/overview", map[string]string{"If-None-Match": etag}); res.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the current ETag: status %d, want 304", res.StatusCode)
	}

	res = get(t, h, "GET", "/ui/assets/index-abc123.js", map[string]string{"Accept-Encoding": "br, gzip"})
	if res.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(res.Header.Get("Vary"), "Accept-Encoding") {
		t.Fatalf("Content-Encoding %q, Vary %q: want gzip and Vary: Accept-Encoding", res.Header.Get("Content-Encoding"), res.Header.Get("Vary"))
	}
	zr, err := gzip.NewReader(bytes.NewReader([]byte(body(t, res))))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if !strings.HasPrefix(string(plain), "console.log") {
		t.Errorf("gunzipped body %.40q", plain)
	}
	if res := get(t, h, "GET", "/ui/assets/index-abc123.js", map[string]string{"Accept-Encoding": "gzip;q=0"}); res.Header.Get("Content-Encoding") != "" {
		t.Error("gzip;q=0 still got a gzip body")
	}
}

func TestHandlerMethods(t *testing.T) {
	h := NewHandler(builtApp())
	if res := get(t, h, "HEAD", "/ui/", nil); res.StatusCode != 200 || body(t, res) != "" {
		t.Errorf("HEAD /ui/: status %d, want 200 without a body", res.StatusCode)
	}
	res := get(t, h, "POST", "/ui/", nil)
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /ui/: status %d Allow %q, want 405 with Allow: GET, HEAD", res.StatusCode, res.Header.Get("Allow"))
	}
}

func TestHandlerWithoutABuild(t *testing.T) {
	h := NewHandler(fstest.MapFS{".gitkeep": {Data: nil}})
	for _, p := range []string{"/", "/ui/", "/ui/overview"} {
		res := get(t, h, "GET", p, nil)
		b := body(t, res)
		if res.StatusCode != 200 || !strings.Contains(b, "make web") || !strings.Contains(b, "npm ci &amp;&amp; npm run build") {
			t.Errorf("GET %s without a build: status %d, body %.120q: want the how-to-build page", p, res.StatusCode, b)
		}
		if res.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s without a build: Cache-Control %q, want no-store", p, res.Header.Get("Cache-Control"))
		}
	}
	if res := get(t, h, "GET", "/ui/assets/index-abc123.js", nil); res.StatusCode != 404 {
		t.Errorf("an asset without a build: status %d, want 404", res.StatusCode)
	}
}

// TestEmbeddedHandler checks the handler over the embedded directory, built
// or not: / answers HTML either way.
func TestEmbeddedHandler(t *testing.T) {
	res := get(t, Handler(), "GET", "/", nil)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET / over the embedded build: status %d, Content-Type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
}

func TestMount(t *testing.T) {
	ui := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ui") })
	api := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "api") })
	h := Mount(ui, api)
	for p, want := range map[string]string{
		"/":                  "ui",
		"/ui":                "ui",
		"/ui/":               "ui",
		"/ui/gateways":       "ui",
		"/admin/graphql":     "api",
		"/admin/v1/tenants":  "api",
		"/uix":               "api",
		"/metrics":           "api",
		"/favicon.ico":       "api",
		"/admin/v1/session/": "api",
	} {
		if got := body(t, get(t, h, "GET", p, nil)); got != want {
			t.Errorf("GET %s went to %q, want %q", p, got, want)
		}
	}
}
