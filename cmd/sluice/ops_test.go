package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/embedded"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/proxy/snapshot"
)

// TestBackupRestoreEmbedded: sluice backup copies the embedded stores and
// the master key file while analytics writes go on; the copy, used as a
// data dir (the restore), holds the tenant, a provider key that opens and
// every record written before the backup began. A second backup into the
// same directory is refused and leaves the first intact.
func TestBackupRestoreEmbedded(t *testing.T) {
	ctx := context.Background()
	data, out := filepath.Join(t.TempDir(), "data"), filepath.Join(t.TempDir(), "backup")
	c := config{DataDir: data, LogLevel: "error", LogFormat: "text"}
	svc, closeSvc, err := openService(ctx, &c)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSvc()
	p, g := bootstrapAcme(t, ctx, svc)
	const canary = "sk-CANARY-backup-0001"
	if _, err := svc.CreateKey(ctx, p, g.ID, admin.KeyInput{Provider: "openai", Alias: "main", Key: canary}); err != nil {
		t.Fatal(err)
	}

	an, err := embedded.Open(ctx, filepath.Join(data, "analytics.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer an.Close()
	write := func(batch string, n int) {
		b := &analytics.Batch{ID: batch}
		for i := range n {
			b.Records = append(b.Records, &analytics.Record{ID: fmt.Sprintf("%s-%d", batch, i), TS: time.Now(), TenantID: "acme"})
		}
		if err := an.Write(ctx, b); err != nil {
			t.Error(err)
		}
	}
	const before = 50
	write("before", before)

	// The server goes on writing while the backup runs.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
				write(fmt.Sprintf("during%d", i), 10)
			}
		}
	})
	got, err := runCmd(t, "backup", "--data-dir", data, "--out", out)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("backup: %v (%s)", err, got)
	}
	for _, f := range []string{"sluice.db", "master.key", "analytics.db"} {
		path := filepath.Join(out, f)
		if !strings.Contains(got, "wrote "+path) {
			t.Errorf("output %q does not name %s", got, path)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, fi.Mode().Perm())
		}
	}
	if strings.Contains(got, canary) {
		t.Fatal("the output shows a provider key")
	}

	// Restore: the backup directory is the data dir of a new server.
	rc := config{DataDir: out, LogLevel: "error", LogFormat: "text"}
	rsvc, closeR, err := openService(ctx, &rc)
	if err != nil {
		t.Fatal(err)
	}
	defer closeR()
	if _, err := rsvc.GetTenant(ctx, p, "acme"); err != nil {
		t.Errorf("the restored store has no tenant acme: %v", err)
	}
	box, err := rc.box()
	if err != nil {
		t.Fatal(err)
	}
	st, err := rc.openStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	snap, err := snapshot.Build(ctx, st, box, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	gw, ok := snap.GatewayByID(g.ID)
	if !ok || len(gw.Keys["openai"]) != 1 || gw.Keys["openai"][0].Secret.Reveal() != canary || len(snap.Unopened()) != 0 {
		t.Fatal("the restored provider key does not open with the restored master key")
	}
	ran, err := embedded.Open(ctx, filepath.Join(out, "analytics.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ran.Close()
	n, err := ran.Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n < before || (n-before)%10 != 0 {
		t.Errorf("the restored analytics store holds %d records, want the %d written before and whole batches after", n, before)
	}

	again, err := runCmd(t, "backup", "--data-dir", data, "--out", out)
	if err == nil {
		t.Fatalf("a second backup into %s: %q, want a refusal", out, again)
	}
	if m, err := ran.Count(ctx); err != nil || m != n {
		t.Errorf("after the refused backup the copy holds %d records (%v), want %d", m, err, n)
	}
}

// TestBackupNothingEmbedded: with PostgreSQL and ClickHouse there is
// nothing for sluice backup to copy; it says what to use instead.
func TestBackupNothingEmbedded(t *testing.T) {
	out, err := runCmd(t, "backup", "--database-url", "postgres://u@127.0.0.1:1/x", "--clickhouse-url",
		"clickhouse://127.0.0.1:1/default", "--out", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "pg_dump") {
		t.Fatalf("backup: %v (%s), want a refusal naming pg_dump", err, out)
	}
}

// TestHealthcheckCommand: sluice healthcheck exits 0 on 200 and fails on
// 503 or no answer, from the listen address (and SLUICE_LISTEN).
func TestHealthcheckCommand(t *testing.T) {
	for _, tc := range []struct{ listen, want string }{
		{":8080", "http://127.0.0.1:8080/healthz"},
		{"0.0.0.0:9", "http://127.0.0.1:9/healthz"},
		{"[::]:9", "http://127.0.0.1:9/healthz"},
		{"10.1.2.3:80", "http://10.1.2.3:80/healthz"},
	} {
		if got, err := healthURL(tc.listen); err != nil || got != tc.want {
			t.Errorf("healthURL(%q) = %q, %v; want %q", tc.listen, got, err, tc.want)
		}
	}
	var status atomic.Int32
	status.Store(200)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			w.WriteHeader(404)
			return
		}
		w.WriteHeader(int(status.Load()))
	}))
	defer srv.Close()
	t.Setenv("SLUICE_LISTEN", srv.Listener.Addr().String())
	if out, err := runCmd(t, "healthcheck"); err != nil || !strings.HasPrefix(out, "200 ") {
		t.Fatalf("healthcheck of a healthy server: %v %q", err, out)
	}
	status.Store(503)
	if out, err := runCmd(t, "healthcheck"); err == nil {
		t.Fatalf("healthcheck of a 503: %q, want an error", out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	if out, err := runCmd(t, "healthcheck", "--listen", closed, "--timeout", "1s"); err == nil {
		t.Fatalf("healthcheck with nothing listening: %q, want an error", out)
	}
}

// TestMigrateConcurrentAndIdempotent: the step before a rolling upgrade.
// Several `sluice migrate` at once on an empty PostgreSQL schema (a
// migrate job racing replicas that migrate at start) all succeed; a
// further run applies nothing; a server then starts on the schema.
func TestMigrateConcurrentAndIdempotent(t *testing.T) {
	dbURL := testenv.FreshPostgresURL(t)
	t.Setenv("SLUICE_MASTER_KEY", strings.Repeat("ab", 32))
	const runs = 4
	errs := make([]error, runs)
	outs := make([]string, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() { outs[i], errs[i] = runCmd(t, "migrate", "--database-url", dbURL) })
	}
	wg.Wait()
	for i := range runs {
		if errs[i] != nil || !strings.Contains(outs[i], "store is up to date") {
			t.Errorf("concurrent migrate %d: %v %q", i, errs[i], outs[i])
		}
	}
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{DatabaseURL: dbURL})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	applied, err := st.Migrate(ctx)
	if err != nil || len(applied) != 0 {
		t.Fatalf("migrate after the concurrent runs applied %q (%v), want nothing", applied, err)
	}
	var locks int
	if err := st.DB.NewSelect().Table("bun_migration_locks").ColumnExpr("count(*)").Scan(ctx, &locks); err != nil || locks != 0 {
		t.Errorf("%d migration locks left (%v), want 0", locks, err)
	}
}
