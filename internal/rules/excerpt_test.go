package rules

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Overlapping matches of two rules are redacted as their union: a later
// match that reaches past the first one is not left half shown.
func TestApplyJoinsOverlaps(t *testing.T) {
	s := mustCompile(t,
		Rule{ID: "a", Direction: Both, Kind: KindKeyword, Patterns: []string{"abc"}, Action: Redact},
		Rule{ID: "b", Direction: Both, Kind: KindKeyword, Patterns: []string{"bcdefg"}, Action: Redact},
	)
	text := "xabcdefgx abc bcdefg"
	got := Redacted(text, s.Scan(Request, []string{text}, nil).Hits[0])
	if want := "x[REDACTED:keyword]x [REDACTED:keyword] [REDACTED:keyword]"; got != want {
		t.Errorf("Redacted = %q, want %q", got, want)
	}
}

// The excerpt rule (excerpt.go): the match and 10 characters each side,
// whole words only; the match, other hits, any built-in detector's match
// and a labelled credential are masked by kind, other words with digits
// or symbols as text.
func TestExcerptRule(t *testing.T) {
	tests := []struct {
		rule Rule
		text string
		want []string
	}{
		{Rule{Kind: KindKeyword, Patterns: []string{"password:"}},
			"my password: hunter2 ok", []string{"my [keyword:9] [credential:7]"}},
		{Rule{Kind: KindKeyword, Patterns: []string{"token"}},
			"the token=abc123XYZ was set", []string{"the [keyword:5]=[credential:9]"}},
		{Rule{Kind: KindKeyword, Patterns: []string{"call"}},
			"please call 415-555-0100 now", []string{"please [keyword:4] [phone:12]"}},
		{Rule{Kind: KindKeyword, Patterns: []string{"key"}},
			"my key sk-proj-abcdefghijklmnopqrstuv and", []string{"my [keyword:3] [secret_key:30]"}},
		{Rule{Kind: KindKeyword, Patterns: []string{"pin"}},
			"the pin 8812 or r2d2 here", []string{"the [keyword:3] [text:4] or"}},
		{Rule{Kind: KindKeyword, Patterns: []string{"mail"}},
			"mail bob@example.com", []string{"[keyword:4] [email:15]"}},
		{Rule{Kind: KindKeyword, Patterns: []string{"x"}},
			"aaaaaaaaaaaaaaaaaaaaaaa x bbbbbbbbbbbbbbbbbbbbbbb", []string{"[keyword:1]"}},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			r := tt.rule
			r.ID, r.Direction, r.Action = "r", Both, Flag
			s := mustCompile(t, r)
			var got []string
			for _, f := range Findings(tt.text, s.Scan(Request, []string{tt.text}, nil).Hits[0]) {
				got = append(got, f.Excerpt)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("excerpts (-want +got):\n%s", diff)
			}
			for _, e := range got {
				for _, secret := range []string{"hunter2", "abc123", "555", "sk-proj", "8812", "r2d2", "bob@"} {
					if strings.Contains(e, secret) {
						t.Errorf("excerpt %q holds %q", e, secret)
					}
				}
			}
		})
	}
}

// FuzzExcerpt checks on fuzzed texts that an excerpt never holds a word
// with a digit, nor the text of any built-in detector's match.
func FuzzExcerpt(f *testing.F) {
	f.Add("my password: hunter2 ok", "password")
	f.Add("call +1 415 555 0100 about x", "about")
	f.Fuzz(func(t *testing.T, text, kw string) {
		if kw == "" || len(text) > 2000 {
			return
		}
		s, err := Compile([]Rule{{ID: "k", Direction: Both, Kind: KindKeyword, Patterns: []string{kw}, Action: Flag}})
		if err != nil {
			return
		}
		for _, f := range Findings(text, s.Scan(Request, []string{text}, nil).Hits[0]) {
			e := f.Excerpt
			for _, w := range strings.Fields(maskless(e)) {
				if strings.ContainsAny(w, "0123456789@") {
					t.Fatalf("excerpt %q of %q shows %q", e, text, w)
				}
			}
		}
	})
}

// maskless removes the "[kind:n]" masks of an excerpt.
func maskless(e string) string {
	var b strings.Builder
	for {
		i := strings.Index(e, "[")
		if i < 0 {
			b.WriteString(e)
			return b.String()
		}
		j := strings.Index(e[i:], "]")
		if j < 0 {
			b.WriteString(e)
			return b.String()
		}
		b.WriteString(e[:i] + " ")
		e = e[i+j+1:]
	}
}
