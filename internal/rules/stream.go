package rules

import "unicode/utf8"

// contextBytes is how much already-sent text a stream keeps in front of
// the text it scans, so that a word boundary (\b) at the join is seen
// right.
const contextBytes = 16

// maxHold bounds what a stream holds back to keep a growing match whole
// (a regex like "a+" over a long run of a's): past it, the text goes out
// with what has matched so far redacted.
const maxHold = 64 << 10

// Stream applies the rules of one direction to one streamed text (one
// field of one choice of a completion), chunk by chunk. It holds back the
// last Window() bytes, so that a match cut by a chunk boundary is found
// whole before any of it is sent. It is not safe for concurrent use.
type Stream struct {
	set       *Set
	plan      *plan
	budget    *Budget
	window    int
	ctx       string // the last bytes sent, scan context only
	pending   string // received, not yet sent
	total     int    // bytes received, against MaxScanBytes
	truncated bool
	unchecked []*Rule
	hits      [][]Hit
}

// NewStream returns a stream filter of the rules of direction dir, whose
// matching is charged to b (nil: unlimited). Several streams of one
// request share its budget.
func (s *Set) NewStream(dir string, b *Budget) *Stream {
	return &Stream{set: s, plan: s.plan(dir), budget: b, window: s.Window(), hits: make([][]Hit, 1)}
}

// Truncated reports whether the stream passed MaxScanBytes: from then on
// its text goes out unscanned.
func (st *Stream) Truncated() bool { return st.truncated }

// Unchecked returns the rules that did not check all the text sent: the
// budget ran out, or the stream passed MaxScanBytes. The caller applies
// their fail mode.
func (st *Stream) Unchecked() []*Rule { return st.unchecked }

// Push adds text to the stream. It returns the text that may be sent now,
// with the matches of redact rules replaced, and the findings in it. When
// a block rule matched anywhere in the text seen, blocked is that finding
// and nothing is returned to send.
func (st *Stream) Push(text string) (out string, found []Finding, blocked *Finding) {
	if st.truncated {
		return text, nil, nil
	}
	st.total += len(text)
	if st.total > MaxScanBytes {
		// What is held is sent as scanned so far; the rest goes unscanned.
		out, found, blocked = st.flush()
		st.truncated = true
		st.unchecked = nil
		for _, r := range st.plan.rules {
			st.unchecked = append(st.unchecked, &r.Rule)
		}
		if blocked != nil {
			return "", nil, blocked
		}
		return out + text, found, nil
	}
	return st.push(st.pending+text, false)
}

// Flush returns everything still held, at the clean end of the stream.
func (st *Stream) Flush() (out string, found []Finding, blocked *Finding) {
	if st.truncated {
		return "", nil, nil
	}
	return st.flush()
}

func (st *Stream) flush() (string, []Finding, *Finding) { return st.push(st.pending, true) }

// push scans ctx + text and sends what lies before the cut: everything at
// the end of the stream, else all but the window, never cutting a match.
func (st *Stream) push(text string, final bool) (string, []Finding, *Finding) {
	from := len(st.ctx)
	buf := st.ctx + text
	st.hits[0] = st.hits[0][:0]
	if st.plan != nil && len(st.plan.rules) > 0 && len(text) > 0 {
		st.budget.begin()
		for _, r := range st.plan.run([]string{buf}, []int{from}, st.budget, st.hits) {
			st.addUnchecked(&r.Rule)
		}
		st.budget.end()
	}
	hits := st.hits[0]
	for _, h := range hits {
		if h.Rule.Action == Block {
			f := Finding{Rule: h.Rule, Kind: h.Kind, Excerpt: Excerpt(buf, h, hits)}
			st.pending = ""
			return "", nil, &f
		}
	}
	cut := len(buf)
	if !final {
		cut = max(from, len(buf)-st.window)
		// A match across the cut is held back whole. Cuts only move
		// back, so this ends.
		for moved := true; moved; {
			moved = false
			for _, h := range hits {
				if h.Start < cut && h.End > cut {
					cut, moved = h.Start, true
				}
			}
		}
		if len(buf)-cut > maxHold {
			cut = len(buf)
		}
		for cut > from && cut < len(buf) && !utf8.RuneStart(buf[cut]) {
			cut--
		}
	}
	var sent []Hit
	for _, h := range hits {
		if h.End <= cut {
			sent = append(sent, h)
		}
	}
	var found []Finding
	if len(sent) > 0 {
		x := newExcerpter(buf, hits)
		found = make([]Finding, len(sent))
		for i, h := range sent {
			found[i] = Finding{Rule: h.Rule, Kind: h.Kind}
			if i < maxExcerpts {
				found[i].Excerpt = x.excerpt(h)
			}
		}
	}
	out := buf[from:cut]
	if len(sent) > 0 {
		shifted := make([]Hit, len(sent))
		for i, h := range sent {
			h.Start, h.End = h.Start-from, h.End-from
			shifted[i] = h
		}
		out = Redacted(out, shifted)
	}
	st.pending = buf[cut:]
	lo := max(0, cut-contextBytes)
	for lo < cut && !utf8.RuneStart(buf[lo]) {
		lo++
	}
	st.ctx = buf[lo:cut]
	return out, found, nil
}

func (st *Stream) addUnchecked(r *Rule) {
	for _, u := range st.unchecked {
		if u == r {
			return
		}
	}
	st.unchecked = append(st.unchecked, r)
}
