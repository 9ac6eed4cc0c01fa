package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
)

// Options configure the GraphQL handler. Zero values take the defaults.
type Options struct {
	// MaxComplexity bounds the cost of one operation (default 1000): each
	// field costs 1, and a list field costs its selection once per page of
	// 50 rows it asks for.
	MaxComplexity int
	// MaxDepth bounds the nesting of fields (default 10).
	MaxDepth int
	// MaxAliases bounds the aliased fields of one operation, fragments
	// expanded (default 50).
	MaxAliases int
	// Logger receives internal errors with their request id (default
	// slog.Default()).
	Logger *slog.Logger
}

const (
	// maxBodyBytes bounds a request body, as on the REST paths (1 MiB).
	maxBodyBytes = 1 << 20
	// parserTokenLimit bounds the tokens of a query document, so that the
	// parser's work is bounded before any limit is measured. Large inputs
	// (a price list) belong in variables, which it does not count.
	parserTokenLimit = 20_000
	// queryCacheSize is the number of parsed and validated query documents
	// kept; the dashboard sends a small fixed set.
	queryCacheSize = 1000
)

func (o Options) withDefaults() Options {
	if o.MaxComplexity <= 0 {
		o.MaxComplexity = 1000
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = 10
	}
	if o.MaxAliases <= 0 {
		o.MaxAliases = 50
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// graphqlHandler serves the admin GraphQL API.
type graphqlHandler struct {
	srv *handler.Server
}

// NewHandler returns the GraphQL handler of the admin API over svc: POST
// with a JSON body only (no GET, multipart, websockets or batches), with
// the depth, alias and complexity limits of opts, and introspection for
// the Administrator only.
//
// Authentication happens before it: a middleware puts the *auth.Principal
// in the request context (auth.With); a request without one is answered
// 401.
func NewHandler(svc *admin.Service, opts Options) http.Handler {
	opts = opts.withDefaults()
	es := NewExecutableSchema(Config{Resolvers: &Resolver{Svc: svc}, Complexity: complexity()})
	srv := handler.New(es)
	srv.AddTransport(postJSON{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](queryCacheSize))
	srv.SetParserTokenLimit(parserTokenLimit)
	srv.SetDisableSuggestion(true)
	srv.Use(adminIntrospection{})
	srv.Use(&queryLimits{
		maxDepth:   opts.MaxDepth,
		maxAliases: opts.MaxAliases,
		complexity: extension.FixedComplexityLimit(opts.MaxComplexity),
	})
	srv.AroundOperations(withNames(svc))
	srv.AroundFields(classifyErrors)
	srv.SetErrorPresenter(presenter(opts.Logger))
	srv.SetRecoverFunc(recoverPanic)
	return &graphqlHandler{srv: srv}
}

// ServeHTTP checks, in the contract's order, the credential (401), the
// method (405) and the media type (415), then runs the operation.
func (h *graphqlHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if auth.From(r.Context()) == nil {
		writeAPIError(w, apierr.Unauthenticated(apierr.CodeMissingToken, "an admin credential is required: Authorization: Bearer <token>"))
		return
	}
	if r.Method != http.MethodPost {
		writeAPIError(w, apierr.MethodNotAllowed(http.MethodPost))
		return
	}
	if !isJSON(r.Header.Get("Content-Type")) {
		writeAPIError(w, apierr.New(http.StatusUnsupportedMediaType, apierr.CodeUnsupportedMediaType,
			"a GraphQL request is a JSON object sent with Content-Type: application/json"))
		return
	}
	h.srv.ServeHTTP(w, r)
}

// writeAPIError answers a request refused before GraphQL ran, in the
// contract's error shape.
func writeAPIError(w http.ResponseWriter, e *apierr.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if e.Allow != "" {
		w.Header().Set("Allow", e.Allow)
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(e.Body())
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// postJSON is the one transport: a single GraphQL request as a JSON
// object in a POST body. It differs from gqlgen's transport.POST in what
// it answers when the request cannot run: 413 for a body over
// maxBodyBytes, 400 for a batch (an array), for a body that is not a
// request object (without echoing it), and for parse, validation and
// limit errors (checklist item 28 expects 400 with the limit named).
type postJSON struct{}

var _ graphql.Transport = postJSON{}

// Supports implements graphql.Transport.
func (postJSON) Supports(r *http.Request) bool {
	return r.Method == http.MethodPost && r.Header.Get("Upgrade") == "" && isJSON(r.Header.Get("Content-Type"))
}

// Do implements graphql.Transport.
func (postJSON) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	w.Header().Set("Content-Type", "application/json")
	start := graphql.Now()
	params, status, reqErr := readParams(w, r)
	if reqErr != nil {
		writeResponse(w, status, exec.DispatchError(ctx, gqlerror.List{reqErr}))
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		writeResponse(w, http.StatusBadRequest, exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	writeResponse(w, http.StatusOK, responses(ctx))
}

// readParams reads and decodes the request body. On failure it returns the
// HTTP status and the error to answer.
func readParams(w http.ResponseWriter, r *http.Request) (*graphql.RawParams, int, *gqlerror.Error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, http.StatusRequestEntityTooLarge, requestError(http.StatusRequestEntityTooLarge,
				"the request body is larger than the limit of %d bytes (1 MiB)", maxBodyBytes)
		}
		return nil, http.StatusBadRequest, requestError(http.StatusBadRequest, "the request body could not be read")
	}
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		return nil, http.StatusBadRequest, requestError(http.StatusBadRequest,
			"batched operations are not supported: send one operation per request")
	}
	var params graphql.RawParams
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers reach the scalars (Int, USD) exactly
	if err := dec.Decode(&params); err != nil || dec.More() {
		return nil, http.StatusBadRequest, requestError(http.StatusBadRequest,
			"the request body is not a GraphQL request: a JSON object with query, and optionally operationName and variables")
	}
	return &params, 0, nil
}

func requestError(status int, format string, args ...any) *gqlerror.Error {
	return &gqlerror.Error{
		Message:    fmt.Sprintf(format, args...),
		Extensions: map[string]any{"code": codeFor(status), "status": status},
	}
}

func writeResponse(w http.ResponseWriter, status int, resp *graphql.Response) {
	b, err := json.Marshal(resp)
	if err != nil {
		// The response is built of marshalled values and errors; this
		// cannot happen short of a bug, which the recover upstream logs.
		panic(fmt.Errorf("encode graphql response: %w", err))
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
