package proxy

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestHealthzChecksAtMostOnceASecond checks that /healthz, which needs no
// credential, runs Options.Health (a store ping) at most once per
// healthCacheTTL however many probes arrive (issue 12, defect 15): before,
// every probe pinged the store.
func TestHealthzChecksAtMostOnceASecond(t *testing.T) {
	var calls atomic.Int64
	st := startServer(t, Options{Health: func(context.Context) Health {
		calls.Add(1)
		return Health{Status: StatusOK}
	}})
	const probes = 50
	start := time.Now()
	var wg sync.WaitGroup
	for range probes {
		wg.Go(func() {
			if resp, body := get(t, "GET", "http://"+st.addr+"/healthz", nil); resp.StatusCode != 200 {
				t.Errorf("status %d: %s", resp.StatusCode, body)
			}
		})
	}
	wg.Wait()
	http.DefaultClient.CloseIdleConnections() // let the server shut down at cleanup
	// One check per started second of the burst, whatever the machine's speed.
	bound := int64(time.Since(start)/time.Second) + 1 // healthCacheTTL
	if n := calls.Load(); n < 1 || n > bound {
		t.Fatalf("%d probes ran the check %d times, want 1 to %d", probes, n, bound)
	}
}
