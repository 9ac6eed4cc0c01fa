package snapshot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/store"
)

const (
	// connectTimeout bounds one attempt to open the LISTEN connection.
	connectTimeout = 10 * time.Second
	// listenIdle is how long the LISTEN connection may stay silent before
	// it is pinged: a connection cut without a FIN (a NAT or failover
	// dropping it) would otherwise wait for a notification forever.
	listenIdle = time.Minute
)

// listen keeps a dedicated PostgreSQL connection listening on
// store.NotifyChannel until ctx ends, reconnecting with backoff, and asks
// the run loop for a version check on every notification. The channel is
// database-wide: stores in other schemas of the same database notify it
// too, which costs one version read and no rebuild.
func (h *Holder) listen(ctx context.Context) {
	delay := minBackoff
	var lastLogged time.Time // rate-limits the warning; owned by this goroutine
	for {
		err := h.listenOnce(ctx, func() { delay = minBackoff })
		h.listening.Store(false)
		if ctx.Err() != nil {
			return
		}
		if now := time.Now(); now.Sub(lastLogged) >= errLogEvery {
			lastLogged = now
			h.log.Warn("configuration change notifications interrupted; reconnecting (the version check still runs)",
				"poll", h.cfg.Poll, "err", err)
		}
		if !sleep(ctx, jitter(delay), nil) {
			return
		}
		delay = min(delay*2, maxBackoff)
	}
}

// listenOnce opens the connection, listens, and relays notifications until
// the connection fails or ctx ends. connected is called once listening.
func (h *Holder) listenOnce(ctx context.Context, connected func()) error {
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	conn, err := pgx.Connect(cctx, h.cfg.Store.DSN())
	cancel()
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
		_ = conn.Close(cctx) // the connection is done with either way
		cancel()
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{store.NotifyChannel}.Sanitize()); err != nil {
		return fmt.Errorf("listen on %s: %w", store.NotifyChannel, err)
	}
	h.listening.Store(true)
	connected()
	// Changes committed while nobody listened were announced to nobody.
	signal(h.check)
	for {
		wctx, cancel := context.WithTimeout(ctx, listenIdle)
		_, err := conn.WaitForNotification(wctx)
		idle := errors.Is(wctx.Err(), context.DeadlineExceeded)
		cancel()
		switch {
		case err == nil:
			signal(h.check)
		case ctx.Err() != nil:
			return ctx.Err()
		case idle:
			pctx, cancel := context.WithTimeout(ctx, checkTimeout)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return fmt.Errorf("ping idle connection: %w", err)
			}
		default:
			return fmt.Errorf("wait for notification: %w", err)
		}
	}
}
