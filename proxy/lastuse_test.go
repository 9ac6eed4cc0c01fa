package proxy

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/store"
)

// queryCounter counts every query made through a bun.DB it is hooked on,
// and the UPDATEs among them.
type queryCounter struct{ n, updates atomic.Int64 }

func (q *queryCounter) BeforeQuery(ctx context.Context, e *bun.QueryEvent) context.Context {
	q.n.Add(1)
	if strings.HasPrefix(e.Query, "UPDATE ") {
		q.updates.Add(1)
	}
	return ctx
}

func (q *queryCounter) AfterQuery(context.Context, *bun.QueryEvent) {}

// TestTokenUseFromInference: inference through a gateway token and a user
// token sets the tokens' last_used_at and the user's last_seen_at once
// the marks are flushed — and the requests themselves make no query on
// the store's handle: every query is the flush's.
func TestTokenUseFromInference(t *testing.T) {
	h := newHarness(t, harnessConfig{lastUse: true})
	u, userSecret := h.userToken(testTenant, auth.Member, "member@acme.test", h.gw.ID)
	h.rebuild()
	userTok, err := store.Get[store.Token](h.ctx, h.st.DB, store.Eq("user_id", u.ID))
	must(t, err)

	var q queryCounter
	h.st.DB.AddQueryHook(&q)
	before := time.Now().UTC().Add(-time.Second)
	for i := 0; i < 3; i++ {
		resp, body := h.chat(chatBody("openai/gpt-4o-mini", ""))
		wantStatus(t, resp, body, http.StatusOK)
		resp, body = h.do(http.MethodPost, chatPath, bearer(userSecret), chatBody("openai/gpt-4o-mini", ""))
		wantStatus(t, resp, body, http.StatusOK)
	}
	if n := q.n.Load(); n != 0 {
		t.Fatalf("6 requests made %d store queries, want 0", n)
	}
	h.lastUse.Flush(h.ctx)
	if n := q.updates.Load(); n != 2 {
		t.Errorf("a flush made %d UPDATEs, want 2 (one batched UPDATE of tokens, one of users)", n)
	}

	gwTok, err := store.Get[store.Token](h.ctx, h.st.DB, store.Eq("id", h.tokenID))
	must(t, err)
	userTok, err = store.Get[store.Token](h.ctx, h.st.DB, store.Eq("id", userTok.ID))
	must(t, err)
	user, err := store.Get[store.User](h.ctx, h.st.DB, store.Eq("id", u.ID))
	must(t, err)
	for name, at := range map[string]*time.Time{"gateway token last_used_at": gwTok.LastUsedAt,
		"user token last_used_at": userTok.LastUsedAt, "user last_seen_at": user.LastSeenAt} {
		if at == nil || at.Before(before) || at.After(time.Now().Add(time.Second)) {
			t.Errorf("%s = %v, want the time of the requests (after %v)", name, at, before)
		}
	}

	// Nothing used since: the next flush writes nothing.
	q.n.Store(0)
	h.lastUse.Flush(h.ctx)
	if n := q.n.Load(); n != 0 {
		t.Errorf("an empty flush made %d queries, want none", n)
	}
}

// TestTokenUseWithStoreClosed: with the proxy's store closed, inference
// still answers 200 (the request path reads only the snapshot and marks
// use in memory); the failed flush keeps its marks for the next one.
func TestTokenUseWithStoreClosed(t *testing.T) {
	h := newHarness(t, harnessConfig{lastUse: true})
	must(t, h.st.Close())
	for i := 0; i < 3; i++ {
		resp, body := h.chat(chatBody("openai/gpt-4o-mini", ""))
		wantStatus(t, resp, body, http.StatusOK)
	}
	h.lastUse.Flush(h.ctx) // fails: logged, marks kept
	if !h.lastUse.Pending(h.tokenID) {
		t.Error("the token's use was dropped by a failed flush; want it kept for the next")
	}
}
