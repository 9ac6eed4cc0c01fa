package budget

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/testenv"
)

var quiet = slog.New(slog.DiscardHandler)

// mid-month, so that the monthly period runs from March 1 to April 1.
var march = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// spendMap is a SpendSource of fixed answers; err fails every read.
type spendMap struct {
	mu    sync.Mutex
	v     map[string]int64
	err   error
	reads int
}

func (s *spendMap) SpendSince(_ context.Context, scope string, _ time.Time) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	if s.err != nil {
		return 0, s.err
	}
	return s.v[scope], nil
}

func (s *spendMap) set(scope string, v int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.v == nil {
		s.v = map[string]int64{}
	}
	s.v[scope], s.err = v, err
}

// managers returns a constructor per implementation: local, and Redis
// when the test Redis is configured. Constructors called twice in one
// test share the Redis prefix: two replicas.
func managers() map[string]func(t *testing.T, cfg Config) *Manager {
	return map[string]func(t *testing.T, cfg Config) *Manager{
		"local": func(t *testing.T, cfg Config) *Manager { return newManager(t, cfg) },
		"redis": func(t *testing.T, cfg Config) *Manager {
			c, prefix := sharedRedis(t)
			cfg.Redis, cfg.Prefix, cfg.Timeout = c, prefix, 5*time.Second
			m := newManager(t, cfg)
			t.Cleanup(func() {
				if n := m.Fallbacks(); n != 0 {
					t.Errorf("%d Redis calls fell back: the test Redis must answer every call", n)
				}
			})
			return m
		},
	}
}

var sharedClients sync.Map // *testing.T → redisPrefix

type redisPrefix struct {
	c      *redis.Client
	prefix string
}

// sharedRedis gives every manager of one test the same client and prefix.
func sharedRedis(t *testing.T) (*redis.Client, string) {
	if v, ok := sharedClients.Load(t); ok {
		rp := v.(redisPrefix)
		return rp.c, rp.prefix
	}
	c, prefix := testenv.Redis(t)
	sharedClients.Store(t, redisPrefix{c, prefix})
	t.Cleanup(func() { sharedClients.Delete(t) })
	return c, prefix
}

func newManager(t *testing.T, cfg Config) *Manager {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	if cfg.Now == nil {
		// The clock of lease expiry in State: the tests' requests are
		// made in March 2026.
		cfg.Now = func() time.Time { return march }
	}
	m, err := NewManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func usd(d float64) money.USD { return money.FromFloat(d) }

func state(t *testing.T, m *Manager, scope string, start time.Time) (spent, reserved money.USD) {
	t.Helper()
	s, r, err := m.State(context.Background(), scope, start)
	if err != nil {
		t.Fatal(err)
	}
	return s, r
}

var monthStart = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// TestHardUnderConcurrency: 200 concurrent reservations of $0.05 against
// $1 admit exactly 20; settled, the spend is the amount and nothing stays
// reserved; the next request is refused until the period ends. With Redis
// the requests are spread over two managers (replicas).
func TestHardUnderConcurrency(t *testing.T) {
	for name, mk := range managers() {
		t.Run(name, func(t *testing.T) {
			ms := []*Manager{mk(t, Config{}), nil}
			if name == "redis" {
				ms[1] = mk(t, Config{}) // a second replica
			} else {
				ms[1] = ms[0] // local counters are not shared
			}
			lim := []Limit{{Scope: GatewayScope("gw1"), Amount: usd(1), Period: "monthly", Hard: true}}
			var admitted atomic.Int64
			var wg sync.WaitGroup
			var held sync.Map
			for i := range 200 {
				wg.Go(func() {
					r, ref := ms[i%2].Reserve(context.Background(), march, lim, usd(0.05))
					if ref != nil {
						return
					}
					admitted.Add(1)
					held.Store(i, r)
				})
			}
			wg.Wait()
			if admitted.Load() != 20 {
				t.Errorf("%d admitted, want exactly 20", admitted.Load())
			}
			if _, reserved := state(t, ms[0], lim[0].Scope, monthStart); reserved != usd(1) {
				t.Errorf("reserved %s while all are in flight, want 1", reserved)
			}
			held.Range(func(k, v any) bool {
				ms[k.(int)%2].Settle(context.Background(), v.(*Reservation), usd(0.05))
				return true
			})
			spent, reserved := state(t, ms[1], lim[0].Scope, monthStart)
			if spent != usd(1) || reserved != 0 {
				t.Errorf("spent %s reserved %s, want 1 and 0", spent, reserved)
			}
			r, ref := ms[0].Reserve(context.Background(), march, lim, 0)
			if r != nil || ref == nil {
				t.Fatal("a spent budget admitted a zero-cost request")
			}
			wantReset := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
			if ref.ResetsAt == nil || !ref.ResetsAt.Equal(wantReset) || ref.RetryAfter != wantReset.Sub(march) {
				t.Errorf("refusal resets %v after %s, want %v after %s", ref.ResetsAt, ref.RetryAfter, wantReset, wantReset.Sub(march))
			}
		})
	}
}

// TestSettleBelowWorstCase: settling at less than the reservation frees
// the rest, so sequential requests keep being admitted until the real
// spend leaves less than one worst case; the spend never passes the
// amount.
func TestSettleBelowWorstCase(t *testing.T) {
	for name, mk := range managers() {
		t.Run(name, func(t *testing.T) {
			m := mk(t, Config{})
			lim := []Limit{{Scope: UserScope("u1"), Amount: usd(1), Period: "daily", Hard: true}}
			n := 0
			for n < 100 {
				r, ref := m.Reserve(context.Background(), march, lim, usd(0.10))
				if ref != nil {
					break
				}
				n++
				m.Settle(context.Background(), r, usd(0.03))
			}
			if n != 31 { // 31 × 0.03 = 0.93; 0.93 + 0.10 > 1
				t.Errorf("%d admitted, want 31", n)
			}
			day := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
			if spent, reserved := state(t, m, lim[0].Scope, day); spent != usd(0.93) || reserved != 0 {
				t.Errorf("spent %s reserved %s, want 0.93 and 0", spent, reserved)
			}
		})
	}
}

// TestSoft: a soft budget never refuses; it reports being exceeded.
func TestSoft(t *testing.T) {
	for name, mk := range managers() {
		t.Run(name, func(t *testing.T) {
			m := mk(t, Config{})
			lim := []Limit{{Scope: GatewayScope("soft"), Amount: usd(0.10), Period: "total"}}
			var flags []bool
			for range 4 {
				r, ref := m.Reserve(context.Background(), march, lim, usd(0.04))
				if ref != nil {
					t.Fatal("a soft budget refused")
				}
				flags = append(flags, r.SoftExceeded, m.Settle(context.Background(), r, usd(0.04)))
			}
			// 0.04, 0.08 fit; the third would pass 0.10 (flagged at
			// reserve) and does (flagged at settle).
			want := []bool{false, false, false, false, true, true, true, true}
			if diff := cmp.Diff(want, flags); diff != "" {
				t.Errorf("flags (reserve, settle) (-want +got):\n%s", diff)
			}
			if spent, _ := state(t, m, lim[0].Scope, time.Time{}); spent != usd(0.16) {
				t.Errorf("spent %s, want 0.16", spent)
			}
		})
	}
}

// TestReleaseOnRefusal: when the second budget refuses, the first one's
// reservation is given back.
func TestReleaseOnRefusal(t *testing.T) {
	for name, mk := range managers() {
		t.Run(name, func(t *testing.T) {
			m := mk(t, Config{})
			lim := []Limit{
				{Scope: GatewayScope("g"), Amount: usd(10), Period: "monthly", Hard: true},
				{Scope: UserScope("u"), Amount: usd(0.01), Period: "monthly", Hard: true},
			}
			if _, ref := m.Reserve(context.Background(), march, lim, usd(1)); ref == nil || ref.Limit.Scope != "user:u" {
				t.Fatalf("refusal %+v, want the user budget's", ref)
			}
			if spent, reserved := state(t, m, "gateway:g", monthStart); spent != 0 || reserved != 0 {
				t.Errorf("gateway spent %s reserved %s after the refusal, want 0 and 0", spent, reserved)
			}
			// A failed request settles at zero: everything is given back.
			r, ref := m.Reserve(context.Background(), march, lim[:1], usd(1))
			if ref != nil {
				t.Fatal(ref)
			}
			m.Settle(context.Background(), r, 0)
			if spent, reserved := state(t, m, "gateway:g", monthStart); spent != 0 || reserved != 0 {
				t.Errorf("gateway spent %s reserved %s after a zero settle, want 0 and 0", spent, reserved)
			}
		})
	}
}

// TestInitFromPersistedSpend: a counter starts from the persisted spend of
// its period; with Redis, the first replica to create it wins and a second
// replica (whose source would say otherwise) uses it.
func TestInitFromPersistedSpend(t *testing.T) {
	for name, mk := range managers() {
		t.Run(name, func(t *testing.T) {
			src := &spendMap{}
			src.set("gateway:r", int64(usd(0.95)), nil)
			m := mk(t, Config{Spend: src})
			lim := []Limit{{Scope: "gateway:r", Amount: usd(1), Period: "monthly", Hard: true}}
			if _, ref := m.Reserve(context.Background(), march, lim, usd(0.10)); ref == nil {
				t.Error("0.95 spent + 0.10 admitted against 1")
			}
			r, ref := m.Reserve(context.Background(), march, lim, usd(0.05))
			if ref != nil {
				t.Fatalf("0.95 spent + 0.05 refused: %+v", ref)
			}
			m.Settle(context.Background(), r, usd(0.05))
			if src.reads != 1 {
				t.Errorf("%d reads of the persisted spend, want 1", src.reads)
			}
			if spent, err := m.Spent(context.Background(), "gateway:r", monthStart); err != nil || spent != usd(1) {
				t.Errorf("Spent = %s, %v; want 1", spent, err)
			}
			if name != "redis" {
				return
			}
			other := &spendMap{}
			other.set("gateway:r", 0, nil)
			m2 := mk(t, Config{Spend: other})
			if _, ref := m2.Reserve(context.Background(), march, lim, usd(0.01)); ref == nil {
				t.Error("the second replica ignored the shared counter")
			}
			if other.reads != 0 {
				t.Errorf("the second replica read the persisted spend %d times, want 0", other.reads)
			}
		})
	}
}

// readsOf passes the reads of one scope to src; the others read 0.
type readsOf struct {
	src   *spendMap
	scope string
}

func (r readsOf) SpendSince(ctx context.Context, scope string, start time.Time) (int64, error) {
	if scope != r.scope {
		return 0, nil
	}
	return r.src.SpendSince(ctx, scope, start)
}

// TestInitReadFails: a hard budget whose persisted spend cannot be read
// (the analytics store is down at a restart) refuses with Unknown rather
// than start from zero, reads again at most every UnknownSpendRetry, and
// starts from the persisted spend once it can be read. A soft budget's
// counter starts from zero and takes the persisted spend once it can be
// read.
func TestInitReadFails(t *testing.T) {
	for name, mk := range managers() {
		t.Run(name+"/hard", func(t *testing.T) {
			src := &spendMap{}
			src.set("user:x", 0, errors.New("analytics down"))
			m := mk(t, Config{Spend: readsOf{src, "user:x"}})
			lim := []Limit{{Scope: "gateway:g", Amount: usd(5), Period: "monthly", Hard: true},
				{Scope: "user:x", Amount: usd(1), Period: "total", Hard: true}}
			for range 3 {
				_, ref := m.Reserve(context.Background(), march, lim, usd(0.5))
				if ref == nil || !ref.Unknown || ref.RetryAfter != UnknownSpendRetry || ref.Limit.Scope != "user:x" {
					t.Fatalf("refusal %+v, want Unknown for user:x while its spend cannot be read", ref)
				}
			}
			if src.reads != 1 { // the refusals that follow the first do not read
				t.Errorf("%d reads of the persisted spend of user:x, want 1", src.reads)
			}
			if _, reserved := state(t, m, "gateway:g", monthStart); reserved != 0 {
				t.Errorf("gateway:g holds %s after the refusals, want 0", reserved)
			}
			src.set("user:x", int64(usd(0.8)), nil)
			m.unknown.Store(m.key("user:x", "total", march).name, time.Now()) // due now
			if _, ref := m.Reserve(context.Background(), march, lim, usd(0.5)); ref == nil || ref.Unknown {
				t.Errorf("refusal %+v: 0.8 spent + 0.5 admitted against 1", ref)
			}
			r, ref := m.Reserve(context.Background(), march, lim, usd(0.2))
			if ref != nil {
				t.Fatalf("0.8 spent + 0.2 refused: %+v", ref)
			}
			m.Settle(context.Background(), r, usd(0.2))
			if spent, _ := state(t, m, "user:x", time.Time{}); spent != usd(1) {
				t.Errorf("spent %s, want the persisted 0.8 + 0.2", spent)
			}
		})
		t.Run(name+"/soft", func(t *testing.T) {
			src := &spendMap{}
			src.set("user:x", 0, errors.New("analytics down"))
			m := mk(t, Config{Spend: src})
			lim := []Limit{{Scope: "user:x", Amount: usd(1), Period: "total", Hard: false}}
			r, ref := m.Reserve(context.Background(), march, lim, usd(0.5))
			if ref != nil {
				t.Fatal("a soft budget refused")
			}
			m.Settle(context.Background(), r, usd(0.1))
			src.set("user:x", int64(usd(0.8)), nil)
			m.reloads.Store(m.key("user:x", "total", march).name, time.Now()) // due now
			if _, ref := m.Reserve(context.Background(), march, lim, usd(0.1)); ref != nil {
				t.Fatal("a soft budget refused")
			}
			if spent, _ := state(t, m, "user:x", time.Time{}); spent != usd(0.8) {
				t.Errorf("spent %s after the late read, want 0.8 (the larger of 0.1 counted and 0.8 persisted)", spent)
			}
		})
	}
}

// TestPeriodResetAcrossReplicas (checklist 41): three replicas sharing
// Redis across a UTC midnight. A request admitted at 23:59:59 and settled
// after midnight counts once, in the old day; the new day's counter is
// started once — a replica that uses it after another has counted in it
// takes the shared counter, not the persisted spend (which lags: the
// analytics store has not seen those requests yet), so nothing is reset
// twice.
func TestPeriodResetAcrossReplicas(t *testing.T) {
	src := &spendMap{}
	src.set("gateway:midnight", 0, nil) // the analytics store: nothing yet
	mk := managers()["redis"]
	reps := []*Manager{mk(t, Config{Spend: src}), mk(t, Config{Spend: src}), mk(t, Config{Spend: src})}
	ctx := context.Background()
	lim := []Limit{{Scope: "gateway:midnight", Amount: usd(1), Period: "daily", Hard: true}}
	late := time.Date(2026, 3, 10, 23, 59, 59, 500_000_000, time.UTC)
	straddling, ref := reps[0].Reserve(ctx, late, lim, usd(0.4))
	if ref != nil {
		t.Fatal(ref)
	}
	after := late.Add(time.Second)
	r, ref := reps[1].Reserve(ctx, after, lim, usd(0.3))
	if ref != nil {
		t.Fatal(ref)
	}
	reps[1].Settle(ctx, r, usd(0.3))
	// Replicas 0 and 2 first use the new day now, concurrently.
	var wg sync.WaitGroup
	for _, m := range []*Manager{reps[0], reps[2]} {
		wg.Go(func() {
			r, ref := m.Reserve(ctx, after.Add(time.Second), lim, usd(0.2))
			if ref != nil {
				t.Error(ref)
				return
			}
			m.Settle(ctx, r, usd(0.2))
		})
	}
	wg.Wait()
	reps[0].Settle(ctx, straddling, usd(0.4)) // after midnight: in its own day
	day10 := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	for i, m := range reps {
		if spent, reserved := state(t, m, "gateway:midnight", day10); spent != usd(0.4) || reserved != 0 {
			t.Errorf("replica %d, day 10: spent %s reserved %s, want 0.4 and 0", i, spent, reserved)
		}
		if spent, reserved := state(t, m, "gateway:midnight", day10.AddDate(0, 0, 1)); spent != usd(0.7) || reserved != 0 {
			t.Errorf("replica %d, day 11: spent %s reserved %s, want 0.3 + 0.2 + 0.2 and 0 (started once)", i, spent, reserved)
		}
	}
}

// TestLeaseLapses: the reservation of a request never settled (its
// process died) stops holding budget after LeaseTTL.
func TestLeaseLapses(t *testing.T) {
	for name, mk := range managers() {
		t.Run(name, func(t *testing.T) {
			now := march
			m := mk(t, Config{LeaseTTL: time.Minute, Now: func() time.Time { return now }})
			lim := []Limit{{Scope: "gateway:l", Amount: usd(1), Period: "monthly", Hard: true}}
			if _, ref := m.Reserve(context.Background(), march, lim, usd(0.9)); ref != nil {
				t.Fatal(ref)
			}
			if _, ref := m.Reserve(context.Background(), march.Add(30*time.Second), lim, usd(0.9)); ref == nil {
				t.Fatal("admitted while the first reservation holds")
			}
			now = march.Add(2 * time.Minute)
			if _, reserved := state(t, m, "gateway:l", monthStart); reserved != 0 {
				t.Errorf("reserved %s after the lease, want 0", reserved)
			}
			if _, ref := m.Reserve(context.Background(), now, lim, usd(0.9)); ref != nil {
				t.Errorf("refused after the lease lapsed: %+v", ref)
			}
		})
	}
}

// TestPeriods: each period has its own counter; a reservation settles in
// the period it was made in, even after the reset.
func TestPeriods(t *testing.T) {
	for name, mk := range managers() {
		t.Run(name, func(t *testing.T) {
			m := mk(t, Config{})
			lim := []Limit{{Scope: "gateway:p", Amount: usd(1), Period: "daily", Hard: true}}
			late := time.Date(2026, 3, 10, 23, 59, 59, 0, time.UTC)
			r, ref := m.Reserve(context.Background(), late, lim, usd(1))
			if ref != nil {
				t.Fatal(ref)
			}
			next := late.Add(2 * time.Second)
			if _, ref := m.Reserve(context.Background(), next, lim, usd(1)); ref != nil {
				t.Errorf("the new day refused: %+v", ref)
			}
			m.Settle(context.Background(), r, usd(0.7))
			day10 := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
			if spent, reserved := state(t, m, "gateway:p", day10); spent != usd(0.7) || reserved != 0 {
				t.Errorf("day 10: spent %s reserved %s, want 0.7 and 0", spent, reserved)
			}
			if spent, reserved := state(t, m, "gateway:p", day10.AddDate(0, 0, 1)); spent != 0 || reserved != usd(1) {
				t.Errorf("day 11: spent %s reserved %s, want 0 and 1", spent, reserved)
			}
		})
	}
}

// TestRedisKeys: keys are namespaced and carry a TTL: a day past the
// period's end, or 35 days for a total budget.
func TestRedisKeys(t *testing.T) {
	c, prefix := testenv.Redis(t)
	m := newManager(t, Config{Redis: c, Prefix: prefix, Timeout: 5 * time.Second})
	now := time.Now().UTC()
	ctx := context.Background()
	m.Reserve(ctx, now, []Limit{{Scope: "gateway:k", Amount: usd(1), Period: "daily", Hard: true}}, usd(0.1))
	m.Reserve(ctx, now, []Limit{{Scope: "user:k", Amount: usd(1), Period: "total", Hard: true}}, usd(0.1))
	start, end := Window("daily", now)
	want := map[string]time.Duration{
		prefix + "gateway:k:" + itoa(start.Unix()):             end.Add(24 * time.Hour).Sub(now),
		prefix + "gateway:k:" + itoa(start.Unix()) + ":leases": end.Add(24 * time.Hour).Sub(now),
		prefix + "user:k:0":        totalTTL,
		prefix + "user:k:0:leases": totalTTL,
	}
	keys, err := c.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != len(want) {
		t.Errorf("keys %v, want %d", keys, len(want))
	}
	for k, ttl := range want {
		got, err := c.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if d := got - ttl; d > time.Second || d < -5*time.Second {
			t.Errorf("TTL of %s is %s, want about %s", k, got, ttl)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestRedisFallback: with Redis cut off, reservations are made per process
// on what remained divided by the replicas; settles of reservations made
// in Redis are replayed once it is back, leaving nothing reserved.
func TestRedisFallback(t *testing.T) {
	c, prefix := testenv.Redis(t)
	proxy := testenv.NewTCPProxy(t, c.Options().Addr)
	opts := *c.Options()
	opts.Addr, opts.MaxRetries, opts.ContextTimeoutEnabled = proxy.Addr(), -1, true
	pc := redis.NewClient(&opts)
	t.Cleanup(func() { _ = pc.Close() })
	src := &spendMap{}
	src.set("gateway:f", int64(usd(0.2)), nil)
	m := newManager(t, Config{Redis: pc, Prefix: prefix, Spend: src, FallbackReplicas: 2,
		RetryInterval: 20 * time.Millisecond})
	ctx := context.Background()
	lim := []Limit{{Scope: "gateway:f", Amount: usd(1), Period: "monthly", Hard: true}}
	inRedis, ref := m.Reserve(ctx, march, lim, usd(0.1))
	if ref != nil {
		t.Fatal(ref)
	}
	proxy.Break()
	// Fallback: 0.2 persisted, 0.8 remained, 0.4 for this replica.
	n := 0
	var local []*Reservation
	for n < 100 {
		r, ref := m.Reserve(ctx, march, lim, usd(0.1))
		if ref != nil {
			break
		}
		local = append(local, r)
		n++
	}
	if n != 4 {
		t.Errorf("fallback admitted %d × 0.1, want 4", n)
	}
	m.Settle(ctx, inRedis, usd(0.1)) // Redis down: kept for replay
	for _, r := range local {
		m.Settle(ctx, r, usd(0.1))
	}
	proxy.Restore()
	if !waitFor(5*time.Second, func() bool {
		m.Reserve(ctx, march, lim, 0) // reaches Redis when it is back, then replays
		return m.pending.len() == 0
	}) {
		t.Fatal("the pending settle was not replayed")
	}
	spent, reserved, _, err := m.redis.state(ctx, m.key("gateway:f", "monthly", march), time.Now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	if spent != int64(usd(0.3)) || reserved != 0 {
		t.Errorf("Redis counter spent %d reserved %d, want 0.3 (0.2 persisted + 0.1 settled) and 0", spent, reserved)
	}
}

// TestLocalSweep: counters of past periods are dropped.
func TestLocalSweep(t *testing.T) {
	m := NewLocal(nil)
	lim := func(s string) []Limit { return []Limit{{Scope: s, Amount: usd(1), Period: "daily", Hard: true}} }
	for _, s := range []string{"gateway:a", "gateway:b", "user:c"} {
		r, _ := m.Reserve(context.Background(), march, lim(s), usd(0.1))
		m.Settle(context.Background(), r, usd(0.1))
	}
	if n := m.local.len(); n != 3 {
		t.Fatalf("%d counters, want 3", n)
	}
	later := march.Add(72 * time.Hour)
	for i := range 500 { // reach every shard
		m.Reserve(context.Background(), later, lim("user:"+itoa(int64(i+1))), 0)
	}
	for _, s := range []string{"gateway:a", "gateway:b", "user:c"} {
		if _, _, found := m.local.state(m.key(s, "daily", march), later.UnixMilli()); found {
			t.Errorf("the counter of %s two days after its period is still held", s)
		}
	}
}

func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}
