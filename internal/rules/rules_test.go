package rules

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func mustCompile(t testing.TB, rs ...Rule) *Set {
	t.Helper()
	s, err := Compile(rs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func pii(kinds ...string) Rule {
	return Rule{ID: "rule_pii", Name: "pii", Direction: Both, Kind: KindPII, PII: kinds, Action: Redact}
}

// matches returns the matched substrings of text.
func matches(s *Set, dir, text string) []string {
	var out []string
	for _, h := range s.Scan(dir, []string{text}, nil).Hits[0] {
		out = append(out, h.Kind+"="+text[h.Start:h.End])
	}
	return out
}

func TestPIIDetectors(t *testing.T) {
	tests := []struct {
		kind string
		text string
		want []string // matched texts; nil means no match
	}{
		{"email", "write to jane.doe+tag@mail.example.co.uk today", []string{"jane.doe+tag@mail.example.co.uk"}},
		{"email", "a@b.io and x_y@z-host.org", []string{"a@b.io", "x_y@z-host.org"}},
		{"email", "not an email: user@localhost or @handle or a@b", nil},

		{"phone", "call +14155550100 now", []string{"+14155550100"}},
		{"phone", "call +49 30 1234567 now", []string{"+49 30 1234567"}},
		{"phone", "US (415) 555-0100 or 415-555-0100 or 415.555.0100", []string{"(415) 555-0100", "415-555-0100", "415.555.0100"}},
		{"phone", "London 020 7946 0958, Paris 06 12 34 56 78", []string{"020 7946 0958", "06 12 34 56 78"}},
		{"phone", "+44 (20) 7946 0958", []string{"+44 (20) 7946 0958"}},
		{"phone", "short 12345, date 2024-01-15, ip 192.168.1.1, v1.2.3, order 5551234567", nil},
		{"phone", "+123 45", nil}, // 5 digits

		{"credit_card", "card 4111 1111 1111 1111 exp", []string{"4111 1111 1111 1111"}},
		{"credit_card", "card 4111-1111-1111-1111.", []string{"4111-1111-1111-1111"}},
		{"credit_card", "card 4111111111111111", []string{"4111111111111111"}},
		{"credit_card", "amex 3782 822463 10005", []string{"3782 822463 10005"}},
		{"credit_card", "card 4111 1111 1111 1111 and 12 more", []string{"4111 1111 1111 1111"}},
		{"credit_card", "not luhn 4111 1111 1111 1112", nil},
		{"credit_card", "too short 4111 1111 11", nil},
		{"credit_card", "an id 41111111111111110000 is not a card", nil},

		{"iban", "IBAN DE89 3704 0044 0532 0130 00 please", []string{"DE89 3704 0044 0532 0130 00"}},
		{"iban", "IBAN GB82WEST12345698765432.", []string{"GB82WEST12345698765432"}},
		{"iban", "FR14 2004 1010 0505 0001 3M02 606", []string{"FR14 2004 1010 0505 0001 3M02 606"}},
		{"iban", "bad check DE88 3704 0044 0532 0130 00", nil},
		{"iban", "bad check GB82WEST12345698765433", nil},

		{"us_ssn", "ssn 123-45-6789.", []string{"123-45-6789"}},
		{"us_ssn", "000-12-3456 666-12-3456 900-12-3456 123-00-4567 123-45-0000", nil},
		{"us_ssn", "phone-ish 1-123-45-6789", nil},

		{"ipv4", "host 10.0.0.1 and 255.255.255.255", []string{"10.0.0.1", "255.255.255.255"}},
		{"ipv4", "256.1.1.1 1.2.3.4.5 v10.0.0.1.2", nil},

		{"secret_key", "key sk-proj-abcdefghijklmnopqrstuvwxyz012345 end", []string{"sk-proj-abcdefghijklmnopqrstuvwxyz012345"}},
		{"secret_key", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz", []string{"sk-ant-api03-abcdefghijklmnopqrstuvwxyz"}},
		{"secret_key", "aws AKIAIOSFODNN7EXAMPLE ok", []string{"AKIAIOSFODNN7EXAMPLE"}},
		{"secret_key", "gh ghp_" + strings.Repeat("a1B2", 9) + " x", []string{"ghp_" + strings.Repeat("a1B2", 9)}},
		{"secret_key", "slack xoxb-1234567890-abcdef", []string{"xoxb-1234567890-abcdef"}},
		{"secret_key", "google AIza" + strings.Repeat("B", 35), []string{"AIza" + strings.Repeat("B", 35)}},
		{"secret_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAAB==\n-----END RSA PRIVATE KEY----- after",
			[]string{"-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAAB==\n-----END RSA PRIVATE KEY-----"}},
		{"secret_key", "task-abcdefghijklmnopqrstuvwxyz and sk-short and AKIA123", nil},
	}
	for _, tt := range tests {
		t.Run(tt.kind+"/"+tt.text, func(t *testing.T) {
			s := mustCompile(t, pii(tt.kind))
			var want []string
			for _, w := range tt.want {
				want = append(want, tt.kind+"="+w)
			}
			if diff := cmp.Diff(want, matches(s, Request, tt.text)); diff != "" {
				t.Errorf("matches (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKeywordAndRegex(t *testing.T) {
	tests := []struct {
		name string
		rule Rule
		text string
		want []string
	}{
		{"keyword folds case", Rule{Kind: KindKeyword, Patterns: []string{"Project X"}}, "about PROJECT x and project X", []string{"PROJECT x", "project X"}},
		{"keyword case-sensitive", Rule{Kind: KindKeyword, Patterns: []string{"Project X"}, CaseSensitive: true}, "PROJECT X and Project X", []string{"Project X"}},
		{"keyword non-ASCII folds", Rule{Kind: KindKeyword, Patterns: []string{"ÉCOLE"}}, "une école", []string{"école"}},
		{"keyword is literal", Rule{Kind: KindKeyword, Patterns: []string{"a.c"}}, "abc a.c", []string{"a.c"}},
		{"regex", Rule{Kind: KindRegex, Patterns: []string{`order-\d+`}}, "ORDER-12 and order-7", []string{"ORDER-12", "order-7"}},
		{"regex case-sensitive", Rule{Kind: KindRegex, Patterns: []string{`order-\d+`}, CaseSensitive: true}, "ORDER-12 and order-7", []string{"order-7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.rule
			r.ID, r.Name, r.Direction, r.Action = "rule_1", "r", Both, Flag
			s := mustCompile(t, r)
			var want []string
			for _, w := range tt.want {
				want = append(want, r.Kind+"="+w)
			}
			if diff := cmp.Diff(want, matches(s, Response, tt.text)); diff != "" {
				t.Errorf("matches (-want +got):\n%s", diff)
			}
		})
	}
}

// Patterns are data: template, JNDI, code and shell payloads are matched
// as the characters they are and never evaluated (CVE-2026-42203 class).
func TestPayloadsAreLiteral(t *testing.T) {
	payloads := []string{"{{7*7}}", "{{.}}", "${jndi:ldap://x}", "__import__('os')", "$(id)"}
	for _, p := range payloads {
		t.Run(p, func(t *testing.T) {
			kw := mustCompile(t, Rule{ID: "k", Direction: Both, Kind: KindKeyword, Patterns: []string{p}, Action: Redact})
			text := "before " + p + " 49 after"
			if got := matches(kw, Request, text); len(got) != 1 || got[0] != "keyword="+p {
				t.Errorf("keyword %q: matches %q", p, got)
			}
			if got := matches(kw, Request, "49 . 7*7 ldap os uid=0"); len(got) != 0 {
				t.Errorf("keyword %q matched evaluated forms: %q", p, got)
			}
			// As a regex the payload is RE2 syntax, never a template: a
			// quoted one matches itself only.
			re := mustCompile(t, Rule{ID: "r", Direction: Both, Kind: KindRegex, Patterns: []string{regexpQuote(p)}, Action: Redact})
			if got := matches(re, Request, text); len(got) != 1 || got[0] != "regex="+p {
				t.Errorf("regex %q: matches %q", p, got)
			}
		})
	}
	// "{{7*7}}" unquoted is a RE2 repetition of a brace group — refused or
	// matched as RE2, never evaluated to 49.
	if s, err := Compile([]Rule{{ID: "t", Direction: Both, Kind: KindRegex, Patterns: []string{"{{7*7}}"}, Action: Block}}); err == nil {
		if got := matches(s, Request, "49"); len(got) != 0 {
			t.Errorf("regex {{7*7}} matched 49: %q", got)
		}
	}
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// A pathological pattern for backtracking engines finishes on a 1 MiB
// input: RE2 scans in linear time, and the scan is bounded by
// MaxScanBytes.
func TestPathologicalRegex(t *testing.T) {
	s := mustCompile(t, Rule{ID: "redos", Direction: Both, Kind: KindRegex, Patterns: []string{`(a+)+$`, `(a|aa)+b`}, Action: Block})
	text := strings.Repeat("a", MaxScanBytes-1) + "!"
	start := time.Now()
	res := s.Scan(Request, []string{text}, nil)
	t.Logf("2 pathological patterns over %d bytes: %s, %d hits", len(text), time.Since(start), len(res.Hits[0]))
	if res.Truncated || len(res.Unchecked) != 0 {
		t.Errorf("1 MiB of text: truncated %v, unchecked %d", res.Truncated, len(res.Unchecked))
	}
	// And beyond MaxScanBytes the rest is not scanned, but reported.
	res = s.Scan(Request, []string{text, "aaaa"}, nil)
	if !res.Truncated || len(res.Unchecked) != 1 {
		t.Errorf("text beyond MaxScanBytes: truncated %v, unchecked %d", res.Truncated, len(res.Unchecked))
	}
}

func TestRedactAndExcerpt(t *testing.T) {
	s := mustCompile(t,
		Rule{ID: "r1", Name: "emails", Direction: Both, Kind: KindPII, PII: []string{"email"}, Action: Redact},
		Rule{ID: "r2", Name: "codename", Direction: Both, Kind: KindKeyword, Patterns: []string{"bluebird"}, Action: Flag},
	)
	text := "mail bob@example.com about bluebird, cc amy@example.org"
	hits := s.Scan(Request, []string{text}, nil).Hits[0]
	if got, want := Redacted(text, hits), "mail [REDACTED:email] about bluebird, cc [REDACTED:email]"; got != want {
		t.Errorf("Redacted = %q, want %q", got, want)
	}
	if got, want := Masked(text, hits), "mail [REDACTED:email] about [REDACTED:keyword], cc [REDACTED:email]"; got != want {
		t.Errorf("Masked = %q, want %q", got, want)
	}
	var excerpts []string
	for _, f := range Findings(text, hits) {
		excerpts = append(excerpts, f.Rule.ID+" "+f.Kind+" "+f.Excerpt)
	}
	want := []string{
		"r1 email mail [email:15] about [keyword:8]",
		"r2 keyword [email:15] about [keyword:8], cc [email:15]",
		"r1 email [keyword:8], cc [email:15]",
	}
	if diff := cmp.Diff(want, excerpts); diff != "" {
		t.Errorf("excerpts (-want +got):\n%s", diff)
	}
	for _, e := range excerpts {
		for _, raw := range []string{"bob@", "amy@", "bluebird"} {
			if strings.Contains(e, raw) {
				t.Errorf("excerpt %q holds the raw match %q", e, raw)
			}
		}
	}
}

// streamAll pushes text in chunks of the given sizes and returns what the
// stream sent, the findings and the block.
func streamAll(st *Stream, chunks []string) (string, []Finding, *Finding) {
	var out strings.Builder
	var found []Finding
	for _, c := range chunks {
		o, f, b := st.Push(c)
		if b != nil {
			return out.String(), found, b
		}
		out.WriteString(o)
		found = append(found, f...)
	}
	o, f, b := st.Flush()
	out.WriteString(o)
	return out.String(), append(found, f...), b
}

func TestStreamSplitMatch(t *testing.T) {
	s := mustCompile(t,
		Rule{ID: "r1", Direction: Response, Kind: KindPII, PII: []string{"email", "secret_key"}, Action: Redact},
		Rule{ID: "r2", Direction: Response, Kind: KindKeyword, Patterns: []string{"Bluebird"}, Action: Redact},
	)
	text := "Reach bob@example.com with key sk-abcdefghijklmnopqrstuvwxyz0123 about bluebird. " + strings.Repeat("filler text ", 40) + "bye"
	want := Redacted(text, s.Scan(Response, []string{text}, nil).Hits[0])
	// Every split point of the matches, one byte at a time and in pairs.
	for _, size := range []int{1, 2, 3, 7, 64} {
		var chunks []string
		for i := 0; i < len(text); i += size {
			chunks = append(chunks, text[i:min(i+size, len(text))])
		}
		got, found, blocked := streamAll(s.NewStream(Response, nil), chunks)
		if blocked != nil {
			t.Fatalf("size %d: blocked", size)
		}
		if got != want {
			t.Errorf("chunks of %d:\n got %q\nwant %q", size, got, want)
		}
		if len(found) != 3 {
			t.Errorf("chunks of %d: %d findings, want 3", size, len(found))
		}
	}
}

func TestStreamHoldsBackAtMostTheWindow(t *testing.T) {
	s := mustCompile(t, Rule{ID: "r", Direction: Response, Kind: KindKeyword, Patterns: []string{"zzz"}, Action: Redact})
	st := s.NewStream(Response, nil)
	sent := 0
	for i := 0; i < 100; i++ {
		o, _, _ := st.Push(strings.Repeat("x", 50))
		sent += len(o)
		if held := (i+1)*50 - sent; held > s.Window() {
			t.Fatalf("after %d bytes %d are held, window %d", (i+1)*50, held, s.Window())
		}
	}
	o, _, _ := st.Flush()
	if sent += len(o); sent != 5000 {
		t.Errorf("sent %d bytes of 5000", sent)
	}
}

func TestStreamBlock(t *testing.T) {
	s := mustCompile(t, Rule{ID: "r", Name: "no cards", Direction: Response, Kind: KindPII, PII: []string{"credit_card"}, Action: Block})
	out, _, blocked := streamAll(s.NewStream(Response, nil), []string{"your card is 4111 11", "11 1111 1111 and more text"})
	if blocked == nil {
		t.Fatalf("not blocked; sent %q", out)
	}
	if strings.Contains(out, "4111") || strings.Contains(blocked.Excerpt, "4111") {
		t.Errorf("the card was sent (%q) or is in the excerpt (%q)", out, blocked.Excerpt)
	}
	if blocked.Rule.Name != "no cards" || blocked.Kind != "credit_card" {
		t.Errorf("blocked by %+v", blocked)
	}
}

// FuzzRules compiles a fuzzed pattern as keyword and regex and runs it
// over a fuzzed text, whole and streamed: nothing panics, hits lie in the
// text, and redaction keeps UTF-8 valid.
func FuzzRules(f *testing.F) {
	f.Add("{{7*7}}", "x {{7*7}} y", 3)
	f.Add(`(a+)+$`, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", 5)
	f.Add(`\bsk-\w+`, "key sk-abcdef ok", 1)
	f.Add("é", "ÉéÉ", 1)
	f.Fuzz(func(t *testing.T, pattern, text string, size int) {
		if pattern == "" || !utf8.ValidString(text) || !utf8.ValidString(pattern) {
			return
		}
		rs := []Rule{
			{ID: "k", Direction: Both, Kind: KindKeyword, Patterns: []string{pattern}, Action: Redact},
			{ID: "p", Direction: Both, Kind: KindPII, PII: []string{"email", "phone", "credit_card", "iban", "us_ssn", "ipv4", "secret_key"}, Action: Flag},
		}
		if _, err := Compile([]Rule{{ID: "r", Direction: Both, Kind: KindRegex, Patterns: []string{pattern}, Action: Redact}}); err == nil {
			rs = append(rs, Rule{ID: "r", Direction: Both, Kind: KindRegex, Patterns: []string{pattern}, Action: Redact})
		}
		s := mustCompile(t, rs...)
		hits := s.Scan(Request, []string{text}, nil).Hits[0]
		for _, h := range hits {
			if h.Start < 0 || h.End > len(text) || h.Start >= h.End {
				t.Fatalf("hit %+v outside text of %d bytes", h, len(text))
			}
			_ = Excerpt(text, h, hits)
		}
		if r := Redacted(text, hits); !utf8.ValidString(r) {
			t.Fatalf("Redacted made invalid UTF-8: %q", r)
		}
		if size < 1 {
			size = 1
		}
		var chunks []string
		for i := 0; i < len(text); {
			j := min(i+size, len(text))
			for j < len(text) && !utf8.RuneStart(text[j]) {
				j++
			}
			chunks = append(chunks, text[i:j])
			i = j
		}
		out, _, _ := streamAll(s.NewStream(Response, nil), chunks)
		if !utf8.ValidString(out) {
			t.Fatalf("stream sent invalid UTF-8: %q", out)
		}
	})
}

// Overlapping hits of different rules never show a raw part of either,
// and a text with many hits is reported in bounded time.
func TestExcerptOverlapsAndScale(t *testing.T) {
	s := mustCompile(t,
		Rule{ID: "kw", Direction: Both, Kind: KindKeyword, Patterns: []string{"call bob@example.com now"}, Action: Flag},
		Rule{ID: "pii", Direction: Both, Kind: KindPII, PII: []string{"email"}, Action: Flag},
	)
	text := "please call bob@example.com now, thanks"
	hits := s.Scan(Request, []string{text}, nil).Hits[0]
	for _, f := range Findings(text, hits) {
		if strings.Contains(f.Excerpt, "bob@") || strings.Contains(f.Excerpt, "call") {
			t.Errorf("%s excerpt %q shows a match", f.Kind, f.Excerpt)
		}
	}
	many := strings.Repeat("write to someone@example.com today. ", 29000) // just under 1 MiB, 29000 hits
	start := time.Now()
	hits = s.Scan(Request, []string{many}, nil).Hits[0]
	found := Findings(many, hits)
	t.Logf("%d hits in %d bytes: scanned and reported in %s", len(hits), len(many), time.Since(start))
	if len(found) != 29000 || found[0].Excerpt == "" || found[maxExcerpts].Excerpt != "" {
		t.Errorf("%d findings; excerpts %q / %q", len(found), found[0].Excerpt, found[maxExcerpts].Excerpt)
	}
}

// FuzzDetectorPrefilter checks that running a detector only over the
// runs that can hold a match finds what running it over the whole text
// finds.
func FuzzDetectorPrefilter(f *testing.F) {
	f.Add("call 415-555-0100 or +49 30 1234567, ssn 123-45-6789, ip 10.0.0.1")
	f.Add("card 4111 1111 1111 1111, iban DE89 3704 0044 0532 0130 00, a@b.io")
	f.Add("key sk-abcdefghijklmnopqrstuvwxyz and -----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----")
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 4096 {
			return
		}
		for _, name := range piiKinds {
			d := builtin[name]
			got, _ := d.find(nil, text, nil)
			var want []span
			for _, p := range d.parts {
				var ms []span
				for _, m := range p.prog.re.FindAllStringIndex(text, -1) {
					ms = append(ms, span{m[0], m[1]})
				}
				for _, m := range ms {
					switch {
					case d.kind == "credit_card":
						want = appendCards(want, text, m.start, m.end)
					case d.valid == nil || d.valid(text, m.start, m.end):
						want = append(want, m)
					}
				}
			}
			sortSpans(got)
			sortSpans(want)
			if !cmp.Equal(want, got, cmp.AllowUnexported(span{})) {
				t.Fatalf("%s in %q: prefiltered %v, whole text %v", name, text, got, want)
			}
		}
	})
}
