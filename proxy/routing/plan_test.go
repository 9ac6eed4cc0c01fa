package routing

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func seeded(seed uint64) func() uint64 { return rand.New(rand.NewPCG(seed, 1)).Uint64 }

// keyring returns a keys function over a fixed table of provider keys.
func keyring(m map[string][]Key) func(string) []Key {
	return func(provider string) []Key { return m[provider] }
}

// drain calls Next until it reports false, returning "provider/model@key" per attempt.
func drain(p *Plan) []string {
	var got []string
	for {
		c, ok := p.Next()
		if !ok {
			return got
		}
		got = append(got, label(c))
	}
}

func label(c Candidate) string { return c.Target.Provider + "/" + c.Target.Model + "@" + c.Key.ID }

func TestFallbackOrder(t *testing.T) {
	keys := keyring(map[string][]Key{
		"openai":    {{ID: "o1", Weight: 1}},
		"anthropic": {{ID: "a1", Weight: 1}},
		"google":    {{ID: "g1", Weight: 1}},
	})
	targets := []Target{
		{Provider: "openai", Model: "gpt-4o", Weight: 1},
		{Provider: "anthropic", Model: "claude", Weight: 100},
		{Provider: "google", Model: "gemini", Weight: 1},
	}
	tests := []struct {
		max  int
		want []string
	}{
		{0, []string{"openai/gpt-4o@o1"}},
		{1, []string{"openai/gpt-4o@o1"}},
		{3, []string{"openai/gpt-4o@o1", "anthropic/claude@a1", "google/gemini@g1"}},
		{5, []string{"openai/gpt-4o@o1", "anthropic/claude@a1", "google/gemini@g1", "openai/gpt-4o@o1", "anthropic/claude@a1"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.max), func(t *testing.T) {
			p := NewPlan(StrategyFallback, targets, keys, tt.max, seeded(1), nil)
			if diff := cmp.Diff(tt.want, drain(p)); diff != "" {
				t.Errorf("attempts mismatch (-want +got):\n%s", diff)
			}
			if p.Attempts() != len(tt.want) {
				t.Errorf("Attempts() = %d; want %d", p.Attempts(), len(tt.want))
			}
		})
	}
}

func TestKeyFailoverBeforeNextTarget(t *testing.T) {
	keys := keyring(map[string][]Key{
		"openai":    {{ID: "o1", Weight: 1}, {ID: "o2", Weight: 1}, {ID: "o3", Weight: 1}},
		"anthropic": {{ID: "a1", Weight: 1}},
	})
	targets := []Target{{Provider: "openai", Model: "gpt-4o"}, {Provider: "anthropic", Model: "claude"}}
	for seed := range uint64(50) {
		got := drain(NewPlan(StrategyFallback, targets, keys, 5, seeded(seed), nil))
		first := got[:3]
		seen := map[string]bool{}
		for _, g := range first {
			if seen[g] || g[:6] != "openai" {
				t.Fatalf("seed %d: first three attempts %v; want each openai key once", seed, first)
			}
			seen[g] = true
		}
		if got[3] != "anthropic/claude@a1" {
			t.Fatalf("seed %d: attempt 4 = %s; want the next target", seed, got[3])
		}
		if got[4][:6] != "openai" {
			t.Fatalf("seed %d: attempt 5 = %s; want the first target again", seed, got[4])
		}
	}
}

func TestKeyAliasRestriction(t *testing.T) {
	keys := keyring(map[string][]Key{
		"openai": {{ID: "o1", Alias: "main", Weight: 5}, {ID: "o2", Alias: "backup", Weight: 5}},
	})
	tests := []struct {
		name    string
		targets []Target
		want    []string
	}{
		{"alias", []Target{{Provider: "openai", Model: "a", KeyAlias: "backup"}}, []string{"openai/a@o2", "openai/a@o2", "openai/a@o2"}},
		{"alias then any", []Target{{Provider: "openai", Model: "a", KeyAlias: "main"}, {Provider: "openai", Model: "b", KeyAlias: "backup"}},
			[]string{"openai/a@o1", "openai/b@o2", "openai/a@o1"}},
		{"unknown alias dropped", []Target{{Provider: "openai", Model: "a", KeyAlias: "nope"}, {Provider: "openai", Model: "b", KeyAlias: "main"}},
			[]string{"openai/b@o1", "openai/b@o1", "openai/b@o1"}},
		{"no keys", []Target{{Provider: "openai", Model: "a", KeyAlias: "nope"}, {Provider: "mistral", Model: "m"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPlan(StrategyFallback, tt.targets, keys, 3, seeded(7), nil)
			if diff := cmp.Diff(tt.want, drain(p)); diff != "" {
				t.Errorf("attempts mismatch (-want +got):\n%s", diff)
			}
			if p.AllSkipped() {
				t.Error("AllSkipped() = true without a skip function")
			}
		})
	}
}

func TestLoadBalanceDistribution(t *testing.T) {
	const draws = 10000
	keys := keyring(map[string][]Key{
		"openai":    {{ID: "o1", Weight: 1}, {ID: "o2", Weight: 3}},
		"anthropic": {{ID: "a1", Weight: 1}},
		"google":    {{ID: "g1", Weight: 1}},
	})
	targets := []Target{
		{Provider: "openai", Model: "gpt-4o", Weight: 5},
		{Provider: "anthropic", Model: "claude", Weight: 3},
		{Provider: "google", Model: "gemini", Weight: 2},
	}
	rnd := seeded(42)
	first := map[string]int{}
	keyOfOpenAI := map[string]int{}
	for range draws {
		p := NewPlan(StrategyLoadBalance, targets, keys, 4, rnd, nil)
		got := drain(p)
		first[got[0][:len(got[0])-3]]++
		for _, g := range got {
			if g[:6] == "openai" {
				keyOfOpenAI[g[len(g)-2:]]++
				break
			}
		}
		// Without replacement: the four attempts (one round) cover the three targets.
		seen := map[string]bool{}
		for _, g := range got {
			seen[g[:6]] = true
		}
		if len(seen) != 3 {
			t.Fatalf("attempts %v; want all three targets", got)
		}
	}
	check := func(name string, got int, share float64) {
		t.Helper()
		want := share * draws
		if math.Abs(float64(got)-want) > 0.05*want {
			t.Errorf("%s: %d of %d draws; want %.0f ± 5%%", name, got, draws, want)
		}
	}
	check("openai target", first["openai/gpt-4o"], 0.5)
	check("anthropic target", first["anthropic/claude"], 0.3)
	check("google target", first["google/gemini"], 0.2)
	check("key o1", keyOfOpenAI["o1"], 0.25)
	check("key o2", keyOfOpenAI["o2"], 0.75)
}

func TestZeroWeightsComeLastInListedOrder(t *testing.T) {
	keys := keyring(map[string][]Key{"p": {{ID: "k", Weight: 1}}})
	targets := []Target{
		{Provider: "p", Model: "z1"}, {Provider: "p", Model: "z2"},
		{Provider: "p", Model: "w", Weight: 1}, {Provider: "p", Model: "z3"},
	}
	got := drain(NewPlan(StrategyLoadBalance, targets, keys, 4, seeded(3), nil))
	want := []string{"p/w@k", "p/z1@k", "p/z2@k", "p/z3@k"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attempts mismatch (-want +got):\n%s", diff)
	}
}

func TestSkip(t *testing.T) {
	keys := keyring(map[string][]Key{
		"openai":    {{ID: "o1", Weight: 1}, {ID: "o2", Weight: 1}},
		"anthropic": {{ID: "a1", Weight: 1}},
	})
	targets := []Target{{Provider: "openai", Model: "gpt"}, {Provider: "anthropic", Model: "claude"}}

	t.Run("all skipped", func(t *testing.T) {
		calls := 0
		p := NewPlan(StrategyFallback, targets, keys, 5, seeded(1), func(Candidate) bool { calls++; return true })
		if c, ok := p.Next(); ok {
			t.Fatalf("Next() = %s; want false", label(c))
		}
		if !p.AllSkipped() || p.Attempts() != 0 {
			t.Fatalf("AllSkipped() = %v, Attempts() = %d; want true, 0", p.AllSkipped(), p.Attempts())
		}
		if calls != 3 {
			t.Errorf("skip called %d times; want once per candidate (3)", calls)
		}
	})
	t.Run("open key passed over", func(t *testing.T) {
		calls := 0
		p := NewPlan(StrategyFallback, targets, keys, 4, seeded(1), func(c Candidate) bool { calls++; return c.Key.ID == "o1" })
		want := []string{"openai/gpt@o2", "anthropic/claude@a1", "openai/gpt@o2", "anthropic/claude@a1"}
		if diff := cmp.Diff(want, drain(p)); diff != "" {
			t.Errorf("attempts mismatch (-want +got):\n%s", diff)
		}
		if p.AllSkipped() {
			t.Error("AllSkipped() = true after attempts")
		}
		if calls != 6 {
			t.Errorf("skip called %d times; want 6 (4 attempts + 2 skips, none after the last attempt)", calls)
		}
	})
	t.Run("everything opens after the first round", func(t *testing.T) {
		round := 0
		p := NewPlan(StrategyFallback, targets, keys, 10, seeded(1), func(Candidate) bool { round++; return round > 3 })
		if got := len(drain(p)); got != 3 {
			t.Fatalf("attempts = %d; want 3", got)
		}
		if p.AllSkipped() {
			t.Error("AllSkipped() = true although attempts were made")
		}
	})
}

// TestAttemptsNeverExceedMax runs random configurations and checks the attempt budget, the
// first-round coverage and the key-before-target order.
func TestAttemptsNeverExceedMax(t *testing.T) {
	providers := []string{"a", "b", "c"}
	r := rand.New(rand.NewPCG(2026, 3))
	for i := range 2000 {
		table := map[string][]Key{}
		for _, prov := range providers {
			for k := range r.IntN(4) {
				table[prov] = append(table[prov], Key{ID: fmt.Sprintf("%s%d", prov, k), Alias: fmt.Sprint(k), Weight: r.IntN(4)})
			}
		}
		targets := make([]Target, r.IntN(6))
		for j := range targets {
			targets[j] = Target{Provider: providers[r.IntN(3)], Model: fmt.Sprint(j), Weight: r.IntN(4)}
			if r.IntN(3) == 0 {
				targets[j].KeyAlias = fmt.Sprint(r.IntN(4))
			}
		}
		strategy := StrategyFallback
		if r.IntN(2) == 0 {
			strategy = StrategyLoadBalance
		}
		maxAttempts := r.IntN(12) - 1
		skipRate := r.IntN(3) // 0: never, 1: sometimes, 2: always
		skip := func(Candidate) bool { return skipRate == 2 || (skipRate == 1 && r.IntN(3) == 0) }

		candidates := 0
		for _, tg := range targets {
			for _, k := range table[tg.Provider] {
				if tg.KeyAlias == "" || tg.KeyAlias == k.Alias {
					candidates++
				}
			}
		}
		p := NewPlan(strategy, targets, keyring(table), maxAttempts, r.Uint64, skip)
		got := drain(p)
		budget := max(maxAttempts, 1)
		name := fmt.Sprintf("config %d (%s, max %d, %d candidates, skip %d)", i, strategy, maxAttempts, candidates, skipRate)
		if len(got) > budget || p.Attempts() != len(got) {
			t.Fatalf("%s: %d attempts, Attempts() = %d; want ≤ %d", name, len(got), p.Attempts(), budget)
		}
		for range 3 {
			if c, ok := p.Next(); ok {
				t.Fatalf("%s: Next() after the end returned %s", name, label(c))
			}
		}
		if p.Attempts() != len(got) {
			t.Fatalf("%s: Attempts() grew after the end", name)
		}
		switch {
		case candidates == 0:
			if len(got) != 0 || p.AllSkipped() {
				t.Fatalf("%s: got %v, AllSkipped %v; want nothing", name, got, p.AllSkipped())
			}
		case skipRate == 0:
			if want := budget; len(got) != want {
				t.Fatalf("%s: %d attempts; want all %d used", name, len(got), want)
			}
			checkFirstRound(t, name, got[:min(len(got), candidates)], candidates)
		case skipRate == 2:
			if len(got) != 0 || !p.AllSkipped() {
				t.Fatalf("%s: got %v, AllSkipped %v; want nothing and AllSkipped", name, got, p.AllSkipped())
			}
		}
	}
}

// checkFirstRound checks that no candidate repeats within the first round and that a target's
// keys are tried back to back.
func checkFirstRound(t *testing.T, name string, got []string, candidates int) {
	t.Helper()
	seen := map[string]bool{}
	done := map[string]bool{} // targets left for the next one
	prev := ""
	for _, g := range got {
		if seen[g] {
			t.Fatalf("%s: %s repeated within the first round of %d: %v", name, g, candidates, got)
		}
		seen[g] = true
		target := g[:len(g)-3]
		if target != prev {
			if done[target] {
				t.Fatalf("%s: came back to %s before the round ended: %v", name, target, got)
			}
			done[prev] = true
			prev = target
		}
	}
}

func BenchmarkPlanNext(b *testing.B) {
	keys := keyring(map[string][]Key{
		"openai":    {{ID: "o1", Alias: "main", Weight: 1}, {ID: "o2", Alias: "backup", Weight: 1}},
		"anthropic": {{ID: "a1", Alias: "main", Weight: 2}, {ID: "a2", Alias: "backup", Weight: 1}},
		"google":    {{ID: "g1", Alias: "main", Weight: 1}, {ID: "g2", Alias: "backup", Weight: 1}},
	})
	targets := []Target{
		{Provider: "openai", Model: "gpt-4o", Weight: 3},
		{Provider: "anthropic", Model: "claude-sonnet-4-5", Weight: 2},
		{Provider: "google", Model: "gemini-2.5-pro", Weight: 1},
	}
	skip := func(Candidate) bool { return false }
	for _, strategy := range []string{StrategyFallback, StrategyLoadBalance} {
		b.Run(strategy+"/first", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p := NewPlan(strategy, targets, keys, 3, rand.Uint64, skip)
				p.Next()
			}
		})
		b.Run(strategy+"/all6", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p := NewPlan(strategy, targets, keys, 6, rand.Uint64, skip)
				for {
					if _, ok := p.Next(); !ok {
						break
					}
				}
			}
		})
	}
}
