package rules

import (
	"io"
	"regexp"
	"time"
	"unicode/utf8"
)

// DefaultBudget is the matching time a request gets when its caller sets
// none: the time all its content rules may spend on it, request and
// response (every chunk of a stream) together.
const DefaultBudget = 250 * time.Millisecond

// Budget bounds the matching time of one request. Matching is timed in
// sessions (the scan of a request or a response, the push of a stream
// chunk); within a session the clock is read every checkUnits units of
// work, so no single piece of work runs long unchecked. A unit is a byte
// read by one instruction of a compiled pattern (a keyword pass counts one
// per byte). When the time is spent, the matching that has not finished
// is abandoned: the caller applies the fail mode of the rules left
// unchecked.
//
// A nil *Budget is unlimited. A Budget is not safe for concurrent use.
type Budget struct {
	limit time.Duration
	now   func() time.Time
	spent time.Duration // by the sessions that ended
	t0    time.Time     // the start of the current session
	units int           // work since the last read of the clock
	out   bool
}

// checkUnits is the work between two reads of the clock: at about 60 ns
// per unit in the worst case measured (a 200-instruction pattern that
// keeps every thread alive), 15 ms.
const checkUnits = 1 << 18

// NewBudget returns a budget of limit, measured with now (time.Now when
// nil).
func NewBudget(limit time.Duration, now func() time.Time) *Budget {
	if now == nil {
		now = time.Now
	}
	return &Budget{limit: limit, now: now}
}

// Exhausted reports whether the time ran out.
func (b *Budget) Exhausted() bool { return b != nil && b.out }

// Spent returns the matching time of the sessions that ended.
func (b *Budget) Spent() time.Duration {
	if b == nil {
		return 0
	}
	return b.spent
}

// begin starts a session.
func (b *Budget) begin() {
	if b != nil && !b.out {
		b.t0 = b.now()
	}
}

// end ends a session.
func (b *Budget) end() {
	if b != nil && !b.t0.IsZero() {
		b.spent += b.now().Sub(b.t0)
		b.t0 = time.Time{}
		if b.spent >= b.limit {
			b.out = true
		}
	}
}

// charge counts units of work about to be done and reports whether they
// may be: false once the time is spent.
func (b *Budget) charge(units int) bool {
	if b == nil {
		return true
	}
	if b.out {
		return false
	}
	b.units += units
	if b.units < checkUnits {
		return true
	}
	b.units = 0
	if !b.t0.IsZero() && b.spent+b.now().Sub(b.t0) >= b.limit {
		b.out = true
	}
	return !b.out
}

// program is a compiled regular expression with what bounded matching
// needs.
type program struct {
	re *regexp.Regexp
	// cont is (?s:.)(re): it continues a search after a match, reading
	// the rune before the resumption point so that \b, ^ and \A judge it
	// as they do in the whole text.
	cont *regexp.Regexp
	size int // instructions of re's program
}

func newProgram(pattern string) (*program, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	cont, err := regexp.Compile(`(?s:.)(` + pattern + `)`)
	if err != nil {
		return nil, err
	}
	size, err := RegexProgramSize(pattern, true)
	if err != nil {
		return nil, err
	}
	return &program{re: re, cont: cont, size: max(size, 1)}, nil
}

// sliceUnits is the most work (bytes × instructions) a pass may do without
// reading the clock: larger passes read the text through a reader that
// charges the budget as it goes.
const sliceUnits = checkUnits

// findAll appends the spans of the leftmost-first, non-overlapping matches
// of p in text to dst, as regexp's FindAllStringIndex finds them. ok is
// false when b ran out before the end: the spans found so far are
// returned.
func (p *program) findAll(text string, b *Budget, dst []span) (out []span, ok bool) {
	if units := len(text) * p.size; units <= sliceUnits || b == nil {
		if !b.charge(units) {
			return dst, false
		}
		for _, m := range p.re.FindAllStringIndex(text, -1) {
			dst = append(dst, span{m[0], m[1]})
		}
		return dst, true
	}
	return p.findAllReader(text, b, dst)
}

// findAllReader is findAll through a budgetReader, the way regexp's
// FindAll iterates: each search starts at the end of the previous match,
// and an empty match right after a match is skipped. regexp reads a
// reader without the literal-prefix skip it uses on strings, so this is
// kept for passes too large to run unchecked.
func (p *program) findAllReader(text string, b *Budget, dst []span) ([]span, bool) {
	r := budgetReader{s: text, b: b, every: max(1, sliceUnits/p.size)}
	r.charge = r.every * p.size
	prevEnd := -1
	for pos := 0; pos <= len(text); {
		var m []int
		base := 0
		if pos == 0 {
			r.i, r.n = 0, 0
			m = p.re.FindReaderIndex(&r)
		} else {
			_, w := utf8.DecodeLastRuneInString(text[:pos])
			base = pos - w
			r.i, r.n = base, 0
			if sm := p.cont.FindReaderSubmatchIndex(&r); sm != nil {
				m = sm[2:4]
			}
		}
		if r.stopped {
			return dst, false
		}
		if m == nil {
			break
		}
		start, end := base+m[0], base+m[1]
		accept := true
		if end == pos {
			// An empty match: the next search starts a rune later.
			if start == prevEnd {
				accept = false
			}
			if pos < len(text) {
				_, w := utf8.DecodeRuneInString(text[pos:])
				pos += w
			} else {
				pos++
			}
		} else {
			pos = end
		}
		prevEnd = end
		if accept {
			dst = append(dst, span{start, end})
		}
	}
	return dst, true
}

// budgetReader reads a string rune by rune for regexp, charging the budget
// every `every` runes; when the budget runs out it reports the end of the
// text and sets stopped.
type budgetReader struct {
	s       string
	i, n    int
	b       *Budget
	every   int
	charge  int
	stopped bool
}

func (r *budgetReader) ReadRune() (rune, int, error) {
	if r.i >= len(r.s) || r.stopped {
		return 0, 0, io.EOF
	}
	if r.n++; r.n >= r.every {
		r.n = 0
		if !r.b.charge(r.charge) {
			r.stopped = true
			return 0, 0, io.EOF
		}
	}
	c := r.s[r.i]
	if c < utf8.RuneSelf {
		r.i++
		return rune(c), 1, nil
	}
	ru, w := utf8.DecodeRuneInString(r.s[r.i:])
	r.i += w
	return ru, w, nil
}
