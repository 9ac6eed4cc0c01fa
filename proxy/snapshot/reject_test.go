package snapshot

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/testenv"
)

// Checklist 58: a configuration that cannot be loaded — larger than the
// snapshot's bound, or a row that does not decode — is refused; the last
// good snapshot stays in service, an error line is logged and Stats says
// so (the /healthz flag, cmd/sluice); once the configuration is fixed it
// loads without a restart.

// countingRows is the smallest limit CheckSize accepts: the number of
// configuration rows.
func countingRows(t *testing.T, e *env) int {
	t.Helper()
	if err := CheckSize(context.Background(), e.st, 1<<30); err != nil {
		t.Fatal(err)
	}
	for n := 0; ; n++ {
		if err := CheckSize(context.Background(), e.st, n); err == nil {
			return n
		}
	}
}

func TestCheckSizeCountsWhatASnapshotLoads(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		e := newEnv(t, b, nil)
		g := e.gateway(t, "platform", "prod")
		e.gatewayToken(t, g.ID, admin.TokenInput{Name: "a"})
		n := countingRows(t, e)
		// platform, its Administrator, the Administrator's token, the
		// gateway and its token.
		if n != 5 {
			t.Fatalf("%d configuration rows, want 5", n)
		}
		err := CheckSize(ctx, e.st, n-1)
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "SLUICE_SNAPSHOT_MAX_ROWS") {
			t.Fatalf("CheckSize over the limit: %v, want ErrTooLarge naming the setting", err)
		}
		// Provider keys count too, though Build reads them apart.
		if _, err := e.svc.CreateKey(ctx, e.admin, g.ID, admin.KeyInput{Provider: "openai", Alias: "main", Key: "sk-test-1234567890abcdef"}); err != nil {
			t.Fatal(err)
		}
		if err := CheckSize(ctx, e.st, n); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("CheckSize with a key over the limit: %v, want ErrTooLarge", err)
		}
	})
}

// rejecting runs a holder with logs in logs and MaxRows maxRows.
func rejecting(t *testing.T, e *env, maxRows int, logs *syncBuffer) *Holder {
	t.Helper()
	h := NewHolder(HolderConfig{Store: e.st, Box: e.box, Poll: 20 * time.Millisecond, MaxRows: maxRows,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	start(t, h)
	ready(t, h)
	return h
}

// wantRejected waits until h has refused a newer configuration and checks
// that s stays in service with one error line logged.
func wantRejected(t *testing.T, h *Holder, s *Snapshot, logs *syncBuffer, why string) {
	t.Helper()
	waitFor(t, 5*time.Second, "the new configuration refused", func() bool { return h.Stats().Failures >= 3 })
	if h.Load() != s {
		t.Fatalf("the snapshot in service changed to version %d, want the last good one %d", h.Load().Version, s.Version)
	}
	st := h.Stats()
	if !st.Ready || st.Version != s.Version || !strings.Contains(st.LastError, why) || st.LastErrorAt == nil {
		t.Errorf("Stats() = %+v, want ready at version %d with an error naming %q", st, s.Version, why)
	}
	if n := logs.count("level=ERROR"); n != 1 || !strings.Contains(logs.String(), "serving the last good snapshot") {
		t.Errorf("%d error lines, want 1 saying the last good snapshot is served:\n%s", n, logs.String())
	}
}

func TestHolderKeepsLastGoodOnOversizedConfiguration(t *testing.T) {
	e := newEnv(t, testenv.SQLite, nil)
	g := e.gateway(t, "platform", "prod")
	n := countingRows(t, e)
	var logs syncBuffer
	h := rejecting(t, e, n, &logs)
	s := h.Load()

	tok := e.gatewayToken(t, g.ID, admin.TokenInput{Name: "one too many"})
	wantRejected(t, h, s, &logs, "larger than the snapshot limit")
	if _, ok := h.Load().Token(hashOf(tok.Secret)); ok {
		t.Error("the refused configuration's token is served")
	}

	// Back within the bound: the next check loads it, no restart.
	if err := e.svc.DeleteGatewayToken(context.Background(), e.admin, g.ID, tok.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the configuration loaded again", func() bool { return h.Load() != s && h.Stats().LastError == "" })
	if !strings.Contains(logs.String(), "configuration loads again") {
		t.Errorf("no line says the configuration loads again:\n%s", logs.String())
	}
}

func TestHolderKeepsLastGoodOnUndecodableConfiguration(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		e := newEnv(t, b, nil)
		g := e.gateway(t, "platform", "prod")
		var logs syncBuffer
		h := rejecting(t, e, 0, &logs)
		s := h.Load()

		// A row that does not decode (written around the admin API, as a
		// bad migration or a manual fix would) with a new version.
		corrupt := func(routes string) {
			t.Helper()
			err := e.st.InTx(ctx, func(tx bun.Tx) error {
				if _, err := tx.NewUpdate().Table("gateways").Set("routes = ?", routes).Where("id = ?", g.ID).Exec(ctx); err != nil {
					return err
				}
				return e.st.BumpConfigVersion(ctx, tx)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		corrupt(`[{"name":"r","strategy":"fallback","targets":"not a list"}]`)
		wantRejected(t, h, s, &logs, "gateways")
		if _, ok := h.Load().Gateway("platform", "prod"); !ok {
			t.Error("the last good snapshot lost the gateway")
		}

		corrupt(`[]`)
		waitFor(t, 5*time.Second, "the fixed configuration loaded", func() bool { return h.Load() != s && h.Stats().LastError == "" })
	})
}
