package rules

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// Keywords match through compatibility forms and zero-width characters,
// and the redaction covers exactly the original characters.
func TestKeywordFolding(t *testing.T) {
	tests := []struct {
		keyword, text, want string
		caseSensitive       bool
	}{
		{"password", "my ｐａｓｓｗｏｒｄ!", "my [REDACTED:keyword]!", false},
		{"password", "my pass\u200bword!", "my [REDACTED:keyword]!", false},
		{"password", "my PASS\u00adWO\u200dRD!", "my [REDACTED:keyword]!", false},
		{"password", "my pa\ufeffss\u2060word!", "my [REDACTED:keyword]!", false},
		{"Password", "my pass\u200cword, my Pass\u200cword", "my pass\u200cword, my [REDACTED:keyword]", true},
		{"file", "the ﬁle is here", "the [REDACTED:keyword] is here", false},
		{"f", "the ﬁle", "the [REDACTED:keyword]le", false}, // the whole ligature
		{"école", "une e\u0301cole", "une [REDACTED:keyword]", false},
		{"istanbul", "İSTANBUL", "[REDACTED:keyword]", false},
		{"kelvin k", "kelvin \u212a.", "[REDACTED:keyword].", false},
		{"123", "code １２３ end", "code [REDACTED:keyword] end", false},
		{"ab", "\xffab\xfe", "\xff[REDACTED:keyword]\xfe", false},
	}
	for _, tt := range tests {
		t.Run(tt.keyword+"/"+tt.text, func(t *testing.T) {
			s := mustCompile(t, Rule{ID: "k", Direction: Both, Kind: KindKeyword, Patterns: []string{tt.keyword}, Action: Redact, CaseSensitive: tt.caseSensitive})
			hits := s.Scan(Request, []string{tt.text}, nil).Hits[0]
			if got := Redacted(tt.text, hits); got != tt.want {
				t.Errorf("Redacted = %q, want %q", got, tt.want)
			}
		})
	}
}

// PII detectors see folded text too: full-width digits and zero-width
// characters do not hide a number.
func TestPIIFolding(t *testing.T) {
	s := mustCompile(t, pii("us_ssn", "email"))
	text := "ssn １２３-４５-６７８９ and 123\u200b-45-6789, mail bob\u200b@example.com."
	got := Redacted(text, s.Scan(Request, []string{text}, nil).Hits[0])
	if want := "ssn [REDACTED:us_ssn] and [REDACTED:us_ssn], mail [REDACTED:email]."; got != want {
		t.Errorf("Redacted = %q, want %q", got, want)
	}
}

func TestFoldMapIsMonotonic(t *testing.T) {
	text := "Ａb\u200bc ﬁ e\u0301 İx \xff ok"
	for _, lower := range []bool{false, true} {
		f, m := foldText(text, lower)
		prev := 0
		for i := 1; i <= len(f); i++ {
			if i < len(f) && !utf8.RuneStart(f[i]) {
				continue
			}
			e := m.end(i)
			if e < prev || e > len(text) || !utf8.RuneStart(text[min(e, len(text)-1)]) && e != len(text) {
				t.Fatalf("lower %v: end(%d) = %d after %d", lower, i, e, prev)
			}
			prev = e
		}
	}
	if f, m := foldText("PLAIN ascii", true); f != "plain ascii" || m != nil {
		t.Errorf("ASCII fold %q %v", f, m)
	}
}

// FuzzFold checks that every span of the folded text maps to a span of
// the original on rune boundaries, in order.
func FuzzFold(f *testing.F) {
	f.Add("Ａb\u200bc ﬁ e\u0301 İx", 1, 3)
	f.Add("\xff\xfe\u00ad", 0, 1)
	f.Fuzz(func(t *testing.T, text string, a, b int) {
		for _, lower := range []bool{false, true} {
			folded, m := foldText(text, lower)
			if len(folded) == 0 {
				continue
			}
			a, b := abs(a)%len(folded), abs(b)%len(folded)+1
			// Matches of valid keywords begin and end on rune boundaries.
			for a > 0 && !utf8.RuneStart(folded[a]) {
				a--
			}
			for b < len(folded) && !utf8.RuneStart(folded[b]) {
				b++
			}
			if a >= b {
				continue
			}
			s, e := m.start(a), m.end(b)
			if s < 0 || e > len(text) || s > e {
				t.Fatalf("span %d..%d of %q maps to %d..%d of %q", a, b, folded, s, e, text)
			}
			if utf8.ValidString(text) && (s < len(text) && !utf8.RuneStart(text[s]) || e < len(text) && !utf8.RuneStart(text[e])) {
				t.Fatalf("span maps inside a rune: %d..%d of %q", s, e, text)
			}
		}
		// Keywords made of the text's own words are found in it.
		if w := strings.Fields(text); len(w) > 0 && utf8.ValidString(text) {
			s, err := Compile([]Rule{{ID: "k", Direction: Both, Kind: KindKeyword, Patterns: []string{w[0]}, Action: Flag}})
			if err == nil && len(s.Scan(Request, []string{text}, nil).Hits[0]) == 0 {
				t.Fatalf("keyword %q not found in %q", w[0], text)
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

var _ = cmp.Diff
