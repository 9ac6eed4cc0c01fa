package snapshot

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/testenv"
)

// TestSyncReadYourWrites: after Sync, a write made before the call is in
// the snapshot in service.
func TestSyncReadYourWrites(t *testing.T) {
	st := testenv.Store(t, testenv.SQLite)
	box, _ := secret.NewBox(make([]byte, 32))
	svc, err := admin.New(admin.Config{Store: st, Box: box})
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := svc.Bootstrap(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := svc.Authenticate(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	h := NewHolder(HolderConfig{Store: st, Box: box, Poll: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { _ = h.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	// Sync on a holder that has not started yet returns at once (its first
	// build reads everything): wait for the first snapshot, so that every
	// Sync below is one of a running holder.
	for deadline := time.Now().Add(5 * time.Second); !h.Ready(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the holder built no snapshot within 5 s")
		}
	}
	for i := 0; i < 5; i++ {
		slug := "gw-" + string(rune('a'+i))
		if _, err := svc.CreateGateway(context.Background(), p, "platform", admin.GatewayInput{Slug: slug}); err != nil {
			t.Fatal(err)
		}
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := h.Sync(sctx); err != nil {
			t.Fatalf("sync: %v", err)
		}
		scancel()
		if _, ok := h.Load().Gateway("platform", slug); !ok {
			t.Fatalf("gateway %s written before Sync is not in the snapshot", slug)
		}
	}
}

// TestSyncNotRunning: a holder that is not running answers Sync at once
// (its first build will read the write), so that writes made before the
// proxy starts, such as the bootstrap's, do not wait out their timeout.
func TestSyncNotRunning(t *testing.T) {
	h := NewHolder(HolderConfig{Store: testenv.Store(t, testenv.SQLite), Box: try(secret.NewBox(make([]byte, 32))).must(t)})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := h.Sync(ctx); err != nil {
		t.Fatalf("Sync on a holder not running: %v, want nil", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Sync on a holder not running took %s, want at once", d)
	}
}
