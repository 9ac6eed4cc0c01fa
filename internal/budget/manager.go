package budget

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/sluicehq/sluice/internal/redisguard"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"github.com/sluicehq/sluice/internal/money"
)

// Defaults of Config.
const (
	DefaultPrefix        = "sluice:budget:"
	DefaultTimeout       = 50 * time.Millisecond
	DefaultLoadTimeout   = 2 * time.Second
	DefaultRetryInterval = time.Second
	// DefaultLeaseTTL bounds how long a reservation holds budget without
	// being settled: longer than any request may run (the proxy's write
	// timeout is 10 minutes), so that only the reservations of a process
	// that died are ever dropped by it.
	DefaultLeaseTTL = 15 * time.Minute
	// totalTTL is the idle lifetime of a "total" budget's counter, which
	// has no period end: renewed by every use, re-read from the persisted
	// spend after it lapsed.
	totalTTL = 35 * 24 * time.Hour
	// expiryMargin keeps a period's counter a day past the period's end,
	// for requests admitted just before the reset and settled after it.
	expiryMargin = 24 * time.Hour
	// reloadEvery paces the retries of a persisted-spend read that failed.
	reloadEvery = 10 * time.Second
	// UnknownSpendRetry paces the reads of the persisted spend of a hard
	// budget that could not be read: until one succeeds the budget
	// refuses (Refusal.Unknown), and requests meanwhile are refused at
	// once, without a read of their own.
	UnknownSpendRetry = 2 * time.Second
)

// SpendSource gives the persisted spend of a budget scope since a time:
// the analytics backend's SpendSince. Budgets read it when a counter is
// first used (after a restart, or when its Redis key is absent).
type SpendSource interface {
	SpendSince(ctx context.Context, scope string, start time.Time) (int64, error)
}

// GatewayScope is the budget scope of a gateway: "gateway:<id>".
func GatewayScope(id string) string { return "gateway:" + id }

// UserScope is the budget scope of a user: "user:<id>".
func UserScope(id string) string { return "user:" + id }

// TokenScope is the budget scope of an API token: "token:<id>".
func TokenScope(id string) string { return "token:" + id }

// TenantScope is the budget scope of a tenant: "tenant:<id>".
func TenantScope(id string) string { return "tenant:" + id }

// Scope kinds: the part of a scope before the colon.
const (
	KindTenant  = "tenant"
	KindGateway = "gateway"
	KindUser    = "user"
	KindToken   = "token"
)

// SplitScope returns the kind (KindTenant, KindGateway, KindUser or
// KindToken) and the object id of a scope; ok is false for anything else.
func SplitScope(scope string) (kind, id string, ok bool) {
	kind, id, ok = strings.Cut(scope, ":")
	switch {
	case !ok || id == "":
		return "", "", false
	case kind == KindTenant, kind == KindGateway, kind == KindUser, kind == KindToken:
		return kind, id, true
	}
	return "", "", false
}

// Settlement is the state of one budget right after a request was settled
// against it: what threshold alerts compare (Config.OnSettle).
type Settlement struct {
	// Kind is KindTenant, KindGateway, KindUser or KindToken; ID is that
	// object's id.
	Kind, ID string
	Period   string
	// PeriodStart is the start of the period settled (the zero time for a
	// total budget).
	PeriodStart time.Time
	Hard        bool
	// Spent is the settled spend of the period after this request;
	// Amount is the budget's.
	Spent, Amount money.USD
}

// Config configures a Manager. The zero value is valid: process-local
// counters that start from zero.
type Config struct {
	// Redis holds the counters shared by every replica: a *redis.Client
	// (standalone or Sentinel; each script touches two keys, which Redis
	// Cluster would need in one slot). Nil: counters live in the process.
	Redis redis.Scripter
	// Prefix namespaces the Redis keys; default "sluice:budget:".
	Prefix string
	// Spend gives the persisted spend that initialises a counter. Nil
	// means zero.
	Spend SpendSource
	// Timeout bounds one Redis call; default 50 ms. A slower or failed
	// call is answered by the per-process fallback.
	Timeout time.Duration
	// LoadTimeout bounds one read of Spend; default 2 s.
	LoadTimeout time.Duration
	// FallbackReplicas is the number of replicas expected to share a
	// budget. While Redis is unreachable each process may spend
	// 1/FallbackReplicas of what remained when its fallback counter
	// started. Default 1.
	FallbackReplicas int
	// RetryInterval is how long Redis is skipped after a failed call;
	// default 1 s.
	RetryInterval time.Duration
	// LeaseTTL is how long an unsettled reservation holds budget; default
	// 15 min.
	LeaseTTL time.Duration
	// Logger receives the fallback's warnings (at most one a minute).
	Logger *slog.Logger
	// Now is the clock of State and of lease expiry in State; default
	// time.Now.
	Now func() time.Time
	// OnSettle, when set, is called once for every budget a request was
	// settled against, with the budget's spend after the request (soft
	// and hard budgets alike; not for a settle that Redis did not take
	// and that waits for replay). It runs on the settling goroutine, after
	// the request's answer: it must not block (hand work to a queue).
	OnSettle func(ctx context.Context, s Settlement)
}

// Validate fills the defaults of unset fields and reports an invalid one.
func (c *Config) Validate() error {
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	durations := []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"timeout", &c.Timeout, DefaultTimeout},
		{"load timeout", &c.LoadTimeout, DefaultLoadTimeout},
		{"retry interval", &c.RetryInterval, DefaultRetryInterval},
		{"lease TTL", &c.LeaseTTL, DefaultLeaseTTL},
	}
	for _, d := range durations {
		switch {
		case *d.v < 0:
			return fmt.Errorf("budget: %s %s is negative", d.name, *d.v)
		case *d.v == 0:
			*d.v = d.def
		}
	}
	switch {
	case c.FallbackReplicas < 0:
		return fmt.Errorf("budget: fallback replicas %d is negative", c.FallbackReplicas)
	case c.FallbackReplicas == 0:
		c.FallbackReplicas = 1
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// Limit is one budget a request is held to.
type Limit struct {
	// Scope is TenantScope, GatewayScope, UserScope or TokenScope.
	Scope  string
	Amount money.USD
	// Period is daily, weekly, monthly or total (Window).
	Period string
	// Hard budgets refuse; soft ones only report that they are exceeded.
	Hard bool
}

// Refusal says why Reserve refused a request.
type Refusal struct {
	Limit Limit
	// Unknown is true when the hard budget's spend is not known: its
	// counter had to start and the persisted spend could not be read (the
	// analytics store does not answer). A hard budget does not start from
	// zero, which would let it be spent again after a restart; it refuses
	// until the read succeeds. RetryAfter is UnknownSpendRetry.
	Unknown bool
	// Spent and Reserved are the counter's values at the refusal.
	Spent, Reserved money.USD
	// ResetsAt is when the period ends; nil for a total budget.
	ResetsAt *time.Time
	// RetryAfter is the time until the period ends, or a day for a total
	// budget (which only a raised amount can reopen).
	RetryAfter time.Duration
}

// Reservation is what Reserve holds for one request, to be settled once.
type Reservation struct {
	// SoftExceeded reports that a soft budget was exceeded, or would be if
	// the request cost its worst case.
	SoftExceeded bool
	// Remaining is the least left among the reservation's budgets once
	// this request's worst case is held: amount − spent − reserved (open
	// reservations, this one included), at least 0. It is what the
	// x-sluice-budget-remaining-usd header says.
	Remaining money.USD
	held      []held
}

type held struct {
	limit   Limit
	key     counterKey
	lease   string // "" for a zero-cost reservation
	cost    int64
	onRedis bool
}

// Manager enforces budgets: it reserves a request's worst-case cost
// before the request is forwarded and replaces the reservation with the
// real cost once it is known.
//
// Counters are keyed by scope and period start; a counter holds the
// settled spend and the sum of the open reservations. A hard budget
// admits a request only when spent + reserved + worst case ≤ amount, so
// concurrent requests can never jointly overspend it as long as each
// costs at most its worst case; a request that costs more overshoots by
// its own excess only.
type Manager struct {
	cfg     Config
	local   *localCounters // the counters without Redis, the fallback with it
	redis   *redisCounters // nil without Redis
	guard   *redisguard.Guard
	loads   singleflight.Group
	reloads sync.Map // counter name → time of the next persisted-spend read
	// unknown holds, for the hard budgets whose spend could not be read,
	// counter name → time of the next read.
	unknown  sync.Map
	pending  pendingSettles
	flushing sync.Mutex
}

// NewManager validates cfg and returns the manager.
func NewManager(cfg Config) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg}
	if cfg.Redis != nil {
		m.redis = &redisCounters{c: cfg.Redis, timeout: cfg.Timeout}
		m.local = newLocalCounters(cfg.FallbackReplicas)
		m.guard = redisguard.New(cfg.Logger, cfg.RetryInterval,
			"budgets are counted per process, each spending 1/"+strconv.Itoa(cfg.FallbackReplicas)+" of what remained,", "budgets")
	} else {
		m.local = newLocalCounters(1)
	}
	return m, nil
}

// NewLocal returns a manager of process-local counters initialised from
// spend (nil: zero).
func NewLocal(spend SpendSource) *Manager {
	m, _ := NewManager(Config{Spend: spend}) // a zero Config always validates
	return m
}

// Fallbacks returns how many Redis calls were answered by the fallback.
func (m *Manager) Fallbacks() int64 { return m.guard.Fallbacks() }

// Reserve holds cost against every limit for a request admitted at now.
// It refuses when a hard limit has not enough left, or when the spend of a
// hard limit whose counter has to start cannot be read (Refusal.Unknown):
// then nothing stays held. It never fails: a Redis failure is answered by
// the fallback; a soft limit whose persisted spend cannot be read starts
// from zero (read again later).
func (m *Manager) Reserve(ctx context.Context, now time.Time, limits []Limit, cost money.USD) (*Reservation, *Refusal) {
	r := &Reservation{}
	cost = max(cost, 0)
	for _, l := range limits {
		k := m.key(l.Scope, l.Period, now)
		req := reserveReq{amount: int64(l.Amount), cost: int64(cost), hard: l.Hard, nowMS: now.UnixMilli(),
			leaseUntilMS: now.Add(m.cfg.LeaseTTL).UnixMilli()}
		if cost > 0 {
			req.lease = newLeaseID()
		}
		out, onRedis := m.reserve(ctx, k, req)
		if out.unknown {
			m.Settle(ctx, r, 0)
			return nil, &Refusal{Limit: l, Unknown: true, RetryAfter: UnknownSpendRetry}
		}
		if !out.admitted {
			m.Settle(ctx, r, 0)
			ref := &Refusal{Limit: l, Spent: money.USD(out.spent), Reserved: money.USD(out.reserved), RetryAfter: 24 * time.Hour}
			if _, resets := Window(l.Period, now); resets != nil {
				ref.ResetsAt = resets
				ref.RetryAfter = max(resets.Sub(now), time.Second)
			}
			return nil, ref
		}
		if !out.fits {
			r.SoftExceeded = true
		}
		left := max(l.Amount-money.USD(out.spent)-money.USD(out.reserved), 0)
		if len(r.held) == 0 || left < r.Remaining {
			r.Remaining = left
		}
		r.held = append(r.held, held{limit: l, key: k, lease: req.lease, cost: req.cost, onRedis: onRedis})
	}
	return r, nil
}

// Settle releases r and adds actual, the request's real cost, to the spend
// of each of its budgets. It reports whether a soft budget is now
// exceeded. A nil r is a no-op; each Reservation is settled once.
func (m *Manager) Settle(ctx context.Context, r *Reservation, actual money.USD) (softExceeded bool) {
	if r == nil {
		return false
	}
	for _, h := range r.held {
		sr := settleReq{lease: h.lease, cost: h.cost, actual: int64(max(actual, 0))}
		var out settleOut
		var err error
		switch {
		case !h.onRedis:
			out, err = m.local.settle(ctx, h.key, sr)
		case m.guard.Skip():
			err = errSkipped
		default:
			out, err = m.redis.settle(ctx, h.key, sr)
			if err != nil {
				m.guard.Failed(err)
			} else {
				m.guard.OK()
			}
		}
		if err != nil {
			// The reservation stays in Redis until Redis answers again and
			// the settle is replayed (or, at worst, until its lease ends).
			m.pending.add(pendingSettle{key: h.key, req: sr}, m.cfg.Logger)
			continue
		}
		if !h.limit.Hard && out.found && out.spent > int64(h.limit.Amount) {
			softExceeded = true
		}
		if out.found && m.cfg.OnSettle != nil {
			m.settled(ctx, h, money.USD(out.spent))
		}
	}
	r.held = nil
	return softExceeded
}

// settled reports the state of h's budget after a settle to OnSettle.
func (m *Manager) settled(ctx context.Context, h held, spent money.USD) {
	kind, id, ok := SplitScope(h.limit.Scope)
	if !ok {
		return
	}
	m.cfg.OnSettle(ctx, Settlement{Kind: kind, ID: id, Period: h.limit.Period, PeriodStart: h.key.start,
		Hard: h.limit.Hard, Spent: spent, Amount: h.limit.Amount})
}

// Spent implements admin.BudgetSpend: the settled spend of scope in the
// period starting at periodStart (open reservations not included).
func (m *Manager) Spent(ctx context.Context, scope string, periodStart time.Time) (money.USD, error) {
	spent, _, err := m.State(ctx, scope, periodStart)
	return spent, err
}

// State returns the settled spend and the open reservations of scope in
// the period starting at periodStart (the zero time for a total budget).
// A counter nobody used yet reports the persisted spend.
func (m *Manager) State(ctx context.Context, scope string, periodStart time.Time) (spent, reserved money.USD, err error) {
	k := counterKey{name: m.cfg.Prefix + scope + ":" + strconv.FormatInt(startUnix(periodStart), 10),
		scope: scope, start: periodStart}
	nowMS := m.cfg.Now().UnixMilli()
	if m.redis != nil && !m.guard.Skip() {
		s, r, found, err := m.redis.state(ctx, k, nowMS)
		if err == nil {
			m.guard.OK()
			if found {
				return money.USD(s), money.USD(r), nil
			}
			v, err := m.load(ctx, k)
			return money.USD(v), 0, err
		}
		m.guard.Failed(err)
	}
	if s, r, found := m.local.state(k, nowMS); found {
		return money.USD(s), money.USD(r), nil
	}
	v, err := m.load(ctx, k)
	return money.USD(v), 0, err
}

// reserve runs one reservation on Redis or, failing that, the local
// counters, initialising an absent counter from the persisted spend.
func (m *Manager) reserve(ctx context.Context, k counterKey, req reserveReq) (reserveOut, bool) {
	if m.redis != nil && !m.guard.Skip() {
		out, err := m.initialised(ctx, m.redis, k, req)
		if err == nil {
			m.guard.OK()
			m.flushPending(ctx)
			return out, true
		}
		m.guard.Failed(err)
	}
	out, _ := m.initialised(ctx, m.local, k, req) // local counters never fail
	return out, false
}

// initialised reserves on c, creating an absent counter with the
// persisted spend (the first of concurrent creators wins: SETNX-style).
// When that spend cannot be read, a hard budget's counter is not created
// (out.unknown: the request is refused, and the read tried again at most
// every UnknownSpendRetry); a soft budget's starts from zero and reads it
// again now and then.
func (m *Manager) initialised(ctx context.Context, c counters, k counterKey, req reserveReq) (reserveOut, error) {
	out, err := c.reserve(ctx, k, req)
	if err != nil || !out.needInit {
		if err == nil && !out.loaded {
			m.reload(ctx, c, k)
		}
		return out, err
	}
	if next, ok := m.unknown.Load(k.name); ok && req.hard && time.Now().Before(next.(time.Time)) {
		return reserveOut{unknown: true}, nil
	}
	v, lerr := m.load(ctx, k)
	if lerr != nil && req.hard {
		m.unknown.Store(k.name, time.Now().Add(UnknownSpendRetry))
		m.cfg.Logger.Warn("read persisted budget spend; the hard budget refuses requests until it can be read",
			"scope", k.scope, "err", lerr)
		return reserveOut{unknown: true}, nil
	}
	m.unknown.Delete(k.name)
	req.init, req.haveInit, req.initLoaded = v, true, lerr == nil
	if lerr != nil {
		m.cfg.Logger.Warn("read persisted budget spend; the soft budget's counter starts from zero and reads it again later",
			"scope", k.scope, "err", lerr)
		m.reloads.Store(k.name, time.Now().Add(reloadEvery))
	}
	return c.reserve(ctx, k, req)
}

// reload reads the persisted spend of a counter created without it, at
// most every reloadEvery, and raises the counter to it.
func (m *Manager) reload(ctx context.Context, c counters, k counterKey) {
	next, ok := m.reloads.Load(k.name)
	if ok && time.Now().Before(next.(time.Time)) {
		return
	}
	m.reloads.Store(k.name, time.Now().Add(reloadEvery))
	v, err := m.load(ctx, k)
	if err != nil {
		return
	}
	if c.merge(ctx, k, v) == nil {
		m.reloads.Delete(k.name)
	}
}

// load reads the persisted spend of a counter, once per counter at a time.
func (m *Manager) load(ctx context.Context, k counterKey) (int64, error) {
	if m.cfg.Spend == nil {
		return 0, nil
	}
	v, err, _ := m.loads.Do(k.name, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.cfg.LoadTimeout)
		defer cancel()
		start := k.start
		if start.IsZero() {
			// A total budget counts from the epoch: backends compute with
			// unix times, which the zero time is out of range of.
			start = time.Unix(0, 0).UTC()
		}
		return m.cfg.Spend.SpendSince(ctx, k.scope, start)
	})
	if err != nil {
		return 0, fmt.Errorf("spend of %s since %s: %w", k.scope, k.start.Format(time.RFC3339), err)
	}
	return v.(int64), nil
}

// key names the counter of scope for the period holding now.
func (m *Manager) key(scope, period string, now time.Time) counterKey {
	start, resets := Window(period, now)
	k := counterKey{name: m.cfg.Prefix + scope + ":" + strconv.FormatInt(startUnix(start), 10),
		scope: scope, start: start}
	if resets != nil {
		k.expireAt = resets.Add(expiryMargin)
	}
	return k
}

// startUnix is a period start in unix seconds; 0 for a total budget.
func startUnix(start time.Time) int64 {
	if start.IsZero() {
		return 0
	}
	return start.Unix()
}

// flushPending replays settles that failed while Redis was unreachable,
// a batch at a time, on the goroutine of a call that just reached Redis.
func (m *Manager) flushPending(ctx context.Context) {
	if m.pending.len() == 0 || !m.flushing.TryLock() {
		return
	}
	defer m.flushing.Unlock()
	for _, p := range m.pending.take(pendingBatch) {
		if _, err := m.redis.settle(ctx, p.key, p.req); err != nil {
			m.pending.add(p, m.cfg.Logger)
			m.guard.Failed(err)
			return
		}
	}
}

func newLeaseID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// errSkipped stands for a Redis call not made because Redis is skipped.
var errSkipped = errors.New("redis skipped after a recent failure")

// counterKey identifies one counter.
type counterKey struct {
	name  string // the Redis key: prefix + scope + ":" + period start (unix s)
	scope string
	start time.Time
	// expireAt is when the counter may go: a day after the period's end;
	// zero for a total budget (an idle TTL instead).
	expireAt time.Time
}

type reserveReq struct {
	amount, cost int64
	hard         bool
	lease        string
	leaseUntilMS int64
	nowMS        int64
	// init is the spend of an absent counter; without haveInit an absent
	// counter answers needInit.
	init       int64
	haveInit   bool
	initLoaded bool
}

type reserveOut struct {
	needInit bool
	// unknown: the counter is absent and the persisted spend of a hard
	// budget could not be read; nothing is held.
	unknown bool
	// admitted: the cost is held; fits: it was within the amount.
	admitted, fits  bool
	spent, reserved int64
	// loaded: the counter started from the persisted spend.
	loaded bool
}

type settleReq struct {
	lease        string
	cost, actual int64
}

type settleOut struct {
	found bool
	spent int64
}

// counters are the two homes of budget counters: the process and Redis.
type counters interface {
	reserve(ctx context.Context, k counterKey, r reserveReq) (reserveOut, error)
	settle(ctx context.Context, k counterKey, r settleReq) (settleOut, error)
	// merge raises a counter's spend to the persisted spend read late.
	merge(ctx context.Context, k counterKey, persisted int64) error
}
