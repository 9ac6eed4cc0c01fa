package rest

import (
	"fmt"
	"log/slog"
	"net/http"
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

// Router dispatches requests by method and path. Patterns are whole paths
// such as /admin/v1/gateways/{id}/keys/{provider}/{alias}; a segment {name}
// matches one segment and a final {name...} matches the rest of the path
// (one or more segments, e.g. a model id with slashes). Literal segments
// beat wildcards, and a single-segment wildcard beats a rest capture.
//
// Only canonical paths are routed (see splitPath); others are answered 400
// invalid_path. An unknown path is a 404, a known path with another method
// a 405 with Allow. HEAD and OPTIONS are not implied.
//
// Routes are registered before serving; Handle is not safe to call
// concurrently with ServeHTTP.
type Router struct {
	root node
}

// node is one path segment of the route tree.
type node struct {
	literal map[string]*node
	param   *node            // a {name} segment
	rest    *node            // a final {name...} segment; a leaf
	routes  map[string]route // by method; nil when no pattern ends here
}

type route struct {
	h       HandlerFunc
	names   []string // the wildcard names, in order
	pattern string
}

var _ http.Handler = (*Router)(nil)

// NewRouter returns an empty router.
func NewRouter() *Router { return &Router{} }

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
	n, names, err := rt.root.insert(pattern)
	if err != nil {
		panic(fmt.Sprintf("rest: pattern %q: %v", pattern, err))
	}
	if _, dup := n.routes[method]; dup {
		panic(fmt.Sprintf("rest: %s %s is registered twice", method, pattern))
	}
	if n.routes == nil {
		n.routes = make(map[string]route)
	}
	n.routes[method] = route{h: h, names: names, pattern: pattern}
}

// list returns every route, sorted by pattern and method.
func (rt *Router) list() []Route {
	var out []Route
	var visit func(n *node)
	visit = func(n *node) {
		for m, ro := range n.routes {
			out = append(out, Route{Method: m, Pattern: ro.pattern})
		}
		for _, c := range n.literal {
			visit(c)
		}
		if n.param != nil {
			visit(n.param)
		}
		if n.rest != nil {
			visit(n.rest)
		}
	}
	visit(&rt.root)
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
	raw, dec, err := splitPath(path)
	if err != nil {
		return "", false
	}
	var pattern string
	rt.root.walk(raw, dec, nil, func(n *node, _ []string) bool {
		if ro, ok := n.routes[method]; ok {
			pattern = ro.pattern
			return true
		}
		return false
	})
	return pattern, pattern != ""
}

// insert walks (creating) the nodes of pattern and returns the last one and
// the wildcard names.
func (n *node) insert(pattern string) (*node, []string, error) {
	if pattern == "/" {
		return n, nil, nil
	}
	if !strings.HasPrefix(pattern, "/") || strings.HasSuffix(pattern, "/") {
		return nil, nil, fmt.Errorf("must start and must not end with /")
	}
	segs := strings.Split(pattern[1:], "/")
	var names []string
	for i, s := range segs {
		if !strings.HasPrefix(s, "{") {
			if err := checkLiteral(s); err != nil {
				return nil, nil, err
			}
			if n.literal == nil {
				n.literal = make(map[string]*node)
			}
			if n.literal[s] == nil {
				n.literal[s] = &node{}
			}
			n = n.literal[s]
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
		names = append(names, name)
		if isRest {
			if i != len(segs)-1 {
				return nil, nil, fmt.Errorf("%q must be the last segment", s)
			}
			if n.rest == nil {
				n.rest = &node{}
			}
			n = n.rest
			continue
		}
		if n.param == nil {
			n.param = &node{}
		}
		n = n.param
	}
	return n, names, nil
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

// walk visits the nodes with routes that match the path, most specific
// first, until visit returns true. Literals are matched against the raw
// segments (no normalisation); wildcards take the decoded values. A rest
// capture joins decoded segments with "/", which is unambiguous because a
// decoded segment never contains "/".
func (n *node) walk(raw, dec, vals []string, visit func(*node, []string) bool) bool {
	if len(raw) == 0 {
		return n.routes != nil && visit(n, vals)
	}
	if c := n.literal[raw[0]]; c != nil && c.walk(raw[1:], dec[1:], vals, visit) {
		return true
	}
	if n.param != nil && n.param.walk(raw[1:], dec[1:], append(vals, dec[0]), visit) {
		return true
	}
	if n.rest != nil && n.rest.routes != nil {
		return visit(n.rest, append(vals, strings.Join(dec, "/")))
	}
	return false
}

// ServeHTTP routes the request and answers any error its handler returns.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	raw, dec, err := splitPath(requestPath(r))
	if err != nil {
		WriteError(w, r, err)
		return
	}
	var (
		found   *route
		params  Params
		matched bool
		allow   []string
	)
	rt.root.walk(raw, dec, nil, func(n *node, vals []string) bool {
		matched = true
		if ro, ok := n.routes[r.Method]; ok {
			found = &ro
			params = make(Params, len(vals))
			for i, v := range vals {
				params[i] = Param{Key: ro.names[i], Value: v}
			}
			return true
		}
		for m := range n.routes {
			allow = append(allow, m)
		}
		return false
	})
	switch {
	case found != nil:
	case matched:
		slices.Sort(allow)
		WriteError(w, r, apierr.MethodNotAllowed(strings.Join(slices.Compact(allow), ", ")))
		return
	default:
		WriteError(w, r, apierr.New(http.StatusNotFound, apierr.CodeNotFound, "no resource at this path"))
		return
	}

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
