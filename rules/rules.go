// Package rules is the matcher of content rules: keyword lists, RE2
// regular expressions and built-in PII detectors, compiled once and run
// against the text of requests and responses.
//
// Patterns are data. A keyword is a literal string; a regex is compiled by
// Go's regexp package (RE2 syntax), which has no backreferences or
// lookaround and runs in time linear in the text it scans, so no pattern
// can make a scan take exponential time. Nothing in a pattern is ever
// evaluated: "{{7*7}}" or "${jndi:ldap://x}" match exactly those
// characters. Each rule scans at most MaxScanBytes of a message's text,
// which bounds its evaluation time.
package rules

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Directions, kinds and actions of a rule (the stored values).
const (
	Request  = "request"
	Response = "response"
	Both     = "both"

	KindKeyword = "keyword"
	KindRegex   = "regex"
	KindPII     = "pii"

	Block  = "block"
	Redact = "redact"
	Flag   = "flag"
)

// MaxScanBytes is how much text of one message (a request, a response or
// a stream) the rules scan. A message with more text has Scanner.Truncated
// set: what lies beyond is not scanned, and the caller applies its fail
// mode.
const MaxScanBytes = 1 << 20

// StreamWindow is the hold-back window of a stream: how many bytes of
// streamed text are kept back so that a match cut by a chunk boundary is
// still found whole. Keywords and PII fit in it (a keyword is at most 1024
// bytes, so the window grows to the longest keyword of the set); a regex
// match longer than the window may be missed across chunk boundaries.
const StreamWindow = 256

// Rule is a content rule as the matcher sees it.
type Rule struct {
	ID        string
	Name      string
	Direction string // Request, Response or Both
	Kind      string // KindKeyword, KindRegex or KindPII
	Patterns  []string
	// PII names the detectors of a pii rule: email, phone, credit_card,
	// iban, us_ssn, ipv4, secret_key.
	PII           []string
	Action        string // Block, Redact or Flag
	CaseSensitive bool
}

// Set is the compiled form of a gateway's rules. It is immutable and safe
// for concurrent use.
type Set struct {
	rules  []*compiled
	window int
	// foldKeywords is true when some keyword rule is case-insensitive: the
	// scanner then folds each text once for all of them.
	foldKeywords bool
}

type compiled struct {
	Rule
	keywords  []string // folded when !CaseSensitive
	regexps   []*regexp.Regexp
	detectors []detector
}

// Compile compiles rules. A rule that does not compile (an invalid
// pattern or PII kind, which the admin API refuses) is left out of the
// set, and the returned error names it; the set holds the others.
func Compile(rules []Rule) (*Set, error) {
	s := &Set{window: StreamWindow}
	var errs []error
	for _, r := range rules {
		c, err := compile(r)
		if err != nil {
			errs = append(errs, fmt.Errorf("rule %s: %w", r.ID, err))
			continue
		}
		for _, k := range c.keywords {
			s.window = max(s.window, len(k))
		}
		if c.Kind == KindKeyword && !c.CaseSensitive {
			s.foldKeywords = true
		}
		s.rules = append(s.rules, c)
	}
	return s, errors.Join(errs...)
}

// MaxRegexInstructions caps the compiled program of a regex pattern that
// the admin API accepts. Go's regexp runs in time linear in the text, but
// the factor is the program's size: a pattern of n instructions costs up to
// about n × 20 ns per byte scanned (`\w{500}z` over 1 MiB of letters takes
// 17 s). 256 bounds any one pattern at a few seconds per MiB of text in the
// worst case; ordinary patterns (an e-mail or a secret format: 40–60
// instructions) scan 1 MiB in 50–200 ms. Long word lists belong in a
// keyword rule, which has no such cost.
const MaxRegexInstructions = 256

// RegexProgramSize is the number of instructions pattern compiles to (with
// (?i) unless caseSensitive), as Go's regexp runs it.
func RegexProgramSize(pattern string, caseSensitive bool) (int, error) {
	if !caseSensitive {
		pattern = "(?i)" + pattern
	}
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 0, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0, err
	}
	return len(prog.Inst), nil
}

func compile(r Rule) (*compiled, error) {
	switch r.Direction {
	case Request, Response, Both:
	default:
		return nil, fmt.Errorf("unknown direction %q", r.Direction)
	}
	switch r.Action {
	case Block, Redact, Flag:
	default:
		return nil, fmt.Errorf("unknown action %q", r.Action)
	}
	c := &compiled{Rule: r}
	switch r.Kind {
	case KindKeyword:
		for _, p := range r.Patterns {
			if p == "" {
				return nil, errors.New("empty keyword")
			}
			if !r.CaseSensitive {
				p = fold(p)
			}
			c.keywords = append(c.keywords, p)
		}
	case KindRegex:
		for i, p := range r.Patterns {
			if !r.CaseSensitive {
				p = "(?i)" + p
			}
			re, err := regexp.Compile(p)
			if err != nil {
				return nil, fmt.Errorf("pattern %d: %w", i, err)
			}
			c.regexps = append(c.regexps, re)
		}
	case KindPII:
		for _, k := range r.PII {
			d, ok := detectors[k]
			if !ok {
				return nil, fmt.Errorf("unknown pii kind %q", k)
			}
			c.detectors = append(c.detectors, d)
		}
	default:
		return nil, fmt.Errorf("unknown kind %q", r.Kind)
	}
	return c, nil
}

// Len returns the number of compiled rules.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.rules)
}

// Applies reports whether some rule applies to direction dir (Request or
// Response).
func (s *Set) Applies(dir string) bool { return s.has(dir, "") }

// HasAction reports whether some rule of direction dir has the action.
func (s *Set) HasAction(dir, action string) bool { return s.has(dir, action) }

func (s *Set) has(dir, action string) bool {
	if s == nil {
		return false
	}
	for _, r := range s.rules {
		if r.applies(dir) && (action == "" || r.Action == action) {
			return true
		}
	}
	return false
}

// Window returns the hold-back window of a stream for this set: at least
// StreamWindow bytes, more when a keyword is longer.
func (s *Set) Window() int { return s.window }

func (r *compiled) applies(dir string) bool { return r.Direction == Both || r.Direction == dir }

// Hit is one match of a rule in a text.
type Hit struct {
	// Rule is the rule that matched; it belongs to the Set.
	Rule *Rule
	// Kind is what matched: "keyword", "regex", or the PII kind ("email").
	Kind string
	// Start and End are the byte offsets of the match in the text.
	Start, End int
}

// Scanner scans the texts of one message in one direction, counting the
// bytes against MaxScanBytes. It is not safe for concurrent use.
type Scanner struct {
	set       *Set
	dir       string
	scanned   int
	limit     int
	truncated bool
	spans     []span
}

// NewScanner returns a scanner of the rules of direction dir.
func (s *Set) NewScanner(dir string) *Scanner {
	return &Scanner{set: s, dir: dir, limit: MaxScanBytes}
}

// Truncated reports whether text was left unscanned because the message
// had more than MaxScanBytes of it.
func (sc *Scanner) Truncated() bool { return sc.truncated }

// Scan returns the hits of every rule in text, ordered by start (then
// longest first). Only the part of text within the message's remaining
// budget is scanned.
func (sc *Scanner) Scan(text string) []Hit {
	if sc.set.Len() == 0 || len(text) == 0 {
		return nil
	}
	left := sc.limit - sc.scanned
	if left <= 0 {
		sc.truncated = true
		return nil
	}
	if len(text) > left {
		cut := left
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
		sc.truncated = true
	}
	sc.scanned += len(text)
	return sc.set.find(sc.dir, text, 0, &sc.spans)
}

// find returns the hits of the rules of direction dir in text that start
// at or after from, ordered by start, then longest first. spans is
// scratch space.
func (s *Set) find(dir, text string, from int, spans *[]span) []Hit {
	var folded string
	if s.foldKeywords {
		folded = fold(text)
	}
	var hits []Hit
	for _, r := range s.rules {
		if !r.applies(dir) {
			continue
		}
		add := func(kind string, found []span) {
			for _, m := range found {
				if m.start >= from && m.end > m.start {
					hits = append(hits, Hit{Rule: &r.Rule, Kind: kind, Start: m.start, End: m.end})
				}
			}
		}
		switch r.Kind {
		case KindKeyword:
			hay := text
			if !r.CaseSensitive {
				hay = folded
			}
			for _, k := range r.keywords {
				*spans = indexAll((*spans)[:0], hay, k)
				add(KindKeyword, *spans)
			}
		case KindRegex:
			for _, re := range r.regexps {
				*spans = (*spans)[:0]
				for _, m := range re.FindAllStringIndex(text, -1) {
					*spans = append(*spans, span{m[0], m[1]})
				}
				add(KindRegex, *spans)
			}
		case KindPII:
			for _, d := range r.detectors {
				*spans = d.find((*spans)[:0], text)
				add(d.kind, *spans)
			}
		}
	}
	slices.SortStableFunc(hits, func(a, b Hit) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return b.End - a.End
	})
	return hits
}

// indexAll appends the non-overlapping occurrences of k in s to dst.
func indexAll(dst []span, s, k string) []span {
	for off := 0; ; {
		i := strings.Index(s[off:], k)
		if i < 0 {
			return dst
		}
		dst = append(dst, span{off + i, off + i + len(k)})
		off += i + len(k)
	}
}

// fold lower-cases s rune by rune wherever that keeps the rune's encoded
// length, so that byte offsets in the folded text are offsets in s. The
// few runes whose lower case has another length ('İ', the Kelvin sign)
// stay as they are: they match case-sensitively.
func fold(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 'A' && c <= 'Z' {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if l := unicode.ToLower(r); l != r && utf8.RuneLen(l) == n {
			break
		}
		i += n
	}
	if i == len(s) {
		return s // nothing to fold: no copy
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if l := unicode.ToLower(r); l != r && utf8.RuneLen(l) == n {
			b = utf8.AppendRune(b, l)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}

// Placeholder is what a redacted match becomes: "[REDACTED:<kind>]".
func Placeholder(kind string) string { return "[REDACTED:" + kind + "]" }

// Apply returns text with the hits that keep is true for replaced by their
// placeholders. Overlapping hits are merged into the first (the earliest,
// then the longest) of them. It returns text itself when nothing is
// replaced.
func Apply(text string, hits []Hit, keep func(Hit) bool) string {
	var b strings.Builder
	last := 0
	for _, h := range hits {
		if !keep(h) || h.Start < last {
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(text))
		}
		b.WriteString(text[last:h.Start])
		b.WriteString(Placeholder(h.Kind))
		last = h.End
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// Redacted is Apply for the hits of redact rules.
func Redacted(text string, hits []Hit) string {
	return Apply(text, hits, func(h Hit) bool { return h.Rule.Action == Redact })
}

// Masked is Apply for every hit, whatever its action: the form of a text
// that may be stored.
func Masked(text string, hits []Hit) string {
	return Apply(text, hits, func(Hit) bool { return true })
}

// excerptContext is how many characters on each side of a match an
// excerpt shows.
const excerptContext = 10

// Excerpt returns the surroundings of hit h in text for a guardrail
// event: up to 10 characters on each side, the match itself replaced by
// its kind and length ("[email:17]"), and every other hit of all (sorted
// as Scan returns them) in that window masked the same way, or left out
// when it crosses the window's edge. The raw match never appears in it.
func Excerpt(text string, h Hit, all []Hit) string {
	if !slices.Contains(all, h) {
		all = append(slices.Clone(all), h)
		slices.SortStableFunc(all, func(a, b Hit) int {
			if a.Start != b.Start {
				return a.Start - b.Start
			}
			return b.End - a.End
		})
	}
	return newExcerpter(text, all).excerpt(h)
}

// excerpter makes the excerpts of the hits of one text. maxEnd[i] is the
// largest End of all[:i+1], so the hits that reach into a window from
// before it are found without scanning them all.
type excerpter struct {
	text   string
	all    []Hit
	maxEnd []int
}

func newExcerpter(text string, all []Hit) *excerpter {
	x := &excerpter{text: text, all: all, maxEnd: make([]int, len(all))}
	m := 0
	for i, h := range all {
		m = max(m, h.End)
		x.maxEnd[i] = m
	}
	return x
}

func (x *excerpter) excerpt(h Hit) string {
	text, all := x.text, x.all
	lo := h.Start
	for n := 0; n < excerptContext && lo > 0; n++ {
		_, size := utf8.DecodeLastRuneInString(text[:lo])
		lo -= size
	}
	hi := h.End
	for n := 0; n < excerptContext && hi < len(text); n++ {
		_, size := utf8.DecodeRuneInString(text[hi:])
		hi += size
	}
	first, _ := slices.BinarySearchFunc(all, lo, func(o Hit, lo int) int { return o.Start - lo })
	for first > 0 && all[first-1].Start == lo {
		first--
	}
	// Hits from before the window that reach into it widen it: they are
	// shown masked. maxEnd is non-decreasing, so the first of them is
	// found by bisection.
	for first > 0 && x.maxEnd[first-1] > lo {
		j, _ := slices.BinarySearchFunc(x.maxEnd[:first], lo+1, func(m, t int) int { return m - t })
		lo, first = all[j].Start, j
	}
	// h is among all: it is written masked, or lies inside another hit's
	// mask.
	var b strings.Builder
	pos := lo
	for i := first; i < len(all) && all[i].Start < hi; i++ {
		o := all[i]
		if o.End > hi {
			hi = o.End // shown masked, and nothing after it
		}
		if o.Start < pos {
			pos = max(pos, o.End) // inside a mask already written
			continue
		}
		writeClean(&b, text[pos:o.Start])
		writeMask(&b, text, o)
		pos = o.End
	}
	writeClean(&b, text[pos:max(pos, hi)])
	return b.String()
}

func writeMask(b *strings.Builder, text string, h Hit) {
	b.WriteString("[" + h.Kind + ":" + strconv.Itoa(utf8.RuneCountInString(text[h.Start:h.End])) + "]")
}

// maxExcerpts bounds the excerpts Findings makes for one text; findings
// past it have none (their events are past any caller's limit anyway).
const maxExcerpts = 100

// Findings returns the findings of hits (sorted as Scan returns them) in
// text, in order.
func Findings(text string, hits []Hit) []Finding {
	if len(hits) == 0 {
		return nil
	}
	x := newExcerpter(text, hits)
	out := make([]Finding, len(hits))
	for i, h := range hits {
		out[i] = Finding{Rule: h.Rule, Kind: h.Kind}
		if i < maxExcerpts {
			out[i].Excerpt = x.excerpt(h)
		}
	}
	return out
}

// writeClean writes s with control characters as spaces, so that an
// excerpt is one line.
func writeClean(b *strings.Builder, s string) {
	for _, r := range s {
		if unicode.IsControl(r) {
			r = ' '
		}
		b.WriteRune(r)
	}
}
