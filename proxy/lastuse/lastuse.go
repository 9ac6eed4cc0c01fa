// Package lastuse records when inference tokens and their users were last
// used without a database call on the request path: the proxy marks a
// token in memory (Marks.Mark, a lock-free map load and an atomic store),
// and a flusher (Marks.Run) writes what was marked since its last flush
// in two batched UPDATEs, once per interval, so that a token's
// last_used_at and its user's last_seen_at are written at most once an
// interval however busy the token is (docs/decisions.md, "Token use from
// the proxy").
package lastuse

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/internal/store"
)

// DefaultInterval is how often marks are written: a token's last use is
// at most this stale in the store.
const DefaultInterval = time.Minute

// Marks holds the tokens used since the last flush. The zero value is not
// usable: use New. A nil *Marks marks nothing.
type Marks struct {
	st       *store.Store
	log      *slog.Logger
	interval time.Duration
	// tokens maps a token id to its *mark. Entries stay: a token used
	// once is likely used again, and there are no more of them than
	// tokens in the snapshot.
	tokens sync.Map
}

// mark is one token's last use not yet written (unix nanoseconds; 0 when
// nothing is pending) and its user ("" for a token without one).
type mark struct {
	at   atomic.Int64
	user string
}

// New returns marks that Run writes to st every interval
// (DefaultInterval when interval is 0 or less).
func New(st *store.Store, log *slog.Logger, interval time.Duration) *Marks {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if log == nil {
		log = slog.Default()
	}
	return &Marks{st: st, log: log, interval: interval}
}

// Mark records that token tokenID (of user userID, "" for none) was used
// at t. It never blocks and makes no call outside the process.
func (m *Marks) Mark(tokenID, userID string, t time.Time) {
	if m == nil || tokenID == "" {
		return
	}
	v, ok := m.tokens.Load(tokenID)
	if !ok {
		v, _ = m.tokens.LoadOrStore(tokenID, &mark{user: userID})
	}
	mk := v.(*mark)
	ns := t.UnixNano()
	// Keep the latest use: requests finish out of order.
	for {
		old := mk.at.Load()
		if old >= ns || mk.at.CompareAndSwap(old, ns) {
			return
		}
	}
}

// Run flushes the marks every interval until ctx ends, then once more.
func (m *Marks) Run(ctx context.Context) error {
	t := time.NewTicker(m.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			m.Flush(fctx)
			return nil
		case <-t.C:
			m.Flush(ctx)
		}
	}
}

// Flush writes the uses marked since the last flush. A failed write is
// logged and its marks are put back for the next flush.
func (m *Marks) Flush(ctx context.Context) {
	var uses []store.TokenUse
	m.tokens.Range(func(k, v any) bool {
		mk := v.(*mark)
		if ns := mk.at.Swap(0); ns != 0 {
			uses = append(uses, store.TokenUse{TokenID: k.(string), UserID: mk.user, At: time.Unix(0, ns).UTC()})
		}
		return true
	})
	if len(uses) == 0 {
		return
	}
	if err := store.TouchTokens(ctx, m.st, uses); err != nil {
		m.log.WarnContext(ctx, "record token use", "tokens", len(uses), "err", err)
		for _, u := range uses {
			m.Mark(u.TokenID, u.UserID, u.At)
		}
	}
}

// Pending reports whether a use of tokenID waits for the next flush.
func (m *Marks) Pending(tokenID string) bool {
	v, ok := m.tokens.Load(tokenID)
	return ok && v.(*mark).at.Load() != 0
}
