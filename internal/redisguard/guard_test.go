package redisguard

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestGuard(t *testing.T) {
	var buf bytes.Buffer
	g := New(slog.New(slog.NewTextHandler(&buf, nil)), 50*time.Millisecond, "limits are local", "limits")
	if g.Skip() {
		t.Fatal("a fresh guard skips Redis")
	}
	g.Failed(errors.New("dial tcp: refused"))
	g.Failed(errors.New("dial tcp: refused"))
	if !g.Skip() {
		t.Fatal("after a failure the guard does not skip Redis")
	}
	if n := strings.Count(buf.String(), "redis unreachable"); n != 1 {
		t.Fatalf("logged the fallback %d times, want once a minute", n)
	}
	time.Sleep(60 * time.Millisecond)
	if g.Skip() {
		t.Fatal("the guard still skips Redis after the retry interval")
	}
	g.OK()
	if !strings.Contains(buf.String(), "limits are shared again") {
		t.Fatalf("recovery not logged: %s", buf.String())
	}
	if got := g.Fallbacks(); got != 3 {
		t.Fatalf("fallbacks %d, want 3 (two failures and one skip)", got)
	}
	var none *Guard
	if none.Skip() || none.Fallbacks() != 0 {
		t.Fatal("a nil guard skips or counts")
	}
	none.Failed(errors.New("x"))
	none.OK()
}
