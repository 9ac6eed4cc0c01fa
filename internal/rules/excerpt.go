package rules

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Excerpts. A guardrail event keeps a short excerpt of the text around a
// hit, so that someone reviewing it sees what the match was about. It must
// never keep a secret: neither the match itself nor a secret beside it (a
// flagged "password:" must not store the password after it). The rule:
//
//  1. The window is the match with up to excerptContext characters on each
//     side, cut back to whole words (a word is a run of characters other
//     than white space); a masked span (below) that crosses the window's
//     edge widens the window to show it masked.
//  2. Shown as "[kind:n]" (n characters long) are: the match; every other
//     hit of the scan; every match of the seven built-in PII and secret
//     detectors, whatever the gateway's rules ("[email:16]"); and the
//     value of a labelled credential — the word after password, passwd,
//     pwd, secret, token, api_key, access_key, private_key, auth,
//     authorization, bearer or credential(s), and ":", "=", "is" or a
//     space ("[credential:7]").
//  3. Every other word that holds a digit or a character other than a
//     letter, an apostrophe or a hyphen (punctuation at its ends aside) is
//     shown as "[text:n]"; a word of punctuation only is shown.
//  4. Control characters become spaces, so that an excerpt is one line.
//
// So an excerpt shows only the match's kind and length, and plain words.

// excerptContext is how many characters on each side of a match an
// excerpt shows at most.
const excerptContext = 10

// excerptReach is how far beyond the window the detectors look, so that
// a match crossing the window's edge is seen whole.
const excerptReach = 64

// maxExcerpts bounds the excerpts Findings makes for one text; findings
// past it have none (their events are past any caller's limit anyway).
const maxExcerpts = 100

// Finding is a hit as it is reported: the rule, what matched and a masked
// excerpt, never the matched text.
type Finding struct {
	Rule    *Rule
	Kind    string
	Excerpt string
}

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

// Excerpt returns the excerpt of hit h in text, all being the hits of the
// scan (sorted as Scan returns them).
func Excerpt(text string, h Hit, all []Hit) string {
	if !slices.Contains(all, h) {
		all = append(slices.Clone(all), h)
		sortHits(all)
	}
	return newExcerpter(text, all).excerpt(h)
}

// excerpter makes the excerpts of the hits of one text. maxEnd[i] is the
// largest End of all[:i+1], so the hits that reach into a window from
// before it are found by bisection.
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

// mask is a span shown as "[kind:n]".
type mask struct {
	start, end int
	kind       string
}

func (x *excerpter) excerpt(h Hit) string {
	text := x.text
	lo, hi := runesBack(text, h.Start, excerptContext), runesFwd(text, h.End, excerptContext)
	near0, near1 := max(0, lo-excerptReach), min(len(text), hi+excerptReach)
	// Masks: the hits near the window, the detectors' matches and the
	// credential values around it.
	var masks []mask
	first, _ := slices.BinarySearchFunc(x.all, near0, func(o Hit, at int) int { return o.Start - at })
	if first > 0 && x.maxEnd[first-1] > near0 {
		// Hits from before that reach in: the first of them by bisection
		// (maxEnd does not decrease).
		j, _ := slices.BinarySearchFunc(x.maxEnd[:first], near0+1, func(m, t int) int { return m - t })
		first = j
	}
	for i := first; i < len(x.all) && x.all[i].Start < near1; i++ {
		if o := x.all[i]; o.End > near0 {
			masks = append(masks, mask{o.Start, o.End, o.Kind})
		}
	}
	near := text[near0:near1]
	for _, name := range piiKinds {
		d := builtin[name]
		spans, _ := d.find(nil, near, nil)
		for _, s := range spans {
			masks = append(masks, mask{near0 + s.start, near0 + s.end, d.kind})
		}
	}
	for _, m := range credentialRE.FindAllStringSubmatchIndex(near, -1) {
		masks = append(masks, mask{near0 + m[2], near0 + m[3], "credential"})
	}
	slices.SortStableFunc(masks, func(a, b mask) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end
	})
	// Overlapping masks are one, under the first one's kind; the match
	// itself is shown under its own kind.
	merged := masks[:0]
	for _, m := range masks {
		if n := len(merged); n > 0 && m.start < merged[n-1].end {
			merged[n-1].end = max(merged[n-1].end, m.end)
			continue
		}
		merged = append(merged, m)
	}
	for i := range merged {
		if merged[i].start == h.Start && merged[i].end == h.End {
			merged[i].kind = h.Kind
		}
	}
	// The window widens to show masks across its edges, then shrinks to
	// whole words.
	for _, m := range merged {
		if m.start < lo && m.end > lo {
			lo = m.start
		}
		if m.start < hi && m.end > hi {
			hi = m.end
		}
	}
	lo = wordStart(text, lo, h.Start, merged)
	hi = wordEnd(text, hi, h.End, merged)
	var b strings.Builder
	pos := lo
	for _, m := range merged {
		if m.end <= lo || m.start >= hi {
			continue
		}
		writeWords(&b, text[pos:m.start])
		writeMask(&b, text, m)
		pos = m.end
	}
	writeWords(&b, text[pos:max(pos, hi)])
	return b.String()
}

// piiKinds are the built-in detectors in a fixed order.
var piiKinds = []string{"secret_key", "email", "credit_card", "iban", "us_ssn", "phone", "ipv4"}

// runesBack returns the offset n runes before i.
func runesBack(s string, i, n int) int {
	for ; n > 0 && i > 0; n-- {
		_, w := utf8.DecodeLastRuneInString(s[:i])
		i -= w
	}
	return i
}

// runesFwd returns the offset n runes after i.
func runesFwd(s string, i, n int) int {
	for ; n > 0 && i < len(s); n-- {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return i
}

// inMask reports whether offset i lies inside one of masks.
func inMask(masks []mask, i int) bool {
	for _, m := range masks {
		if m.start <= i && i < m.end {
			return true
		}
	}
	return false
}

// wordStart moves lo forward, at most to limit, until it does not cut a
// word; the start of a mask is no cut.
func wordStart(s string, lo, limit int, masks []mask) int {
	for lo > 0 && lo < limit {
		if inMask(masks, lo) && !inMask(masks, lo-1) {
			return lo
		}
		if r, _ := utf8.DecodeLastRuneInString(s[:lo]); unicode.IsSpace(r) {
			return lo
		}
		_, w := utf8.DecodeRuneInString(s[lo:])
		lo += w
	}
	return lo
}

// wordEnd moves hi back, at least to limit, until it does not cut a word;
// the end of a mask is no cut.
func wordEnd(s string, hi, limit int, masks []mask) int {
	for hi < len(s) && hi > limit {
		if inMask(masks, hi-1) && !inMask(masks, hi) {
			return hi
		}
		if r, _ := utf8.DecodeRuneInString(s[hi:]); unicode.IsSpace(r) {
			return hi
		}
		_, w := utf8.DecodeLastRuneInString(s[:hi])
		hi -= w
	}
	return hi
}

func writeMask(b *strings.Builder, text string, m mask) {
	b.WriteString("[" + m.kind + ":" + strconv.Itoa(utf8.RuneCountInString(text[m.start:m.end])) + "]")
}

// writeWords writes s, its plain words as they are and the others masked
// as "[text:n]"; control characters become spaces.
func writeWords(b *strings.Builder, s string) {
	for len(s) > 0 {
		i := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsSpace(r) })
		if i < 0 {
			i = len(s)
		}
		for _, r := range s[:i] {
			if unicode.IsControl(r) {
				r = ' '
			}
			b.WriteRune(r)
		}
		s = s[i:]
		j := strings.IndexFunc(s, unicode.IsSpace)
		if j < 0 {
			j = len(s)
		}
		w := s[:j]
		s = s[j:]
		if w == "" {
			continue
		}
		if plainWord(w) {
			b.WriteString(w)
		} else {
			b.WriteString("[text:" + strconv.Itoa(utf8.RuneCountInString(w)) + "]")
		}
	}
}

// plainWord reports whether w is shown as it is: punctuation only, or
// letters, apostrophes and hyphens with punctuation only at its ends.
func plainWord(w string) bool {
	w = strings.Trim(w, wordPunct)
	for _, r := range w {
		if !unicode.IsLetter(r) && r != '\'' && r != '-' && r != '’' {
			return false
		}
	}
	return true
}

// wordPunct is the punctuation a plain word may begin or end with.
const wordPunct = `.,;:!?()[]{}<>"'=*-–—…`
