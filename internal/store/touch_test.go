package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/store"
)

// TestTouchTokens: one call sets each token's last_used_at to its own
// use and the user's last_seen_at to the latest use of its tokens, on
// every backend; a token not named keeps its value.
func TestTouchTokens(t *testing.T) {
	forEachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		insertTenant(t, st, "acme")
		u := &store.User{ID: "usr_1", TenantID: "acme", Email: "a@acme.test", Role: auth.Member, Status: store.UserActive,
			CreatedAt: now, UpdatedAt: now}
		if err := store.Insert(ctx, st.DB, u); err != nil {
			t.Fatal(err)
		}
		uid := u.ID
		for _, id := range []string{"tok_1", "tok_2", "tok_3"} {
			tok := &store.Token{ID: id, Kind: store.TokenUser, TenantID: "acme", UserID: &uid, Hash: "h" + id, Prefix: "p", Last4: "l",
				CreatedAt: now, UpdatedAt: now}
			if err := store.Insert(ctx, st.DB, tok); err != nil {
				t.Fatal(err)
			}
		}
		t1, t2 := now.Add(time.Minute), now.Add(2*time.Minute)
		err := store.TouchTokens(ctx, st, []store.TokenUse{{TokenID: "tok_1", UserID: uid, At: t2}, {TokenID: "tok_2", UserID: uid, At: t1}})
		if err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]time.Time{"tok_1": t2, "tok_2": t1} {
			got, err := store.Get[store.Token](ctx, st.DB, store.Eq("id", id))
			if err != nil {
				t.Fatal(err)
			}
			if got.LastUsedAt == nil || !got.LastUsedAt.Equal(want) {
				t.Errorf("%s last_used_at = %v, want %v", id, got.LastUsedAt, want)
			}
		}
		if got, err := store.Get[store.Token](ctx, st.DB, store.Eq("id", "tok_3")); err != nil || got.LastUsedAt != nil {
			t.Errorf("tok_3 last_used_at = %v (%v), want unset", got.LastUsedAt, err)
		}
		got, err := store.Get[store.User](ctx, st.DB, store.Eq("id", uid))
		if err != nil {
			t.Fatal(err)
		}
		if got.LastSeenAt == nil || !got.LastSeenAt.Equal(t2) {
			t.Errorf("last_seen_at = %v, want %v (the latest use of its tokens)", got.LastSeenAt, t2)
		}
	})
}
