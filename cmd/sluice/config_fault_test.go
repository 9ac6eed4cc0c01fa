package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// Configuration faults of `sluice serve` on PostgreSQL (security-reliability
// checklist 56 and 58): PostgreSQL is cut off behind a TCP proxy (the
// shared server is never stopped) while requests keep coming, and a
// configuration that cannot be loaded is written around the admin API.

// health is the body of /healthz.
type health struct {
	Status string `json:"status"`
	Checks map[string]struct {
		Status string `json:"status"`
		Detail string `json:"detail"`
	} `json:"checks"`
}

// readHealth answers /healthz's status code and body.
func readHealth(t *testing.T, base string) (int, health) {
	t.Helper()
	res, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatalf("/healthz: %v", err)
	}
	defer res.Body.Close()
	var h health
	if err := json.NewDecoder(res.Body).Decode(&h); err != nil {
		t.Fatalf("/healthz body: %v", err)
	}
	return res.StatusCode, h
}

// metricValue reads one unlabelled series of /metrics.
func metricValue(t *testing.T, base, name string) string {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return v
		}
	}
	t.Fatalf("/metrics has no %s", name)
	return ""
}

// eventually polls cond every 50 ms until it holds or d has passed.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// inference posts one chat request with token and returns the status.
func inference(t *testing.T, base, token string) int {
	t.Helper()
	return postJSON(t, base+"/v1/acme/prod/compat/chat/completions", token,
		`{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`)
}

// callStatus sends an admin request and returns its status and body,
// whatever the status.
func callStatus(t *testing.T, base, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return res.StatusCode, out
}

func TestServeThroughPostgresOutageAndBadConfig(t *testing.T) {
	ctx := context.Background()
	st := testenv.Store(t, testenv.Postgres) // a fresh schema, dropped at the end
	dsn, err := url.Parse(st.DSN())
	if err != nil {
		t.Fatal(err)
	}
	pg := testenv.NewTCPProxy(t, dsn.Host)
	dsn.Host = pg.Addr()

	mock, mockURL, err := providertest.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })

	addr := freePort(t)
	t.Setenv("SLUICE_DATABASE_URL", dsn.String())
	t.Setenv("SLUICE_MASTER_KEY", strings.Repeat("ab", 32))
	t.Setenv("SLUICE_ADMIN_TOKEN", testAdminToken)
	t.Setenv("SLUICE_DATA_DIR", filepath.Join(t.TempDir(), "sluice-data"))
	t.Setenv("SLUICE_LISTEN", addr)
	t.Setenv("SLUICE_ALLOW_PRIVATE_UPSTREAMS", "true")
	t.Setenv("SLUICE_LOG_LEVEL", "error")
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		cmd := newRootCmd()
		cmd.SetArgs([]string{"serve"})
		done <- cmd.ExecuteContext(sctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("serve did not stop after its context ended")
		}
	})
	base := "http://" + addr
	waitHealthy(t, base)

	call(t, base, "POST", "/admin/v1/tenants", `{"id":"acme","name":"Acme"}`, 201)
	gw := call(t, base, "POST", "/admin/v1/tenants/acme/gateways", `{"slug":"prod"}`, 201)
	gwID := gw["id"].(string)
	call(t, base, "POST", "/admin/v1/gateways/"+gwID+"/keys",
		fmt.Sprintf(`{"provider":"openai","alias":"main","key":"sk-upstream-main-0001","base_url":%q}`, mockURL+"/v1"), 201)
	token := call(t, base, "POST", "/admin/v1/gateways/"+gwID+"/tokens", `{"name":"app"}`, 201)["secret"].(string)
	if s := inference(t, base, token); s != 200 {
		t.Fatalf("inference before the outage: %d", s)
	}

	// Checklist 56: PostgreSQL goes away. The proxy serves from its last
	// snapshot, /healthz stays 200 (ready) and says what is degraded.
	pg.Break()
	eventually(t, 15*time.Second, "the outage noticed by /healthz", func() bool {
		if s := inference(t, base, token); s != 200 {
			t.Fatalf("inference during the outage: %d, want 200 from the last snapshot", s)
		}
		code, h := readHealth(t, base)
		if code != 200 {
			t.Fatalf("/healthz during the outage: %d %+v, want 200: the proxy still serves", code, h)
		}
		return h.Status == "degraded" && h.Checks["store"].Status == "unavailable" && h.Checks["config"].Status == "degraded"
	})
	if v := metricValue(t, base, "sluice_config_load_failing"); v != "1" {
		t.Errorf("sluice_config_load_failing = %s during the outage, want 1", v)
	}
	for range 20 {
		if s := inference(t, base, token); s != 200 {
			t.Fatalf("inference during the outage: %d, want 200", s)
		}
	}

	// PostgreSQL is back: no restart needed. An admin write made now is
	// served, and /healthz is ok again.
	pg.Restore()
	var second string
	eventually(t, 20*time.Second, "an admin write after the outage", func() bool {
		code, out := callStatus(t, base, "POST", "/admin/v1/gateways/"+gwID+"/tokens", `{"name":"after"}`)
		if code == 201 {
			second = out["secret"].(string)
		}
		return code == 201
	})
	eventually(t, 5*time.Second, "the new token served", func() bool { return inference(t, base, second) == 200 })
	eventually(t, 10*time.Second, "/healthz ok again", func() bool {
		_, h := readHealth(t, base)
		return h.Status == "ok"
	})

	// Checklist 58: a configuration that cannot be loaded (a row that does
	// not decode, written around the admin API) is refused; the last good
	// snapshot serves on and /healthz and /metrics flag it.
	setRoutes := func(routes string) {
		t.Helper()
		err := st.InTx(ctx, func(tx bun.Tx) error {
			if _, err := tx.NewUpdate().Table("gateways").Set("routes = ?", routes).Where("id = ?", gwID).Exec(ctx); err != nil {
				return err
			}
			return st.BumpConfigVersion(ctx, tx)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	setRoutes(`[{"name":"r","targets":{"not":"a list"}}]`)
	eventually(t, 10*time.Second, "the bad configuration flagged", func() bool {
		code, h := readHealth(t, base)
		return code == 200 && h.Status == "degraded" && h.Checks["config"].Status == "degraded" &&
			strings.Contains(h.Checks["config"].Detail, "could not be loaded") && h.Checks["store"].Status == "ok"
	})
	if v := metricValue(t, base, "sluice_config_load_failing"); v != "1" {
		t.Errorf("sluice_config_load_failing = %s with a bad configuration, want 1", v)
	}
	for _, tok := range []string{token, second} {
		if s := inference(t, base, tok); s != 200 {
			t.Errorf("inference with a bad configuration stored: %d, want 200 from the last good snapshot", s)
		}
	}
	setRoutes(`[]`)
	eventually(t, 10*time.Second, "the fixed configuration loaded", func() bool {
		_, h := readHealth(t, base)
		return h.Status == "ok"
	})
	if v := metricValue(t, base, "sluice_config_load_failing"); v != "0" {
		t.Errorf("sluice_config_load_failing = %s once fixed, want 0", v)
	}
}
