package rules

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeClock advances by step at every reading and counts the readings.
type fakeClock struct {
	t     time.Time
	step  time.Duration
	reads int
}

func (c *fakeClock) now() time.Time {
	c.reads++
	c.t = c.t.Add(c.step)
	return c.t
}

// Checklist 35: `(a+)+$` and a 200-instruction pattern over 1 MiB stop
// within the budget. The budget's clock advances 10 ms at each reading,
// and it is read at least every checkUnits units of work (bytes ×
// instructions), so a 50 ms budget is spent at the fifth reading and the
// scan stops there: the work done past the budget is bounded whatever the
// patterns, and the rule is reported unchecked.
func TestBudgetBoundsPathologicalPatterns(t *testing.T) {
	text := strings.Repeat("a", MaxScanBytes-1) + "!"
	for _, pattern := range []string{`(a+)+$`, `\w{200}z`} {
		t.Run(pattern, func(t *testing.T) {
			s := mustCompile(t, Rule{ID: "redos", Direction: Both, Kind: KindRegex, Patterns: []string{pattern}, Action: Block})
			clock := &fakeClock{step: 10 * time.Millisecond}
			b := NewBudget(50*time.Millisecond, clock.now)
			res := s.Scan(Request, []string{text}, b)
			if len(res.Unchecked) != 1 || res.Unchecked[0].ID != "redos" || !b.Exhausted() {
				t.Errorf("unchecked %v, exhausted %v", res.Unchecked, b.Exhausted())
			}
			if clock.reads > 7 { // the session's start, five checks, its end
				t.Errorf("the clock was read %d times: the scan went on past the budget", clock.reads)
			}
		})
	}
	// With time enough, the same scan completes and matches as regexp does.
	s := mustCompile(t, Rule{ID: "redos", Direction: Both, Kind: KindRegex, Patterns: []string{`(a+)+$`}, Action: Block})
	res := s.Scan(Request, []string{text[:len(text)-1]}, NewBudget(time.Hour, nil))
	if len(res.Unchecked) != 0 || len(res.Hits[0]) != 1 || res.Hits[0][0].End != len(text)-1 {
		t.Errorf("unchecked %v hits %+v", res.Unchecked, res.Hits[0])
	}
}

// The strictest rules are checked first: when the budget runs out, a
// block rule has been checked before a slow flag rule.
func TestBudgetChecksBlockRulesFirst(t *testing.T) {
	s := mustCompile(t,
		Rule{ID: "slow", Name: "slow", Direction: Both, Kind: KindRegex, Patterns: []string{`\w{200}z`}, Action: Flag},
		Rule{ID: "pii", Name: "pii", Direction: Both, Kind: KindPII, PII: []string{"email"}, Action: Redact},
		Rule{ID: "kw", Name: "kw", Direction: Both, Kind: KindKeyword, Patterns: []string{"stop"}, Action: Block},
	)
	text := "please stop, mail a@b.io " + strings.Repeat("a", 1<<19)
	clock := &fakeClock{step: time.Millisecond}
	res := s.Scan(Request, []string{text}, NewBudget(20*time.Millisecond, clock.now))
	var kinds []string
	for _, h := range res.Hits[0] {
		kinds = append(kinds, h.Rule.ID+":"+h.Kind)
	}
	if diff := cmp.Diff([]string{"kw:keyword", "pii:email"}, kinds); diff != "" {
		t.Errorf("hits (-want +got):\n%s", diff)
	}
	if len(res.Unchecked) != 1 || res.Unchecked[0].ID != "slow" {
		t.Errorf("unchecked %v, want the flag rule only", res.Unchecked)
	}
}

// A budget spent by earlier sessions (the request) leaves the next ones
// (the response, stream chunks) unchecked; matching time adds up over
// sessions, and the time between them does not count.
func TestBudgetSpansSessions(t *testing.T) {
	s := mustCompile(t, Rule{ID: "kw", Direction: Both, Kind: KindKeyword, Patterns: []string{"x"}, Action: Flag})
	clock := &fakeClock{step: 4 * time.Millisecond}
	b := NewBudget(10*time.Millisecond, clock.now)
	for i, want := range []int{0, 0, 0, 1} { // 4, 8, 12 ms spent: the fourth session finds it spent
		res := s.Scan(Request, []string{"x"}, b)
		if len(res.Unchecked) != want || len(res.Hits[0]) != 1-want {
			t.Errorf("session %d after %s: unchecked %v hits %v", i+1, b.Spent(), res.Unchecked, res.Hits[0])
		}
	}
	if b.Spent() != 12*time.Millisecond {
		t.Errorf("spent %s, want the 3 sessions' 12ms", b.Spent())
	}
}

// The interruptible reader finds what regexp's FindAllStringIndex finds,
// context-dependent assertions and empty matches included.
func TestFindAllReaderMatchesRegexp(t *testing.T) {
	patterns := []string{`\bfoo`, `^a|b$`, `(?m)^x`, `a*`, `\B`, `(?i)é+`, `x?`, `[^a]`, `\b`, `$`, `(a+)+$`}
	texts := []string{"", "foo barfoo foo", "ab\nxb\nx", "baaab", "éÉé a é", "aaa", "a\xffb"}
	for _, p := range patterns {
		prog, err := newProgram(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range texts {
			want := spansOf(regexp.MustCompile(p).FindAllStringIndex(text, -1))
			got, ok := prog.findAllReader(text, NewBudget(time.Hour, nil), nil)
			if !ok || !cmp.Equal(want, got, cmp.AllowUnexported(span{})) {
				t.Errorf("%q in %q: got %v, want %v", p, text, got, want)
			}
		}
	}
}

func spansOf(ms [][]int) []span {
	var out []span
	for _, m := range ms {
		out = append(out, span{m[0], m[1]})
	}
	return out
}

// FuzzFindAllReader compares the interruptible reader with regexp on
// fuzzed patterns and texts.
func FuzzFindAllReader(f *testing.F) {
	f.Add(`\bfoo`, "foo barfoo")
	f.Add(`a*`, "baaab")
	f.Add(`(?m)^x|y$`, "x\ny\nxy")
	f.Fuzz(func(t *testing.T, pattern, text string) {
		prog, err := newProgram(pattern)
		if err != nil || prog.size > MaxRegexInstructions || len(text) > 4096 {
			return
		}
		want := spansOf(prog.re.FindAllStringIndex(text, -1))
		got, ok := prog.findAllReader(text, NewBudget(time.Hour, nil), nil)
		if !ok || !cmp.Equal(want, got, cmp.AllowUnexported(span{})) {
			t.Fatalf("%q in %q: got %v, want %v", pattern, text, got, want)
		}
	})
}
