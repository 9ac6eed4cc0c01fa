package rules

import (
	"slices"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Folding: keyword and PII matching run on a folded copy of the text, so
// that compatibility forms ("ｐａｓｓｗｏｒｄ", "ﬁle", "１２３") and invisible
// characters ("pass\u200bword") do not hide a match. The folded text is
// the text in Unicode normalization form NFKC without the zero-width
// characters below and, for case-insensitive keywords, lower-cased rune by
// rune. A match in the folded text is mapped back to the original text, so
// that redaction replaces the original characters: a match that starts or
// ends inside a character that folded to several (the "f" of "ﬁ") covers
// that whole character.

// isZeroWidth reports whether r is a character that folding drops: the
// soft hyphen U+00AD, the Mongolian vowel separator U+180E, the zero-width
// space, non-joiner and joiner U+200B–U+200D, the word joiner and the
// invisible operators U+2060–U+2064, and the zero-width no-break space
// (byte-order mark) U+FEFF. They render as nothing in running text, so
// they can split a keyword without a reader noticing.
func isZeroWidth(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x180E, r == 0xFEFF:
		return true
	case r >= 0x200B && r <= 0x200D, r >= 0x2060 && r <= 0x2064:
		return true
	}
	return false
}

// foldMap maps byte offsets of a folded text back to the text it was
// folded from. A nil *foldMap is the identity.
type foldMap struct {
	segs []foldSeg
}

// foldSeg is a run of folded bytes [f, next seg's f) made from the
// original bytes [o, oEnd). In a linear run each folded byte is the
// original byte at the same distance from the start; otherwise the run
// maps as a whole.
type foldSeg struct {
	f, o, oEnd int
	linear     bool
}

// seg returns the index of the segment holding folded offset i.
func (m *foldMap) seg(i int) int {
	k, found := slices.BinarySearchFunc(m.segs, i, func(s foldSeg, i int) int { return s.f - i })
	if !found {
		k--
	}
	return k
}

// start maps the start offset of a match.
func (m *foldMap) start(i int) int {
	if m == nil {
		return i
	}
	if len(m.segs) == 0 {
		return 0
	}
	s := m.segs[m.seg(i)]
	if s.linear {
		return s.o + i - s.f
	}
	return s.o
}

// end maps the end offset (exclusive) of a non-empty match.
func (m *foldMap) end(i int) int {
	if m == nil {
		return i
	}
	if len(m.segs) == 0 {
		return 0
	}
	s := m.segs[m.seg(i-1)]
	if s.linear {
		return s.o + i - s.f
	}
	return s.oEnd
}

// add records that the folded bytes from f on come from original [o, oEnd).
func (m *foldMap) add(f, o, oEnd int, linear bool) {
	if n := len(m.segs); n > 0 {
		last := &m.segs[n-1]
		if linear && last.linear && last.oEnd == o && last.o+(f-last.f) == o {
			last.oEnd = oEnd // the run goes on
			return
		}
	}
	m.segs = append(m.segs, foldSeg{f: f, o: o, oEnd: oEnd, linear: linear})
}

// foldText folds s (lower-casing when lower) and returns the folded text
// with the map back to s. ASCII text needs no map: NFKC leaves it as it
// is, and lower-casing keeps its length.
func foldText(s string, lower bool) (string, *foldMap) {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		if lower {
			return lowerASCII(s), nil
		}
		return s, nil
	}
	m := &foldMap{}
	out := make([]byte, 0, len(s)+8)
	var it norm.Iter
	it.InitString(norm.NFKC, s)
	var segBuf []byte
	for !it.Done() {
		// A decomposition may come in several pieces before the
		// iterator moves on in s ("ﬁ" gives "f", then "i"): they are one
		// segment.
		o := it.Pos()
		seg := append(segBuf[:0], it.Next()...)
		for it.Pos() == o && !it.Done() {
			seg = append(seg, it.Next()...)
		}
		oEnd := it.Pos()
		segBuf = seg
		f := len(out)
		// A segment that comes out as it went in maps byte for byte,
		// less the runes dropped, unless lower-casing changes a rune's
		// length.
		linear := oEnd-o == len(seg) && string(seg) == s[o:oEnd]
		if linear && lower {
			for _, r := range string(seg) {
				if l := unicode.ToLower(r); l != r && utf8.RuneLen(l) != utf8.RuneLen(r) {
					linear = false
					break
				}
			}
		}
		runStart, runF := o, f
		for i := 0; i < len(seg); {
			r, n := utf8.DecodeRune(seg[i:])
			if isZeroWidth(r) {
				if linear {
					if len(out) > runF {
						m.add(runF, runStart, o+i, true)
					}
					runStart, runF = o+i+n, len(out)
				}
				i += n
				continue
			}
			if l := unicode.ToLower(r); lower && l != r {
				out = utf8.AppendRune(out, l)
			} else {
				out = append(out, seg[i:i+n]...) // invalid bytes stay as they are
			}
			i += n
		}
		switch {
		case linear:
			if len(out) > runF {
				m.add(runF, runStart, oEnd, true)
			}
		case len(out) > f:
			m.add(f, o, oEnd, false)
		}
	}
	return string(out), m
}

// lowerASCII lower-cases ASCII s, returning s itself when it has no upper
// case letter.
func lowerASCII(s string) string {
	i := 0
	for i < len(s) && !(s[i] >= 'A' && s[i] <= 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// KeywordMatchesNothing reports a keyword that folds to nothing (only
// zero-width characters, say): it could never match, so the admin API
// refuses it rather than store a rule that silently does nothing.
func KeywordMatchesNothing(k string) bool { return foldKeyword(k, false) == "" }

// foldKeyword folds a keyword the way texts are folded.
func foldKeyword(k string, lower bool) string {
	f, _ := foldText(k, lower)
	return f
}
