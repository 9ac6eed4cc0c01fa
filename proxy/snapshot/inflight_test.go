package snapshot

import (
	"encoding/hex"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/store"
)

// inFlightRows is a configuration with one of every counted object.
func inFlightRows(withUser bool) *rows {
	userID := "usr_1"
	h := hashOf("sk-sl-inflight")
	r := &rows{
		tenants:  []store.Tenant{{ID: "acme", Status: store.TenantActive}},
		gateways: []store.Gateway{{ID: "gw_1", TenantID: "acme", Slug: "prod"}},
	}
	if withUser {
		r.users = []store.User{{ID: userID, TenantID: "acme", Role: auth.TenantAdministrator, Status: store.UserActive}}
		r.tokens = []store.Token{{ID: "tok_1", Kind: store.TokenUser, TenantID: "acme", UserID: &userID,
			Hash: hex.EncodeToString(h[:])}}
	}
	return r
}

var inFlightKeys = map[string][]openedKey{"gw_1": {
	{ProviderKey: store.ProviderKey{TenantID: "acme", ID: "pk_1", Provider: "openai", Alias: "a"}},
	{ProviderKey: store.ProviderKey{TenantID: "acme", ID: "pk_2", Provider: "openai", Alias: "b", BaseURL: "https://API.openai.com/v1/"}},
	{ProviderKey: store.ProviderKey{TenantID: "acme", ID: "pk_3", Provider: "openai-compatible", Alias: "c", BaseURL: "http://10.0.0.5:8000/v1"}},
}}

// TestCountersSurviveRebuild checks that a rebuild hands the same
// counters to the same objects, so that requests in flight stay counted,
// and forgets the counters of objects gone once they are idle.
func TestCountersSurviveRebuild(t *testing.T) {
	c := NewCounters()
	s1 := assemble(inFlightRows(true), inFlightKeys, time.Now(), c)
	gw, _ := s1.Gateway("acme", "prod")
	tok, _ := s1.Token(hashOf("sk-sl-inflight"))
	tenant, _ := s1.Tenant("acme")
	for _, f := range []*InFlight{tenant.InFlight, gw.InFlight, tok.InFlight, tok.User.InFlight, gw.Keys["openai"][0].Upstream} {
		if !f.Acquire(1) {
			t.Fatal("Acquire(1) on an idle counter failed")
		}
	}
	// pk_1 (the default base URL) and pk_2 (the same host, written
	// differently) share the tenant's counter for api.openai.com.
	if a, b := gw.Keys["openai"][0].Upstream, gw.Keys["openai"][1].Upstream; a != b {
		t.Error("two keys to api.openai.com have different upstream counters")
	}
	if gw.Keys["openai"][0].Upstream == gw.Keys["openai-compatible"][0].Upstream {
		t.Error("keys to different hosts share an upstream counter")
	}

	s2 := assemble(inFlightRows(true), inFlightKeys, time.Now(), c)
	gw2, _ := s2.Gateway("acme", "prod")
	tok2, _ := s2.Token(hashOf("sk-sl-inflight"))
	tenant2, _ := s2.Tenant("acme")
	for name, f := range map[string]*InFlight{"tenant": tenant2.InFlight, "gateway": gw2.InFlight, "token": tok2.InFlight,
		"user": tok2.User.InFlight, "upstream": gw2.Keys["openai"][0].Upstream} {
		if f.Load() != 1 {
			t.Errorf("%s counter after a rebuild: %d in flight, want the 1 counted before it", name, f.Load())
		}
		if f.Acquire(1) {
			t.Errorf("%s counter after a rebuild admitted a second request over a limit of 1", name)
		}
	}
	if n, sum := c.Busy(); n != 5 || sum != 5 {
		t.Errorf("Busy = %d counters, %d requests; want 5, 5", n, sum)
	}

	// The user and its token go (disabled); the user's counter is busy and
	// kept, the token's is released first and forgotten.
	tok.InFlight.Release()
	assemble(inFlightRows(false), inFlightKeys, time.Now(), c)
	s4 := assemble(inFlightRows(true), inFlightKeys, time.Now(), c)
	tok4, _ := s4.Token(hashOf("sk-sl-inflight"))
	if tok4.User.InFlight != tok.User.InFlight {
		t.Error("a busy counter was forgotten while its object was out of the snapshot")
	}
	if tok4.InFlight == tok.InFlight {
		t.Error("an idle counter of an object that left the snapshot was kept")
	}
	for _, f := range []*InFlight{tenant.InFlight, gw.InFlight, tok.User.InFlight, gw.Keys["openai"][0].Upstream} {
		f.Release()
	}
	if n, sum := c.Busy(); n != 0 || sum != 0 {
		t.Errorf("Busy after every release = %d counters, %d requests; want 0, 0", n, sum)
	}
}

func TestInFlightAcquire(t *testing.T) {
	var f InFlight
	for i := range 3 {
		if !f.Acquire(3) {
			t.Fatalf("request %d refused under a limit of 3", i+1)
		}
	}
	if f.Acquire(3) {
		t.Error("a 4th request admitted under a limit of 3")
	}
	if !f.Acquire(0) {
		t.Error("limit 0 (none) refused a request")
	}
	f.Release()
	f.Release()
	if got := f.Load(); got != 2 {
		t.Errorf("Load = %d, want 2", got)
	}
}
