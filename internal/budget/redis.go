package budget

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisCounters keep budget counters in Redis. A counter is a hash
// (spent, reserved, loaded) named by counterKey.name; its open
// reservations are a sorted set next to it (name + ":leases"), each
// member "<lease id>:<cost>" scored by the lease's end, so that the
// reservations of a process that died lapse on their own. Every
// reservation sets both keys' TTL to a day past the period's end (35 idle
// days for a total budget).
//
// Amounts are integer nano-dollars. Redis counts them exactly (HINCRBY);
// the scripts compare them as Lua numbers, exact up to 2^53 nano-dollars
// (about 9 million dollars).
type redisCounters struct {
	c       redis.Scripter
	timeout time.Duration
}

// expireLeasesLua drops the lapsed leases of h's set z and gives their
// cost back. It expects h, z and now (ms) in scope.
const expireLeasesLua = `
local lapsed = redis.call('ZRANGEBYSCORE', z, '-inf', '(' .. now)
if #lapsed > 0 then
  local freed = 0
  for _, m in ipairs(lapsed) do
    freed = freed + tonumber(string.match(m, ':(%d+)$'))
  end
  redis.call('ZREMRANGEBYSCORE', z, '-inf', '(' .. now)
  local r = redis.call('HINCRBY', h, 'reserved', -freed)
  if r < 0 then redis.call('HSET', h, 'reserved', 0) end
end
`

// reserveScript: KEYS h, z. ARGV: amount, cost, hard (1|0), lease member
// ("<lease id>:<cost>", "" for none), lease end (ms), now (ms), TTL (ms), init ("" when
// unknown), init loaded (1|0). It answers
// {status, fits, spent, reserved, loaded}; status -1 asks for init, 0 is
// a refusal, 1 an admission.
var reserveScript = redis.NewScript(`
local h, z = KEYS[1], KEYS[2]
local now = tonumber(ARGV[6])
if redis.call('EXISTS', h) == 0 then
  if ARGV[8] == '' then return {-1, 0, 0, 0, 0} end
  redis.call('HSET', h, 'spent', ARGV[8], 'reserved', 0, 'loaded', ARGV[9])
end
` + expireLeasesLua + `
local spent = tonumber(redis.call('HGET', h, 'spent'))
local reserved = tonumber(redis.call('HGET', h, 'reserved'))
local amount, cost = tonumber(ARGV[1]), tonumber(ARGV[2])
local fits = 0
if spent < amount and spent + reserved + cost <= amount then fits = 1 end
local status = fits
if ARGV[3] == '0' then status = 1 end
if status == 1 and ARGV[4] ~= '' then
  redis.call('ZADD', z, ARGV[5], ARGV[4])
  reserved = redis.call('HINCRBY', h, 'reserved', ARGV[2])
end
redis.call('PEXPIRE', h, ARGV[7])
if redis.call('EXISTS', z) == 1 then redis.call('PEXPIRE', z, ARGV[7]) end
local loaded = tonumber(redis.call('HGET', h, 'loaded') or '1')
return {status, fits, spent, reserved, loaded}
`)

// settleScript: KEYS h, z. ARGV: lease member ("" for none), actual. It
// answers {found, spent}. An absent counter (lapsed, flushed) is left
// absent: its next use reads the persisted spend, which holds this cost.
var settleScript = redis.NewScript(`
local h, z = KEYS[1], KEYS[2]
if redis.call('EXISTS', h) == 0 then return {0, 0} end
if ARGV[1] ~= '' and redis.call('ZREM', z, ARGV[1]) == 1 then
  local cost = tonumber(string.match(ARGV[1], ':(%d+)$'))
  local r = redis.call('HINCRBY', h, 'reserved', -cost)
  if r < 0 then redis.call('HSET', h, 'reserved', 0) end
end
local spent = redis.call('HINCRBY', h, 'spent', ARGV[2])
return {1, spent}
`)

// mergeScript: KEYS h. ARGV: persisted spend. It raises spent to the
// persisted spend read late and marks the counter loaded.
var mergeScript = redis.NewScript(`
local h = KEYS[1]
if redis.call('EXISTS', h) == 0 or redis.call('HGET', h, 'loaded') == '1' then return 0 end
if tonumber(redis.call('HGET', h, 'spent')) < tonumber(ARGV[1]) then
  redis.call('HSET', h, 'spent', ARGV[1])
end
redis.call('HSET', h, 'loaded', 1)
return 1
`)

// stateScript: KEYS h, z. ARGV: now (ms). It answers {found, spent,
// reserved} after dropping lapsed leases.
var stateScript = redis.NewScript(`
local h, z = KEYS[1], KEYS[2]
local now = tonumber(ARGV[1])
if redis.call('EXISTS', h) == 0 then return {0, 0, 0} end
` + expireLeasesLua + `
return {1, tonumber(redis.call('HGET', h, 'spent')), tonumber(redis.call('HGET', h, 'reserved'))}
`)

func (r *redisCounters) run(ctx context.Context, s *redis.Script, k counterKey, args ...any) ([]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	v, err := s.Run(ctx, r.c, []string{k.name, k.name + ":leases"}, args...).Int64Slice()
	if err != nil {
		return nil, fmt.Errorf("budget script on %s: %w", k.name, err)
	}
	return v, nil
}

func (r *redisCounters) reserve(ctx context.Context, k counterKey, q reserveReq) (reserveOut, error) {
	init, loaded := "", "0"
	if q.haveInit {
		init = strconv.FormatInt(q.init, 10)
	}
	if q.initLoaded {
		loaded = "1"
	}
	member := ""
	if q.lease != "" {
		member = q.lease + ":" + strconv.FormatInt(q.cost, 10)
	}
	// The TTL is relative to the caller's clock, the one that chose the
	// period: a day past the period's end, or the idle TTL of a total
	// budget.
	ttl := totalTTL.Milliseconds()
	if !k.expireAt.IsZero() {
		ttl = max(k.expireAt.UnixMilli()-q.nowMS, time.Minute.Milliseconds())
	}
	v, err := r.run(ctx, reserveScript, k, q.amount, q.cost, boolArg(q.hard), member, q.leaseUntilMS,
		q.nowMS, ttl, init, loaded)
	if err != nil {
		return reserveOut{}, err
	}
	if len(v) != 5 {
		return reserveOut{}, fmt.Errorf("budget script on %s answered %d values", k.name, len(v))
	}
	if v[0] == -1 {
		return reserveOut{needInit: true}, nil
	}
	return reserveOut{admitted: v[0] == 1, fits: v[1] == 1, spent: v[2], reserved: v[3], loaded: v[4] == 1}, nil
}

func (r *redisCounters) settle(ctx context.Context, k counterKey, q settleReq) (settleOut, error) {
	member := ""
	if q.lease != "" {
		member = q.lease + ":" + strconv.FormatInt(q.cost, 10)
	}
	v, err := r.run(ctx, settleScript, k, member, q.actual)
	if err != nil {
		return settleOut{}, err
	}
	if len(v) != 2 {
		return settleOut{}, fmt.Errorf("budget settle script on %s answered %d values", k.name, len(v))
	}
	return settleOut{found: v[0] == 1, spent: v[1]}, nil
}

func (r *redisCounters) merge(ctx context.Context, k counterKey, persisted int64) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	if err := mergeScript.Run(ctx, r.c, []string{k.name}, persisted).Err(); err != nil {
		return fmt.Errorf("budget merge script on %s: %w", k.name, err)
	}
	return nil
}

func (r *redisCounters) state(ctx context.Context, k counterKey, nowMS int64) (spent, reserved int64, found bool, err error) {
	v, err := r.run(ctx, stateScript, k, nowMS)
	if err != nil {
		return 0, 0, false, err
	}
	if len(v) != 3 {
		return 0, 0, false, fmt.Errorf("budget state script on %s answered %d values", k.name, len(v))
	}
	return v[1], v[2], v[0] == 1, nil
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// pendingBatch is how many failed settles one call replays.
const pendingBatch = 32

// maxPending bounds the settles kept for replay; beyond it the oldest are
// dropped (their reservations then lapse with their lease) and counted.
const maxPending = 100_000

type pendingSettle struct {
	key counterKey
	req settleReq
}

// pendingSettles are the settles Redis missed, replayed in order once it
// answers again. A settle whose answer was lost (a timeout after Redis
// ran it) may be replayed twice: the spend is then counted twice, an
// error on the safe side for a budget.
type pendingSettles struct {
	mu      sync.Mutex
	q       []pendingSettle
	dropped atomic.Int64
	lastLog time.Time
}

func (p *pendingSettles) add(s pendingSettle, log *slog.Logger) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.q) >= maxPending {
		p.q = p.q[1:]
		p.dropped.Add(1)
		if time.Since(p.lastLog) >= time.Minute {
			p.lastLog = time.Now()
			log.Error("budget settles waiting for redis exceed the bound; the oldest are dropped and their reservations lapse with their lease",
				"bound", maxPending, "dropped", p.dropped.Load())
		}
	}
	p.q = append(p.q, s)
}

func (p *pendingSettles) take(n int) []pendingSettle {
	p.mu.Lock()
	defer p.mu.Unlock()
	n = min(n, len(p.q))
	out := make([]pendingSettle, n)
	copy(out, p.q)
	p.q = p.q[n:]
	if len(p.q) == 0 {
		p.q = nil
	}
	return out
}

func (p *pendingSettles) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.q)
}
