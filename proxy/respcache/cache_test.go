package respcache

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/testenv"
)

var scope = Scope{TenantID: "acme", GatewayID: "gw_1", Op: "chat", Provider: "openai", Model: "gpt-4o-mini"}

func key(t testing.TB, s Scope, body string) Key {
	t.Helper()
	k, err := NewKey(s, []byte(body))
	if err != nil {
		t.Fatalf("NewKey(%s): %v", body, err)
	}
	return k
}

func TestKeySemanticallyEqualBodies(t *testing.T) {
	base := `{"model":"m","messages":[{"role":"user","content":"hi é"}],"temperature":0.5}`
	same := []string{
		`{"temperature":0.5,"messages":[{"content":"hi é","role":"user"}],"model":"m"}`,
		"{ \"model\" : \"m\",\n \"messages\":[ {\"role\":\"user\",\"content\":\"hi \\u00e9\"} ],\"temperature\":0.5}",
		`{"model":"m","messages":[{"role":"user","content":"hi é"}],"temperature":0.5,"stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"m","messages":[{"role":"user","content":"hi é"}],"temperature":0.5,"user":"end-user-42"}`,
		`{"model":"m","messages":[{"role":"user","content":"hi \u00e9"}],"temperature":0.5,"stream":false}`,
	}
	want := key(t, scope, base)
	for _, b := range same {
		if got := key(t, scope, b); got != want {
			t.Errorf("key of %s differs from the base body's", b)
		}
	}
	different := []string{
		`{"model":"m","messages":[{"role":"user","content":"hi e"}],"temperature":0.5}`,
		`{"model":"m","messages":[{"role":"user","content":"hi é"}],"temperature":0.50}`, // numbers as written
		`{"model":"m","messages":[{"role":"user","content":"hi é"}],"temperature":0.5,"n":2}`,
		`{"model":"m","messages":[{"role":"user","content":"hi é"}],"temperature":0.5,"meta":{"stream":true}}`,
		`{"model":"m","messages":[{"content":"hi é","role":"user","user":"x"}],"temperature":0.5}`,
	}
	for _, b := range different {
		if got := key(t, scope, b); got == want {
			t.Errorf("key of %s equals the base body's", b)
		}
	}
}

func TestKeyScope(t *testing.T) {
	body := `{"model":"m","messages":[]}`
	seen := map[Key]string{}
	for name, s := range map[string]Scope{
		"base":     scope,
		"tenant":   {TenantID: "other", GatewayID: "gw_1", Op: "chat", Provider: "openai", Model: "gpt-4o-mini"},
		"gateway":  {TenantID: "acme", GatewayID: "gw_2", Op: "chat", Provider: "openai", Model: "gpt-4o-mini"},
		"op":       {TenantID: "acme", GatewayID: "gw_1", Op: "completions", Provider: "openai", Model: "gpt-4o-mini"},
		"provider": {TenantID: "acme", GatewayID: "gw_1", Op: "chat", Provider: "azure-openai", Model: "gpt-4o-mini"},
		"model":    {TenantID: "acme", GatewayID: "gw_1", Op: "chat", Provider: "openai", Model: "gpt-4o"},
		"shifted":  {TenantID: "acmegw_1", GatewayID: "", Op: "chat", Provider: "openai", Model: "gpt-4o-mini"},
	} {
		k := key(t, s, body)
		if other, dup := seen[k]; dup {
			t.Errorf("scopes %s and %s share a key", name, other)
		}
		seen[k] = name
	}
}

func TestKeyRefusesNonObjects(t *testing.T) {
	deep := `{"a":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`
	for _, b := range []string{``, `[1]`, `"x"`, `{"a":}`, `{`, deep} {
		if _, err := NewKey(scope, []byte(b)); err == nil {
			t.Errorf("NewKey(%.40q): no error", b)
		}
	}
}

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func entry(body string) *Entry {
	return &Entry{Body: []byte(body), Provider: "openai", Model: "gpt-4o-mini",
		Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}}
}

func TestLocalTTL(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	l, err := NewLocal(LocalConfig{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	k1, k2 := key(t, scope, `{"a":1}`), key(t, scope, `{"a":2}`)
	l.Set(ctx, k1, entry(`{"x":1}`), 10*time.Second)
	l.Set(ctx, k2, entry(`{"x":2}`), time.Minute)
	if e, ok := l.Get(ctx, k1); !ok || string(e.Body) != `{"x":1}` || e.Usage.PromptTokens != 10 {
		t.Fatalf("Get = %+v, %v", e, ok)
	}
	clk.Add(11 * time.Second)
	if _, ok := l.Get(ctx, k1); ok {
		t.Errorf("entry with a 10 s TTL still there after 11 s")
	}
	if _, ok := l.Get(ctx, k2); !ok {
		t.Errorf("entry with a 1 min TTL gone after 11 s")
	}
}

func TestLocalBounded(t *testing.T) {
	l, err := NewLocal(LocalConfig{MaxBytes: 64 << 10, MaxEntryBytes: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	big := key(t, scope, `{"big":true}`)
	l.Set(ctx, big, entry(strings.Repeat("x", 9<<10)), time.Hour)
	if _, ok := l.Get(ctx, big); ok {
		t.Errorf("an entry over MaxEntryBytes was stored")
	}
	body := strings.Repeat("y", 4<<10)
	for i := range 100 {
		l.Set(ctx, key(t, scope, `{"i":`+itoa(i)+`}`), entry(body), time.Hour)
	}
	l.c.CleanUp()
	if w := l.c.WeightedSize(); w > 64<<10 {
		t.Errorf("weighted size %d over the 64 KiB bound", w)
	}
	if n := l.Len(); n == 0 || n > 16 {
		t.Errorf("%d entries of 4 KiB in 64 KiB", n)
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

func TestEncodeDecode(t *testing.T) {
	e := entry(`{"id":"x","choices":[]}`)
	got, err := decode(encode(e))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(e, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if _, err := decode([]byte("garbage")); err == nil {
		t.Errorf("decode of garbage: no error")
	}
}

func TestRedisStore(t *testing.T) {
	client, prefix := testenv.Redis(t)
	r, err := NewRedis(RedisConfig{Client: client, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	k := key(t, scope, `{"redis":1}`)
	if _, ok := r.Get(ctx, k); ok {
		t.Fatalf("hit on an empty store")
	}
	e := entry(`{"id":"chatcmpl-1"}`)
	r.Set(ctx, k, e, 1500*time.Millisecond)
	got, ok := r.Get(ctx, k)
	if !ok {
		t.Fatalf("miss after Set")
	}
	if diff := cmp.Diff(e, got); diff != "" {
		t.Errorf("entry (-want +got):\n%s", diff)
	}
	ttl, err := client.PTTL(ctx, prefix+k.String()).Result()
	if err != nil || ttl <= 0 || ttl > 1500*time.Millisecond {
		t.Errorf("PTTL = %s, %v; want (0, 1.5s]", ttl, err)
	}
	// Too large: not stored.
	big := key(t, scope, `{"redis":"big"}`)
	r.Set(ctx, big, entry(strings.Repeat("z", DefaultMaxEntryBytes)), time.Minute)
	if n, _ := client.Exists(ctx, prefix+big.String()).Result(); n != 0 {
		t.Errorf("an entry over 1 MiB was stored")
	}
	// Expiry.
	time.Sleep(1600 * time.Millisecond)
	if _, ok := r.Get(ctx, k); ok {
		t.Errorf("hit after the TTL")
	}
	// A damaged entry is a miss.
	must(t, client.Set(ctx, prefix+k.String(), "not an entry", time.Minute).Err())
	if _, ok := r.Get(ctx, k); ok {
		t.Errorf("hit on a damaged entry")
	}
}

// A Redis that does not answer is a miss, fast, never an error.
func TestRedisDownIsMiss(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 50 * time.Millisecond})
	t.Cleanup(func() { _ = client.Close() })
	r, err := NewRedis(RedisConfig{Client: client})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	k := key(t, scope, `{"down":1}`)
	start := time.Now()
	r.Set(ctx, k, entry(`{}`), time.Minute)
	if _, ok := r.Get(ctx, k); ok {
		t.Errorf("hit from a Redis that is down")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a down Redis took %s", d)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// FuzzNewKey: any body either is refused or has a key, and white space
// never changes the key.
func FuzzNewKey(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`))
	f.Add([]byte(`{"a":[1,2.50,{"b":"\u00e9\n"}],"user":"x"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		k, err := NewKey(scope, body)
		if err != nil || !json.Valid(body) {
			return
		}
		var indented bytes.Buffer
		if json.Indent(&indented, body, " ", "\t") != nil {
			return
		}
		k2, err := NewKey(scope, indented.Bytes())
		if err != nil || k2 != k {
			t.Fatalf("indenting %q changed the key (err %v)", body, err)
		}
	})
}
