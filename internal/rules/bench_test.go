package rules

import (
	"fmt"
	"strings"
	"testing"
)

// Benchmarks of the matcher. The proxy's cost per request with rules is
// BenchmarkInferenceChatWithRules (proxy/rules_test.go); these isolate
// the scan, and show how it grows with the body and the rule set.

// benchText is about 1 MiB of prose with a number here and there.
var benchText = strings.Repeat("The quick brown fox jumps over the lazy dog; order 4521 shipped on 2024-03-01 to room 12. ", 1<<20/91)

// largeSet is a gateway at its limits in kind: 190 keyword rules of 100
// keywords, regexRules regex rules of 100 patterns and, withPII, a rule
// with every PII kind.
func largeSet(tb testing.TB, regexRules int, withPII bool) *Set {
	var rs []Rule
	for r := range 190 {
		var kws []string
		for k := range 100 {
			kws = append(kws, fmt.Sprintf("codeword%d-%d", r, k))
		}
		rs = append(rs, Rule{ID: fmt.Sprint("k", r), Direction: Both, Kind: KindKeyword, Patterns: kws, Action: Redact})
	}
	for r := range regexRules {
		var ps []string
		for k := range 100 {
			ps = append(ps, fmt.Sprintf(`ticket-%d-%d-\d{4}`, r, k))
		}
		rs = append(rs, Rule{ID: fmt.Sprint("r", r), Direction: Both, Kind: KindRegex, Patterns: ps, Action: Flag})
	}
	if !withPII {
		return mustCompile(tb, rs...)
	}
	rs = append(rs, Rule{ID: "pii", Direction: Both, Kind: KindPII, PII: []string{"email", "phone", "credit_card", "iban", "us_ssn", "ipv4", "secret_key"}, Action: Redact})
	return mustCompile(tb, rs...)
}

func BenchmarkScan1MiB(b *testing.B) {
	for _, bc := range []struct {
		name string
		set  func(testing.TB) *Set
	}{
		{"pii", func(tb testing.TB) *Set {
			return mustCompile(tb, pii("email", "phone", "credit_card", "iban", "us_ssn", "ipv4", "secret_key"))
		}},
		{"keywords-19000", func(tb testing.TB) *Set { return largeSet(tb, 0, false) }},
		{"regex-900", func(tb testing.TB) *Set { return largeSet(tb, 9, false) }},
		{"large-set", func(tb testing.TB) *Set { return largeSet(tb, 9, true) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := bc.set(b)
			b.SetBytes(int64(len(benchText)))
			b.ReportAllocs()
			for b.Loop() {
				if res := s.Scan(Request, []string{benchText}, nil); len(res.Unchecked) != 0 {
					b.Fatal("unchecked")
				}
			}
		})
	}
}

// BenchmarkScanChat is the scan of a small chat request against the rules
// of BenchmarkInferenceChatWithRules.
func BenchmarkScanChat(b *testing.B) {
	s := mustCompile(b,
		Rule{ID: "words", Direction: Both, Kind: KindKeyword, Patterns: []string{"bluebird", "project x"}, Action: Redact},
		Rule{ID: "orders", Direction: Both, Kind: KindRegex, Patterns: []string{`order-\d{6}`}, Action: Flag},
		pii("email", "phone", "credit_card", "iban", "us_ssn", "ipv4", "secret_key"),
	)
	texts := []string{"You are a helpful assistant.", "Summarise the plot of Hamlet in two sentences, please."}
	b.ReportAllocs()
	for b.Loop() {
		s.Scan(Request, texts, NewBudget(DefaultBudget, nil))
	}
}
