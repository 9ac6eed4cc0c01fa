// Package alerttest is a webhook receiver for tests of budget alerts: it
// listens on 127.0.0.1, checks every signature and records what it was
// delivered.
package alerttest

import (
	"crypto/hmac"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/internal/alert"
)

// Payload is a decoded alert body.
type Payload = map[string]any

// Receiver answers 500 to the first FailFirst POSTs of each alert id and
// 2xx to the later ones, and 401 to a POST whose signature does not
// verify with Secret.
type Receiver struct {
	URL       string
	Secret    string
	failFirst int

	mu        sync.Mutex
	tries     map[string]int       // alert id → POSTs
	delivered map[string][]Payload // "scope/scope_id/threshold" → payloads answered 2xx
	badSig    int
}

// New starts a receiver, closed at the test's end.
func New(t testing.TB, secret string, failFirst int) *Receiver {
	r := &Receiver{Secret: secret, failFirst: failFirst, tries: map[string]int{}, delivered: map[string][]Payload{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { r.serve(t, w, req) }))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *Receiver) serve(t testing.TB, w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !hmac.Equal([]byte(req.Header.Get(alert.SignatureHeader)), []byte(alert.Sign([]byte(r.Secret), body))) {
		r.badSig++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	id := req.Header.Get(alert.IDHeader)
	r.tries[id]++
	if r.tries[id] <= r.failFirst {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	var p Payload
	if err := json.Unmarshal(body, &p); err != nil {
		t.Errorf("alert payload %s: %v", body, err)
	}
	k := fmt.Sprintf("%v/%v/%v", p["scope"], p["scope_id"], p["threshold"])
	r.delivered[k] = append(r.delivered[k], p)
}

// Deliveries returns a copy of what was delivered, by
// "scope/scope_id/threshold".
func (r *Receiver) Deliveries() map[string][]Payload {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := maps.Clone(r.delivered)
	for k, v := range out {
		out[k] = slices.Clone(v)
	}
	return out
}

// Tries is how many POSTs with a good signature alert id got.
func (r *Receiver) Tries(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tries[id]
}

// BadSignatures is how many POSTs did not verify.
func (r *Receiver) BadSignatures() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.badSig
}

// CheckOnce fails t unless want (keys "scope/scope_id/threshold") were
// each delivered exactly once, nothing else was delivered, and every
// signature verified.
func (r *Receiver) CheckOnce(t testing.TB, want []string) {
	t.Helper()
	got := r.Deliveries()
	for k, ps := range got {
		if !slices.Contains(want, k) {
			t.Errorf("unexpected alert %s", k)
		}
		if len(ps) != 1 {
			t.Errorf("alert %s delivered %d times, want once", k, len(ps))
		}
	}
	for _, k := range want {
		if len(got[k]) == 0 {
			t.Errorf("alert %s not delivered", k)
		}
	}
	if n := r.BadSignatures(); n != 0 {
		t.Errorf("%d POSTs with a bad signature", n)
	}
}
