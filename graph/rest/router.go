package rest

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/internal/apierr"
)

// HandlerFunc handles one admin request. It writes its response on success
// and returns an error otherwise; the router answers the error with
// WriteError. A handler that has already written must not return an error
// (it is logged, since nothing can be answered any more).
type HandlerFunc func(w http.ResponseWriter, r *http.Request, p Params) error

// Param is one path parameter: the name in the pattern and the decoded value.
type Param struct {
	Key   string
	Value string
}

// Params are the path parameters of a matched route, in pattern order.
type Params []Param

// Get returns the value of the named parameter, or "" when there is none.
func (ps Params) Get(name string) string {
	for _, p := range ps {
		if p.Key == name {
			return p.Value
		}
	}
	return ""
}

// Router dispatches requests by method and path on the standard library's
// http.ServeMux, in its method-and-pattern form ("GET /admin/v1/x/{id}").
// Patterns are whole paths such as /admin/v1/gateways/{id}/keys/{provider}/{alias};
// a segment {name} matches one segment and a final {name...} matches the
// rest of the path (one or more segments, e.g. a model id with slashes).
// Literal segments beat wildcards, and a single-segment wildcard beats a
// rest capture (ServeMux's "most specific pattern wins").
//
// The Router keeps what ServeMux does not give: only canonical paths are
// routed (see splitPath), others are answered 400 invalid_path; literals
// are matched against the path exactly as sent (an escaped letter is
// another path); an unknown path is a 404 and a known path with another
// method a 405 with Allow, both in the contract's JSON error shape, where
// ServeMux answers plain text; and HEAD is not implied by GET, nor OPTIONS
// answered.
//
// Routes are registered before serving; Handle is not safe to call
// concurrently with ServeHTTP.
type Router struct {
	mux *http.ServeMux
	// routes are the registered routes, for Routes.
	routes []Route
	// methods are the registered methods, sorted, for the Allow header.
	methods []string
}

// route is what the mux holds for one method and pattern. The mux is
// used to match only: a route is never served by the mux itself (which
// would answer its misses in plain text), so its ServeHTTP is not called.
type route struct {
	h       HandlerFunc
	method  string
	pattern string
	names   []string // the wildcard names, in order
	segs    []string // the pattern's segments, to read the values of names
}

// ServeHTTP implements http.Handler for the mux; Router.ServeHTTP calls the
// route's handler itself.
func (*route) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	WriteError(w, r, apierr.Internal())
}

var _ http.Handler = (*Router)(nil)

// NewRouter returns an empty router.
func NewRouter() *Router { return &Router{mux: http.NewServeMux()} }

// Handle registers h for method and pattern. It panics on a malformed
// pattern or method, a nil handler, or a second registration of the same
// method and pattern shape: those are programming errors found at start-up.
func (rt *Router) Handle(method, pattern string, h HandlerFunc) {
	if method == "" || strings.IndexFunc(method, func(c rune) bool { return c < 'A' || c > 'Z' }) >= 0 {
		panic(fmt.Sprintf("rest: invalid method %q", method))
	}
	if h == nil {
		panic("rest: nil handler for " + method + " " + pattern)
	}
	segs, names, err := checkPattern(pattern)
	if err != nil {
		panic(fmt.Sprintf("rest: pattern %q: %v", pattern, err))
	}
	muxPattern := pattern
	if pattern == "/" {
		muxPattern = "/{$}" // the root only, not every path
	}
	func() {
		defer func() {
			if v := recover(); v != nil {
				panic(fmt.Sprintf("rest: %s %s: %v", method, pattern, v))
			}
		}()
		rt.mux.Handle(method+" "+muxPattern, &route{h: h, method: method, pattern: pattern, names: names, segs: segs})
	}()
	rt.routes = append(rt.routes, Route{Method: method, Pattern: pattern})
	if !slices.Contains(rt.methods, method) {
		rt.methods = append(rt.methods, method)
		slices.Sort(rt.methods)
	}
}

// list returns every route, sorted by pattern and method.
func (rt *Router) list() []Route {
	out := slices.Clone(rt.routes)
	slices.SortFunc(out, func(a, b Route) int {
		if c := strings.Compare(a.Pattern, b.Pattern); c != 0 {
			return c
		}
		return strings.Compare(a.Method, b.Method)
	})
	return out
}

// match returns the pattern a request for method and the raw path is
// dispatched to, as ServeHTTP would.
func (rt *Router) match(method, path string) (string, bool) {
	if _, _, err := splitPath(path); err != nil {
		return "", false
	}
	if ro := rt.lookup(method, path); ro != nil {
		return ro.pattern, true
	}
	return "", false
}

// lookup returns the route of method for the canonical raw path, or nil.
//
// The mux is given the raw path with every byte as sent: its segments are
// unescaped once by the mux, so that %-escaped text reaches it as the
// literal text the client sent ("%74enants" is not "tenants"), as
// wildcard values are decoded by the router (see params). A route of
// another method (the mux's GET patterns match HEAD too) is no match.
func (rt *Router) lookup(method, raw string) *route {
	return rt.lookupIn(&http.Request{Method: method, URL: &url.URL{Path: raw}, Host: "router"})
}

// lookupIn is lookup for a request built by lookup; allowed reuses one
// for every method.
func (rt *Router) lookupIn(r *http.Request) *route {
	h, _ := rt.mux.Handler(r)
	if ro, ok := h.(*route); ok && ro.method == r.Method {
		return ro
	}
	return nil
}

// allowed returns the methods that have a route for the raw path.
func (rt *Router) allowed(raw string) []string {
	var allow []string
	r := &http.Request{URL: &url.URL{Path: raw}, Host: "router"}
	for _, m := range rt.methods {
		r.Method = m
		if rt.lookupIn(r) != nil {
			allow = append(allow, m)
		}
	}
	return allow
}

// params returns the values of ro's wildcards in the decoded segments of
// the path it matched. A rest capture joins decoded segments with "/",
// which is unambiguous because a decoded segment never contains "/".
func (ro *route) params(dec []string) Params {
	ps := make(Params, 0, len(ro.names))
	for i, s := range ro.segs {
		if !strings.HasPrefix(s, "{") {
			continue
		}
		name := ro.names[len(ps)]
		if strings.HasSuffix(s, "...}") {
			ps = append(ps, Param{Key: name, Value: strings.Join(dec[i:], "/")})
			break
		}
		ps = append(ps, Param{Key: name, Value: dec[i]})
	}
	return ps
}

// checkPattern checks a pattern and returns its segments and wildcard
// names: it must start with / and not end with one (except the root),
// literal segments must be canonical, and wildcards are {name} or a final
// {name...} with distinct names.
func checkPattern(pattern string) (segs, names []string, err error) {
	if pattern == "/" {
		return nil, nil, nil
	}
	if !strings.HasPrefix(pattern, "/") || strings.HasSuffix(pattern, "/") {
		return nil, nil, fmt.Errorf("must start and must not end with /")
	}
	segs = strings.Split(pattern[1:], "/")
	for i, s := range segs {
		if !strings.HasPrefix(s, "{") {
			if err := checkLiteral(s); err != nil {
				return nil, nil, err
			}
			continue
		}
		name, ok := strings.CutSuffix(s, "}")
		name = name[1:]
		name, isRest := strings.CutSuffix(name, "...")
		if !ok || !isIdent(name) {
			return nil, nil, fmt.Errorf("bad wildcard %q", s)
		}
		if slices.Contains(names, name) {
			return nil, nil, fmt.Errorf("wildcard %q appears twice", name)
		}
		if isRest && i != len(segs)-1 {
			return nil, nil, fmt.Errorf("%q must be the last segment", s)
		}
		names = append(names, name)
	}
	return segs, names, nil
}

func checkLiteral(s string) error {
	if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "{}%\\") {
		return fmt.Errorf("bad literal segment %q", s)
	}
	if _, err := decodeSegment(s); err != nil {
		return fmt.Errorf("bad literal segment %q", s)
	}
	return nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// ServeHTTP routes the request and answers any error its handler returns.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	raw := requestPath(r)
	_, dec, err := splitPath(raw)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	found := rt.lookup(r.Method, raw)
	if found == nil {
		if allow := rt.allowed(raw); len(allow) > 0 {
			WriteError(w, r, apierr.MethodNotAllowed(strings.Join(allow, ", ")))
			return
		}
		WriteError(w, r, apierr.New(http.StatusNotFound, apierr.CodeNotFound, "no resource at this path"))
		return
	}
	params := found.params(dec)

	if r.Body != nil && r.Body != http.NoBody {
		// Every handler is bounded, whether it uses DecodeJSON or not; with w
		// the server also closes the connection after an oversized body.
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	}
	tw := &trackingWriter{ResponseWriter: w}
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v == http.ErrAbortHandler {
			panic(v)
		}
		slog.ErrorContext(r.Context(), "admin handler panicked",
			"request_id", requestID(r), "method", r.Method, "path", requestPath(r),
			"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		if !tw.wrote {
			WriteError(w, r, apierr.Internal())
		}
	}()
	if err := found.h(tw, r, params); err != nil {
		if tw.wrote {
			slog.ErrorContext(r.Context(), "admin handler returned an error after writing its response",
				"request_id", requestID(r), "method", r.Method, "path", requestPath(r), "err", err)
			return
		}
		WriteError(w, r, err)
	}
}

// trackingWriter records whether the handler has started its response, so
// that a returned error is answered only when nothing was written yet.
type trackingWriter struct {
	http.ResponseWriter
	wrote bool
}

func (t *trackingWriter) WriteHeader(code int) {
	if code >= 200 || code == http.StatusSwitchingProtocols {
		t.wrote = true
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the server's writer (Flush,
// deadlines).
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
