package rules

// ArgStream applies the rules of one direction to streamed tool-call
// arguments: the fragments of one JSON text, as a model writes them. Each
// string of the JSON is a text of its own, held back and redacted like a
// streamed message (a Stream per string), and re-encoded; each bare token
// (a number, a literal) is scanned whole when it ends, and becomes a JSON
// string when redacted. The structure between them passes at once. So the
// arguments the client assembles stay valid JSON whatever is redacted,
// and match what the same arguments would give unstreamed. It is not safe
// for concurrent use.
type ArgStream struct {
	set       *Set
	dir       string
	budget    *Budget
	state     int
	raw       string  // the start of an escape cut by a chunk boundary
	leaf      *Stream // the current string's stream
	bare      []byte  // the current bare token
	unchecked []*Rule
}

const (
	argOutside = iota
	argString
	argBare
)

// NewArgStream returns a filter of streamed tool-call arguments, whose
// matching is charged to b.
func (s *Set) NewArgStream(dir string, b *Budget) *ArgStream {
	return &ArgStream{set: s, dir: dir, budget: b}
}

// Unchecked returns the rules that did not check all the text sent.
func (a *ArgStream) Unchecked() []*Rule { return a.unchecked }

// Push adds a fragment. It returns what may be sent now, the findings in
// it, and the finding of a block rule when one matched (then nothing is
// to be sent).
func (a *ArgStream) Push(text string) (string, []Finding, *Finding) {
	return a.push(text, false)
}

// Flush returns what is still held at the end of the arguments. A string
// or escape left open by the model stays open.
func (a *ArgStream) Flush() (string, []Finding, *Finding) {
	return a.push("", true)
}

func (a *ArgStream) push(text string, final bool) (string, []Finding, *Finding) {
	var out []byte
	var found []Finding
	take := func(s string, f []Finding, st *Stream) {
		found = append(found, f...)
		for _, r := range st.Unchecked() {
			a.addUnchecked(r)
		}
		out = appendEscaped(out, s)
	}
	s := a.raw + text
	a.raw = ""
	for i := 0; i < len(s); {
		switch a.state {
		case argOutside:
			c := s[i]
			switch {
			case c == '"':
				out = append(out, '"')
				a.state, a.leaf = argString, a.set.NewStream(a.dir, a.budget)
				i++
			case isJSONSpace(c) || isStructural(c):
				out = append(out, c)
				i++
			default:
				a.state = argBare
			}
		case argBare:
			j := i
			for j < len(s) && !isJSONSpace(s[j]) && !isStructural(s[j]) && s[j] != '"' {
				j++
			}
			a.bare = append(a.bare, s[i:j]...)
			i = j
			if j < len(s) || len(a.bare) > maxHold {
				tok, f, blocked := a.scanBare()
				if blocked != nil {
					return "", nil, blocked
				}
				found = append(found, f...)
				out = append(out, tok...)
			}
		case argString:
			dec, n, closed := decodeChars(s[i:], final)
			i += n
			o, f, blocked := a.leaf.Push(dec)
			if blocked != nil {
				return "", nil, blocked
			}
			take(o, f, a.leaf)
			if closed {
				o, f, blocked := a.leaf.Flush()
				if blocked != nil {
					return "", nil, blocked
				}
				take(o, f, a.leaf)
				out = append(out, '"')
				a.state, a.leaf = argOutside, nil
				continue
			}
			if i < len(s) {
				a.raw = s[i:] // an escape cut by the end of the fragment
				i = len(s)
			}
		}
	}
	if final {
		switch a.state {
		case argString:
			o, f, blocked := a.leaf.Flush()
			if blocked != nil {
				return "", nil, blocked
			}
			take(o, f, a.leaf)
		case argBare:
			tok, f, blocked := a.scanBare()
			if blocked != nil {
				return "", nil, blocked
			}
			found = append(found, f...)
			out = append(out, tok...)
		}
		a.state = argOutside
	}
	return string(out), found, nil
}

// scanBare scans the bare token held and returns what to send for it.
func (a *ArgStream) scanBare() (string, []Finding, *Finding) {
	tok := string(a.bare)
	a.bare = a.bare[:0]
	a.state = argOutside
	st := a.set.NewStream(a.dir, a.budget)
	o1, f1, blocked := st.Push(tok)
	if blocked != nil {
		return "", nil, blocked
	}
	o2, f2, blocked := st.Flush()
	if blocked != nil {
		return "", nil, blocked
	}
	for _, r := range st.Unchecked() {
		a.addUnchecked(r)
	}
	if o := o1 + o2; o != tok {
		return string(AppendString(nil, o)), append(f1, f2...), nil
	}
	return tok, append(f1, f2...), nil
}

func (a *ArgStream) addUnchecked(r *Rule) {
	for _, u := range a.unchecked {
		if u == r {
			return
		}
	}
	a.unchecked = append(a.unchecked, r)
}
