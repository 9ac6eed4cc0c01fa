package admin

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/store"
)

// TestAuthenticateStampedeIsCoalesced checks security checklist item 57: a
// cold-cache stampede of 100 concurrent requests with one session token —
// or one unknown token — costs the store one lookup, and every caller gets
// the lookup's answer (no 500s).
func TestAuthenticateStampedeIsCoalesced(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		const pw = "member password 1"
		member(t, s, "m@acme.test", pw)
		sess, err := s.CreateSession(ctx, "m@acme.test", pw, "10.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		const callers = 100
		for _, tc := range []struct {
			name, secret string
			wantStatus   int
		}{
			{"session token", sess.Token, 0},
			{"unknown token", "sk-sl-" + "unknownunknownunknownunknownunknown00000", 401},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var joined, lookups atomic.Int64
				all := make(chan struct{})
				s.auths.joined = func() {
					if joined.Add(1) == callers {
						close(all)
					}
				}
				// The first lookup waits until every caller has joined it.
				s.auths.lookup = func() {
					lookups.Add(1)
					<-all
				}
				defer func() { s.auths.joined, s.auths.lookup = nil, nil }()
				var wg sync.WaitGroup
				results := make([]error, callers)
				principals := make([]*auth.Principal, callers)
				for i := range callers {
					wg.Go(func() { principals[i], results[i] = s.Authenticate(ctx, tc.secret) })
				}
				wg.Wait()
				if n := lookups.Load(); n != 1 {
					t.Fatalf("%d concurrent calls made %d lookups, want 1", callers, n)
				}
				for i, err := range results {
					if tc.wantStatus == 0 {
						if err != nil || principals[i] == nil || principals[i].Kind != auth.CredSession {
							t.Fatalf("caller %d: %v %+v", i, err, principals[i])
						}
						continue
					}
					wantCode(t, err, tc.wantStatus, "invalid_token")
				}
			})
		}
		// No credential is cached beyond the flight: a sign-out takes
		// effect at the next call.
		p, err := s.Authenticate(ctx, sess.Token)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteSession(ctx, p); err != nil {
			t.Fatal(err)
		}
		_, err = s.Authenticate(ctx, sess.Token)
		wantCode(t, err, 401, "invalid_token")
		if n, err := store.Count[store.Token](ctx, s.db, store.Eq("kind", store.TokenSession)); err != nil || n != 0 {
			t.Fatalf("%d sessions left: %v", n, err)
		}
	})
}
