// Package admin is Sluice's admin domain: every operation of the admin API
// as one function that takes the calling principal, checks the endpoint ×
// role policy and the caller's tenant, validates its input and writes the
// store together with the audit log. The REST shims and the GraphQL
// resolvers both call these functions, so the two transports can never
// disagree.
package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/ids"
	"github.com/sluicehq/sluice/internal/page"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/store"
)

// Config wires the service.
type Config struct {
	Store *store.Store
	// Box seals provider keys.
	Box *secret.Box
	// Analytics answers the figures (stats, logs, traces, spend). Nil
	// answers empty figures.
	Analytics Analytics
	// Breakers reports circuit-breaker state. Nil reports every target closed.
	Breakers BreakerStates
	// Budgets reports the spend of budgets. Nil reports zero spend.
	Budgets BudgetSpend
	// KeyTester makes the upstream call of a key test. Nil answers 503.
	KeyTester KeyTester
	// PublicURL is the base URL clients reach the inference API at
	// (--public-url), without a trailing slash; "" when not configured,
	// and the dashboard then uses its own origin.
	PublicURL string
	// OnChange is called after every committed configuration write, so that
	// an in-process proxy refreshes its snapshot at once.
	OnChange func()
	// SessionTTL is the lifetime of dashboard sessions (default 12 h).
	SessionTTL time.Duration
	// AllowPrivateBaseURLs lets provider keys point at loopback and private
	// addresses (self-hosted vLLM, tests). Link-local and metadata addresses
	// stay refused.
	AllowPrivateBaseURLs bool
	// SignIn bounds sign-in attempts and password hashing (zero values:
	// the defaults of SignInLimits).
	SignIn SignInLimits
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Service implements the admin domain.
type Service struct {
	cfg    Config
	st     *store.Store
	db     *bun.DB
	log    *slog.Logger
	logins *signInLimiter
	hashes *hashGate
	errs   *windowLimiter
	// denials bounds the audit rows of refused actions per actor.
	denials *windowLimiter
	// emailWrites bounds user creations and email changes per actor.
	emailWrites *windowLimiter
	// keyTests bounds the tests of each provider key.
	keyTests *windowLimiter
	// auths coalesces concurrent lookups of one credential.
	auths authFlights
}

// New returns a service.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Box == nil {
		return nil, errors.New("admin: store and box are required")
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Analytics == nil {
		cfg.Analytics = noAnalytics{}
	}
	cfg.SignIn = cfg.SignIn.withDefaults()
	return &Service{
		cfg: cfg, st: cfg.Store, db: cfg.Store.DB, log: cfg.Logger,
		logins:      newSignInLimiter(cfg.SignIn),
		hashes:      newHashGate(cfg.SignIn),
		errs:        newWindowLimiter(30, time.Minute, defaultMaxKeys),
		denials:     newWindowLimiter(maxDeniedPerMinute, time.Minute, defaultMaxKeys),
		emailWrites: newWindowLimiter(maxEmailWritesPerMinute, time.Minute, defaultMaxKeys),
		keyTests:    newWindowLimiter(maxKeyTestsPerMinute, time.Minute, defaultMaxKeys),
	}, nil
}

func (s *Service) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }

// change describes one audited write.
type change struct {
	Action       string // e.g. "gateway.update"
	ResourceType string
	ResourceID   string
	TenantID     string
	Changes      store.Changes
	// Config marks writes that change what the proxy serves; they bump the
	// configuration version.
	Config bool
}

// write runs fn in a transaction and records the audit entry in the same
// transaction. fn may fill in the change (e.g. the id of a new resource).
func (s *Service) write(ctx context.Context, p *auth.Principal, c *change, fn func(tx bun.Tx) error) error {
	err := s.st.InTx(ctx, func(tx bun.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		if c.Config {
			if err := s.st.BumpConfigVersion(ctx, tx); err != nil {
				return err
			}
		}
		return store.Insert(ctx, tx, s.auditEntry(p, c, "ok"))
	})
	if err != nil {
		return mapStoreErr(err)
	}
	if c.Config && s.cfg.OnChange != nil {
		s.cfg.OnChange()
	}
	return nil
}

func (s *Service) auditEntry(p *auth.Principal, c *change, outcome string) *store.AuditEntry {
	e := &store.AuditEntry{
		ID: ids.New("aud"), TS: s.now(), TenantID: c.TenantID, Action: c.Action,
		ResourceType: c.ResourceType, ResourceID: c.ResourceID, Changes: c.Changes, Outcome: outcome,
	}
	if p != nil {
		e.ActorID, e.ActorEmail, e.ActorRole = p.UserID, p.Email, string(p.Role)
		e.IP, e.RequestID = p.IP, p.RequestID
	}
	return e
}

// can checks the policy for op. A denied write is recorded in the audit
// log with outcome "denied" (bounded per actor, see recordDenied).
func (s *Service) can(ctx context.Context, p *auth.Principal, op auth.Op) error {
	err := p.Can(op)
	if err != nil && p != nil && op.Writes() {
		s.recordDenied(ctx, p, &change{Action: string(op), TenantID: p.TenantID})
	}
	return err
}

// mapStoreErr turns store sentinels into wire errors; other errors pass.
func mapStoreErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrDuplicate):
		return apierr.Conflict("", "a resource with the same identifier already exists")
	case errors.Is(err, store.ErrNotFound):
		return apierr.NotFound("resource")
	}
	return err
}

// errStoreUnavailable is the answer when the store cannot serve.
func errStoreUnavailable() *apierr.Error {
	return apierr.Unavailable("the database is unavailable; try again in a few seconds")
}

// ClassifyError is the admin API's one mapping of errors to the wire,
// shared by the REST shims and the GraphQL resolvers: a *apierr.Error
// answers as it is, an analytics query the backend refused for what the
// caller asked (*analytics.QueryError) answers 400 invalid_request naming
// its parameter, an error of a store that cannot serve now (by its type,
// store.Unavailable) answers 503 unavailable, and any other error is
// returned unchanged, for the transport to log and answer 500. The storage
// layers return typed errors; only here do they get an HTTP status.
func ClassifyError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*apierr.Error](err); ok {
		return err
	}
	if qe, ok := errors.AsType[*analytics.QueryError](err); ok {
		return apierr.Invalid(qe.Param, "%s", qe.Reason)
	}
	if store.Unavailable(err) {
		return errStoreUnavailable()
	}
	return err
}

// notFound maps store.ErrNotFound to a 404 for kind and passes other errors.
func notFound(err error, kind string) error {
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound(kind)
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", kind, err)
	}
	return nil
}

// Page is a listing request.
type Page = store.Page

// List is one page of a listing.
type List[T any] struct {
	Data       []T     `json:"data"`
	NextCursor *string `json:"next_cursor"`
	// TotalCount counts the entries of every page, when the listing
	// offers it and the caller asked (LogQuery.Count); nil otherwise.
	TotalCount *int64 `json:"total_count,omitempty"`
}

// checkPage applies the pagination policy (package page) to pg: a limit
// of 0 is the default, one out of range is a 400, and a cursor must be
// one the store made.
func checkPage(pg Page) (Page, error) {
	limit, ok := page.Limit(pg.Limit)
	if !ok {
		return pg, apierr.Invalid("limit", "limit must be between 1 and %d", page.MaxLimit)
	}
	pg.Limit = limit
	if pg.Cursor != "" {
		if _, err := store.DecodeCursor(pg.Cursor); err != nil {
			return pg, apierr.Invalid("cursor", "cursor is not valid")
		}
	}
	return pg, nil
}

// Ping checks that the store answers.
func (s *Service) Ping(ctx context.Context) error { return s.st.Ping(ctx) }

// Ref names the resource an operation acts on or under.
type Ref struct {
	Kind string // "tenant", "gateway", "user" or "" for none
	ID   string
}

// Authorize performs the checks that come before reading a request body,
// in the contract's order: the role's permission for op (403), then that
// the resource exists and is in the caller's tenant (404), and for a write
// on a user or what it owns, the rank rule (403). Transports call
// it before decoding input; the domain function called afterwards checks
// again, so skipping it can never widen access.
func (s *Service) Authorize(ctx context.Context, p *auth.Principal, op auth.Op, ref Ref) error {
	if err := s.can(ctx, p, op); err != nil {
		return err
	}
	var err error
	switch ref.Kind {
	case "":
	case "tenant":
		_, err = s.tenant(ctx, s.db, p, ref.ID)
	case "gateway":
		_, err = s.gateway(ctx, s.db, p, ref.ID)
	case "user":
		_, err = s.userFor(ctx, p, op, ref.ID)
	default:
		return fmt.Errorf("authorize: unknown resource kind %q", ref.Kind)
	}
	return err
}
