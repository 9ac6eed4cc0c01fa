package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

// Prefix is where the app lives: its client routes and assets are under
// /ui/, and / serves the app too.
const Prefix = "/ui/"

// ContentSecurityPolicy is sent with every answer of the dashboard: scripts,
// styles, fonts and API calls from this origin only, images also as data:
// URLs, no framing, no plugins. The app sets styles through the CSSOM only,
// so no 'unsafe-inline' is needed.
const ContentSecurityPolicy = "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'"

const (
	// immutable is the cache policy of hashed assets: their name changes
	// with their content.
	immutable = "public, max-age=31536000, immutable"
	// revalidate is the cache policy of index.html, which names the current
	// assets: always asked again (answered 304 by ETag when unchanged).
	revalidate = "no-cache"
	// hourly is the cache policy of unhashed files (favicon.svg).
	hourly = "public, max-age=3600"
	// minGzip is the smallest file worth compressing.
	minGzip = 1024
)

// file is one servable file, read once at start-up.
type file struct {
	body  []byte
	gz    []byte // gzip of body; nil when not worth it
	ctype string
	etag  string
	cache string
}

// handler serves the app from files, keyed by their path in dist.
type handler struct {
	files map[string]*file
	index *file // nil: the assets were not built
}

// Handler returns the dashboard handler over the embedded build. It serves
// GET and HEAD of /, /ui and /ui/...: index.html for the app's client routes,
// the hashed assets under /ui/assets/ with a year-long cache, other built
// files (favicon.svg) for an hour. Without a build it answers a page that
// says how to build the dashboard.
func Handler() http.Handler {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		// fs.Sub fails only for an invalid name; "dist" is valid.
		panic(err)
	}
	return NewHandler(sub)
}

// NewHandler returns the dashboard handler over the files of a built app
// (index.html at the root). Handler uses it with the embedded build; tests
// pass their own files.
func NewHandler(fsys fs.FS) http.Handler {
	h := &handler{files: map[string]*file{}}
	_ = fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(path.Base(name), ".") {
			return nil
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil
		}
		f := newFile(name, body)
		switch {
		case name == "index.html":
			f.cache = revalidate
			h.index = f
		case strings.HasPrefix(name, "assets/"):
			f.cache = immutable
		default:
			f.cache = hourly
		}
		h.files[name] = f
		return nil
	})
	return h
}

func newFile(name string, body []byte) *file {
	sum := sha256.Sum256(body)
	f := &file{body: body, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, ctype: contentType(name)}
	if len(body) >= minGzip && compressible(f.ctype) {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		_, _ = zw.Write(body)
		_ = zw.Close()
		if b.Len() < len(body) {
			f.gz = b.Bytes()
		}
	}
	return f
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".json", ".map":
		return "application/json"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

func compressible(ctype string) bool {
	return strings.HasPrefix(ctype, "text/") || strings.HasPrefix(ctype, "application/json") || ctype == "image/svg+xml"
}

// IsDashboardPath reports whether the dashboard serves p: /, /ui and /ui/....
func IsDashboardPath(p string) bool {
	return p == "/" || p == "/ui" || strings.HasPrefix(p, Prefix)
}

// Mount routes the dashboard's paths to ui and every other path to api.
// The front server hands the admin handler everything that is neither /v1
// nor /healthz, so this puts the dashboard beside /admin/.
func Mount(ui, api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if IsDashboardPath(r.URL.Path) {
			ui.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// ServeHTTP implements http.Handler.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", ContentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	if !IsDashboardPath(p) {
		http.NotFound(w, r)
		return
	}
	if h.index == nil {
		h.notBuilt(w, r)
		return
	}
	name := strings.TrimPrefix(p, Prefix)
	if p == "/" || p == "/ui" {
		name = ""
	}
	if f, ok := h.files[name]; ok {
		h.serve(w, r, f)
		return
	}
	// A path that names a file (an extension, or anything under assets/)
	// and is not one: 404, so that a stale asset URL fails visibly instead
	// of being answered with HTML.
	if name != "" && (strings.HasPrefix(name, "assets/") || strings.Contains(path.Base(name), ".")) {
		hd.Set("Cache-Control", "no-store")
		http.NotFound(w, r)
		return
	}
	h.serve(w, r, h.index)
}

// serve answers one file, gzip-compressed when the client accepts it, with
// its ETag (http.ServeContent answers If-None-Match with 304).
func (h *handler) serve(w http.ResponseWriter, r *http.Request, f *file) {
	hd := w.Header()
	hd.Set("Content-Type", f.ctype)
	hd.Set("Cache-Control", f.cache)
	body := f.body
	etag := f.etag
	if f.gz != nil {
		hd.Add("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			body = f.gz
			hd.Set("Content-Encoding", "gzip")
			etag = strings.TrimSuffix(f.etag, `"`) + `-gz"`
		}
	}
	hd.Set("ETag", etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.ReplaceAll(strings.TrimSpace(q), " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// notBuiltPage is answered in place of the app when the binary was built
// without the dashboard's assets.
const notBuiltPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sluice — dashboard not built</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;line-height:1.5;color:#0f172a}
code,pre{background:#f1f5f9;padding:.1rem .3rem;border-radius:4px}pre{padding:.75rem}</style></head>
<body><h1>The Sluice dashboard is not built</h1>
<p>This sluice binary was compiled without the dashboard's assets. The admin API
(<code>/admin/v1/…</code>, <code>/admin/graphql</code>) and the inference API work as usual.</p>
<p>To include the dashboard, build it and then the binary, from the repository:</p>
<pre>make web        # or: cd web &amp;&amp; npm ci &amp;&amp; npm run build
make build      # or: make run</pre>
<p>See <code>docs/dashboard.md</code>.</p></body></html>
`

func (h *handler) notBuilt(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	// The page has one inline <style>; allow exactly that for this answer.
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	if strings.HasPrefix(r.URL.Path, Prefix+"assets/") {
		http.NotFound(w, r)
		return
	}
	http.ServeContent(w, r, "", time.Time{}, strings.NewReader(notBuiltPage))
}
