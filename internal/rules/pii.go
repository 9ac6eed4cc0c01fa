package rules

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// A detector finds the spans of one PII kind in a text. Each of its parts
// is a RE2 expression that finds candidates in one linear pass, and a
// validator keeps the real ones (a Luhn-valid card, a mod-97-valid IBAN).
//
// Go's regexp has no literal to skip to in these expressions (they start
// with \b or a class), so scanning a whole text with one costs 100–300 ns
// per byte. Each part therefore says which bytes its matches are made of
// (its alphabet) and what every match contains (a trigger byte, or one of
// some literals): the expression runs only over the runs of alphabet bytes
// that hold a trigger, with one character of context on each side so that
// \b judges the run's edges as in the whole text. A match lies within one
// such run, so nothing is missed; ordinary prose has few of them.
type detector struct {
	kind  string
	parts []detectorPart
	valid func(text string, start, end int) bool
}

type detectorPart struct {
	prog     *program
	alphabet *byteSet
	// trigger is a byte every match contains; literals, when set,
	// instead are strings one of which every match contains.
	trigger  *byteSet
	literals []string
}

// byteSet is a set of bytes.
type byteSet [256]bool

// bytesOf returns the set of the bytes of s, where "a-z" stands for the
// range.
func bytesOf(s string) *byteSet {
	var b byteSet
	for i := 0; i < len(s); i++ {
		if i+2 < len(s) && s[i+1] == '-' {
			for c := s[i]; c <= s[i+2]; c++ {
				b[c] = true
			}
			i += 2
			continue
		}
		b[s[i]] = true
	}
	return &b
}

// The detectors' expressions. They are fixed, reviewed data. \b is an
// ASCII word boundary.
var (
	emailRE = `[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}\b`

	// phoneRE: E.164 and international numbers ("+49 30 1234567",
	// "+1 (415) 555-0100"), North American ("(415) 555-0100",
	// "415-555-0100", "415.555.0100") and national numbers with a trunk 0
	// and separators ("030 1234567", "020 7946 0958", "06 12 34 56 78").
	// A run of digits without separators is not taken for a phone number:
	// it is as often an order number or an id.
	phoneRE = `\+\d{1,3}(?:[ .-]?\(\d{1,4}\)|[ .-]?\d{1,4})(?:[ .-]?\d{2,4}){1,5}\b` +
		`|(?:\(\d{3}\) ?|\b\d{3}[-. ])\d{3}[-. ]\d{4}\b` +
		`|\b0\d{1,4}(?:[ -]\d{2,8}){1,4}\b`

	// cardRE: 13 to 19 digits, optionally grouped by single spaces or
	// hyphens; validCard picks the Luhn-valid number out of it.
	cardRE = `\b\d{2,}(?:[ -]\d{2,})*\b`

	// ibanRE: country code, check digits and 11–30 letters or digits,
	// compact or grouped by four with spaces. Upper case only, as IBANs
	// are printed.
	ibanRE = `\b[A-Z]{2}\d{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,4})?)\b`

	ssnRE = `\b\d{3}-\d{2}-\d{4}\b`

	ipv4RE = `\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b`

	// secretRE: API keys with a recognisable prefix; pemRE: private keys
	// in PEM form (the whole block up to its END line when it is there).
	secretRE = `\bsk-ant-[A-Za-z0-9_-]{20,}` +
		`|\bsk-[A-Za-z0-9_-]{20,}` +
		`|\bAKIA[0-9A-Z]{16}\b` +
		`|\bgh[pousr]_[A-Za-z0-9]{36,}` +
		`|\bxox[bpoas]-[A-Za-z0-9-]{10,}` +
		`|\bAIza[0-9A-Za-z_-]{35}`
	pemRE = `-----BEGIN[ A-Z]{0,20}PRIVATE KEY-----[A-Za-z0-9+/=\s]*(?:-----END[ A-Z]{0,20}PRIVATE KEY-----)?`
)

var digits09 = bytesOf("0-9")

// newDetectors compiles the built-in detectors by name (store.PIIKinds).
func newDetectors() map[string]*detector {
	part := func(re string, alphabet string, trigger *byteSet, literals ...string) detectorPart {
		p, err := newProgram(re)
		if err != nil {
			panic("rules: built-in detector: " + err.Error()) // fixed data, covered by tests
		}
		return detectorPart{prog: p, alphabet: bytesOf(alphabet), trigger: trigger, literals: literals}
	}
	return map[string]*detector{
		"email":       {kind: "email", parts: []detectorPart{part(emailRE, "A-Za-z0-9._%+@-", bytesOf("@"))}},
		"phone":       {kind: "phone", valid: validPhone, parts: []detectorPart{part(phoneRE, "0-9 .()+-", digits09)}},
		"credit_card": {kind: "credit_card", parts: []detectorPart{part(cardRE, "0-9 -", digits09)}},
		"iban":        {kind: "iban", valid: validIBAN, parts: []detectorPart{part(ibanRE, "A-Z0-9 ", digits09)}},
		"us_ssn":      {kind: "us_ssn", valid: validSSN, parts: []detectorPart{part(ssnRE, "0-9-", digits09)}},
		"ipv4":        {kind: "ipv4", valid: validIPv4, parts: []detectorPart{part(ipv4RE, "0-9.", digits09)}},
		"secret_key": {kind: "secret_key", parts: []detectorPart{
			part(secretRE, "A-Za-z0-9_-", nil, "sk-", "AKIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
				"xoxb-", "xoxp-", "xoxo-", "xoxa-", "xoxs-", "AIza"),
			part(pemRE, "A-Za-z0-9+/= \t\n\f\r-", nil, "-----BEGIN"),
		}},
	}
}

// builtin holds the detectors, compiled once. They are immutable.
var builtin = newDetectors()

// find appends the detector's spans in text to dst. ok is false when b
// ran out first.
func (d *detector) find(dst []span, text string, b *Budget) ([]span, bool) {
	for i := range d.parts {
		var ok bool
		if dst, ok = d.parts[i].find(dst, text, b, d); !ok {
			return dst, false
		}
	}
	return dst, true
}

func (p *detectorPart) find(dst []span, text string, b *Budget, d *detector) ([]span, bool) {
	var ms []span
	ok := true
	for _, r := range p.regions(text) {
		// One character of context on each side.
		lo, hi := r.start, r.end
		if lo > 0 {
			_, w := utf8.DecodeLastRuneInString(text[:lo])
			lo -= w
		}
		if hi < len(text) {
			_, w := utf8.DecodeRuneInString(text[hi:])
			hi += w
		}
		n := len(ms)
		if ms, ok = p.prog.findAll(text[lo:hi], b, ms); !ok {
			return dst, false
		}
		for i := n; i < len(ms); i++ {
			ms[i].start += lo
			ms[i].end += lo
		}
	}
	for _, m := range ms {
		switch {
		case d.kind == "credit_card":
			dst = appendCards(dst, text, m.start, m.end)
		case d.valid == nil || d.valid(text, m.start, m.end):
			dst = append(dst, m)
		}
	}
	return dst, true
}

// regions returns the runs of alphabet bytes of text that hold a trigger,
// in order. Runs closer than mergeGap are joined, to save calls.
func (p *detectorPart) regions(text string) []span {
	var out []span
	add := func(s span) {
		if n := len(out); n > 0 && s.start <= out[n-1].end+mergeGap {
			out[n-1].end = max(out[n-1].end, s.end)
			return
		}
		out = append(out, s)
	}
	if p.literals == nil {
		for i := 0; i < len(text); {
			if !p.alphabet[text[i]] {
				i++
				continue
			}
			j, hit := i, false
			for j < len(text) && p.alphabet[text[j]] {
				hit = hit || p.trigger[text[j]]
				j++
			}
			if hit {
				add(span{i, j})
			}
			i = j
		}
		return out
	}
	// The runs around each literal, in the order of the text.
	var found []span
	for _, lit := range p.literals {
		for off := 0; ; {
			k := strings.Index(text[off:], lit)
			if k < 0 {
				break
			}
			at := off + k
			lo, hi := at, at+len(lit)
			for lo > 0 && p.alphabet[text[lo-1]] {
				lo--
			}
			for hi < len(text) && p.alphabet[text[hi]] {
				hi++
			}
			found = append(found, span{lo, hi})
			off = hi
		}
	}
	sortSpans(found)
	for _, s := range found {
		add(s)
	}
	return out
}

// mergeGap joins trigger runs closer than this many bytes into one region.
const mergeGap = 16

// span is a byte range [start, end) of a text.
type span struct{ start, end int }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			n++
		}
	}
	return n
}

// validPhone keeps numbers of 7 to 15 digits (E.164's maximum) that are
// not part of a dotted version or address ("1.2.3.4").
func validPhone(text string, start, end int) bool {
	n := digits(text[start:end])
	if n < 7 || n > 15 {
		return false
	}
	if start > 0 && (text[start-1] == '.' || text[start-1] == '+' || isDigit(text[start-1])) {
		return false
	}
	if end < len(text) && (text[end] == '.' || text[end] == '-') && end+1 < len(text) && isDigit(text[end+1]) {
		return false
	}
	return true
}

// appendCards appends the card numbers in the candidate text[start:end]:
// a run of digit groups. The whole run is tried first; when it is not a
// valid number, runs of consecutive groups are (a card followed by
// another number in the same sentence).
func appendCards(dst []span, text string, start, end int) []span {
	cand := text[start:end]
	if n := digits(cand); n >= 13 && n <= 19 && luhn(cand) {
		return append(dst, span{start, end})
	}
	if strings.IndexAny(cand, " -") < 0 {
		// A longer run of plain digits is some other number: do not look
		// for a card inside it.
		return dst
	}
	// Group boundaries: groups[i] is the span of the i-th digit group.
	var groups []span
	for i := 0; i < len(cand); {
		j := i
		for j < len(cand) && isDigit(cand[j]) {
			j++
		}
		groups = append(groups, span{start + i, start + j})
		i = j + 1
	}
	// A card has at most 19 digits, so at most 9 groups of 2 or more:
	// each start is tried against the next few groups only.
	for i := 0; i < len(groups); i++ {
		found := -1
		n := 0
		for j := i; j < len(groups) && j < i+9; j++ {
			n += groups[j].end - groups[j].start
			if n > 19 {
				break
			}
			if n >= 13 && luhn(text[groups[i].start:groups[j].end]) {
				found = j // keep the longest
			}
		}
		if found >= 0 {
			dst = append(dst, span{groups[i].start, groups[found].end})
			i = found
		}
	}
	return dst
}

// luhn reports whether the digits of s pass the Luhn check.
func luhn(s string) bool {
	sum, double := 0, false
	for i := len(s) - 1; i >= 0; i-- {
		c := s[i]
		if !isDigit(c) {
			continue
		}
		d := int(c - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// validIBAN checks the length (15–34) and the ISO 13616 mod-97 check
// digits.
func validIBAN(text string, start, end int) bool {
	s := strings.ReplaceAll(text[start:end], " ", "")
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	// The first four characters move to the end; letters count 10–35.
	r := s[4:] + s[:4]
	rem := 0
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case isDigit(c):
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A') + 10) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// validSSN excludes the numbers the SSA never issues: area 000, 666 and
// 900–999, group 00, serial 0000.
func validSSN(text string, start, end int) bool {
	s := text[start:end] // AAA-GG-SSSS
	area, group, serial := s[0:3], s[4:6], s[7:11]
	if area == "000" || area == "666" || area[0] == '9' || group == "00" || serial == "0000" {
		return false
	}
	// Not a piece of a longer hyphenated number ("1-123-45-6789-2").
	if start > 0 && text[start-1] == '-' || end < len(text) && text[end] == '-' {
		return false
	}
	return true
}

// validIPv4 keeps dotted quads of octets 0–255 that are not part of a
// longer dotted sequence ("1.2.3.4.5" is a version).
func validIPv4(text string, start, end int) bool {
	for _, oct := range strings.Split(text[start:end], ".") {
		n := 0
		for i := 0; i < len(oct); i++ {
			n = n*10 + int(oct[i]-'0')
		}
		if n > 255 {
			return false
		}
	}
	if start > 1 && text[start-1] == '.' && isDigit(text[start-2]) {
		return false
	}
	if end+1 < len(text) && text[end] == '.' && isDigit(text[end+1]) {
		return false
	}
	return true
}

// credentialRE finds the value of a credential written as a labelled
// assignment: "password: hunter2", "api_key=abc", "token abc",
// "Authorization: Bearer abc". It is used for excerpts only (see
// excerpt.go), never as a rule.
var credentialRE = regexp.MustCompile(`(?i)\b(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|auth(?:orization)?|bearer|credentials?)\b(?:\s*(?:is|[:=])\s*|\s+)(?:bearer\s+)?("[^"]*"?|'[^']*'?|\S+)`)
