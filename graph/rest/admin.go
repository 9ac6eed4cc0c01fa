package rest

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
)

// AdminOptions configure the admin handler.
type AdminOptions struct {
	// GraphQL serves POST /admin/graphql, behind the same authentication as
	// the REST paths. Nil leaves the path unrouted (404).
	GraphQL http.Handler
	// Logger receives the log lines of the GraphQL mount (a panic that
	// escaped it). Nil means slog.Default(). The REST framework itself logs
	// through slog.Default.
	Logger *slog.Logger
}

// Paths outside the routing tree.
const (
	adminPrefix = "/admin/"
	// sessionPath is signed in to with POST and no credential; signing out
	// (DELETE) needs the session's own credential like every other path.
	sessionPath = "/admin/v1/session"
	graphQLPath = "/admin/graphql"
)

// Ref kinds of admin.Service.Authorize.
const (
	refNone    = ""
	refTenant  = "tenant"
	refGateway = "gateway"
	refUser    = "user"
)

// adminAPI holds the REST shims of /admin/v1. Every shim has the same
// shape: take the principal that Authenticate resolved from the credential
// (401 before any shim runs), read the body or query, call the one domain
// function and answer its result. The domain function authorizes the call,
// once: the operation for the principal (403), then the resource of the
// path (404), then the input (400) — the contract's order of checks. When
// the input cannot even be read, the shim answers with refuse, which runs
// the same domain checks first, so the order holds there too. Permission
// logic lives in admin.Service only; REST and GraphQL call the same
// functions.
type adminAPI struct {
	svc *admin.Service
	now func() time.Time
}

// NewAdmin returns the admin API handler: every /admin/v1 path of the seed
// and the contract's extensions, and opts.GraphQL at POST /admin/graphql.
// All of it is behind Authenticate, except POST /admin/v1/session, which
// is how a dashboard user without a token signs in. A path outside
// /admin/ is answered 404 in the error shape (the dashboard is mounted in
// front of this handler).
func NewAdmin(svc *admin.Service, opts AdminOptions) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	a := &adminAPI{svc: svc, now: time.Now}
	rt := NewRouter()
	a.routes(rt)
	if opts.GraphQL != nil {
		rt.Handle(http.MethodPost, graphQLPath, mountGraphQL(opts.GraphQL, opts.Logger))
	}
	// Authenticate's public paths are per path, not per method: DELETE
	// /admin/v1/session must see the credential it revokes, so only the
	// sign-in request takes the public wrapper.
	authed := Authenticate(svc, rt)
	public := Authenticate(svc, rt, sessionPath)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := requestPath(r)
		switch {
		case !strings.HasPrefix(path, adminPrefix):
			w.Header().Set("X-Content-Type-Options", "nosniff")
			WriteError(w, r, apierr.New(http.StatusNotFound, apierr.CodeNotFound, "no resource at this path"))
		case r.Method == http.MethodPost && path == sessionPath:
			public.ServeHTTP(w, r)
		default:
			authed.ServeHTTP(w, r)
		}
	})
}

// routes registers every REST route of the admin API on rt.
func (a *adminAPI) routes(rt *Router) {
	a.tenantRoutes(rt)
	a.gatewayRoutes(rt)
	a.userRoutes(rt)
	a.accountRoutes(rt)
	a.figureRoutes(rt)
	a.seriesRoutes(rt)
	a.platformRoutes(rt)
}

// Route names one route of the admin API.
type Route struct {
	Method, Pattern string
}

// Routes lists every REST route of the admin API and POST /admin/graphql,
// sorted. The permission matrix test (internal/e2e) checks that each has a
// row in the endpoint × role table, so a new route cannot go untested.
func Routes() []Route {
	rt := listingRouter()
	return rt.list()
}

// MatchRoute returns the pattern of the admin route a request for method
// and path (raw, query string excluded) is dispatched to.
func MatchRoute(method, path string) (string, bool) {
	return listingRouter().match(method, path)
}

// listingRouter is a router with every admin route, for Routes and
// MatchRoute only: its handlers have no service and must not serve.
func listingRouter() *Router {
	rt := NewRouter()
	(&adminAPI{}).routes(rt)
	rt.Handle(http.MethodPost, graphQLPath, func(http.ResponseWriter, *http.Request, Params) error {
		return errors.New("listing router: not for serving")
	})
	return rt
}

// mountGraphQL adapts the GraphQL handler to the router, which gives it
// the canonical-path check, the 405 with Allow and the body bound. A panic
// that escapes the GraphQL handler is logged with log and answered 500
// when nothing was written yet.
func mountGraphQL(h http.Handler, log *slog.Logger) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, _ Params) (err error) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			log.ErrorContext(r.Context(), "graphql handler panicked",
				"request_id", requestID(r), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			// Logged here, so returned classified: the router answers it
			// when nothing was written yet.
			err = apierr.Internal()
		}()
		h.ServeHTTP(w, r)
		return nil
	}
}

// refuse answers a request whose input (body or query) could not be read
// with err: after the checks that come before any input in the contract's
// order, so that a caller who may not make the call learns nothing from
// the input it sent. Those checks are the domain's own (admin.Service
// Authorize: the operation for the principal, 403, then the resource of
// the path, 404), run here only because the domain function is not called.
// A request whose input reads is authorized once, by the domain function.
func (a *adminAPI) refuse(r *http.Request, op auth.Op, kind, id string, err error) error {
	if aerr := a.svc.Authorize(r.Context(), auth.From(r.Context()), op, admin.Ref{Kind: kind, ID: id}); aerr != nil {
		return aerr
	}
	return err
}

// pageOf reads ?limit= and ?cursor=.
func pageOf(r *http.Request) (admin.Page, error) {
	limit, cursor, err := PageParams(r)
	if err != nil {
		return admin.Page{}, err
	}
	return admin.Page{Limit: limit, Cursor: cursor}, nil
}

// rangeOf reads ?from= and ?to= (default: the last 24 hours).
func (a *adminAPI) rangeOf(r *http.Request) (admin.Range, error) {
	from, to, err := TimeRange(r, a.now())
	if err != nil {
		return admin.Range{}, err
	}
	return admin.Range{From: from, To: to}, nil
}

// queryParam returns the value of the optional query parameter name, ""
// when it is absent; a parameter given twice is a 400.
func queryParam(r *http.Request, name string) (string, error) {
	q, err := query(r)
	if err != nil {
		return "", err
	}
	v, _, err := single(q, name)
	return v, err
}

// boolParam reads an optional ?name=true|false; absent is false.
func boolParam(r *http.Request, name string) (bool, error) {
	q, err := query(r)
	if err != nil {
		return false, err
	}
	v, ok, err := single(q, name)
	switch {
	case err != nil:
		return false, err
	case !ok || v == "false":
		return false, nil
	case v == "true":
		return true, nil
	}
	return false, apierr.Invalid(name, "%s must be true or false", name)
}

// intParam reads an optional integer ?name= within [lo, hi]; absent is 0.
func intParam(r *http.Request, name string, lo, hi int) (int, error) {
	v, err := queryParam(r, name)
	if err != nil || v == "" {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, apierr.Invalid(name, "%s must be an integer from %d to %d", name, lo, hi)
	}
	return n, nil
}

// requiredParam reads a query parameter that must be given and non-empty.
func requiredParam(r *http.Request, name string) (string, error) {
	v, err := queryParam(r, name)
	if err != nil {
		return "", err
	}
	if v == "" {
		return "", apierr.Invalid(name, "the query parameter %s is required", name)
	}
	return v, nil
}

// errNoResult is a domain function answering neither a result nor an
// error: a bug, answered 500 and logged by the router.
var errNoResult = errors.New("admin service returned no result and no error")

// writeObject answers status with the object v, or the error.
func writeObject[T any](w http.ResponseWriter, status int, v *T, err error) error {
	if err != nil {
		return err
	}
	if v == nil {
		return errNoResult
	}
	return JSON(w, status, v)
}

// writeList answers a page of a listing, or the error.
func writeList[T any](w http.ResponseWriter, l *admin.List[T], err error) error {
	if err != nil {
		return err
	}
	if l == nil {
		return errNoResult
	}
	if l.TotalCount != nil { // {"data","next_cursor","total_count"}
		return JSON(w, http.StatusOK, l)
	}
	return List(w, l.Data, l.NextCursor)
}

// writeNoContent answers 204, or the error.
func writeNoContent(w http.ResponseWriter, err error) error {
	if err != nil {
		return err
	}
	return NoContent(w)
}
