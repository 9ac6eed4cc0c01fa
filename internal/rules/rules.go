// Package rules is the matcher of content rules: keyword lists, RE2
// regular expressions and built-in PII detectors, compiled once and run
// against the texts of requests and responses.
//
// Patterns are data. A keyword is a literal string; a regex is compiled by
// Go's regexp package (RE2 syntax), which has no backreferences or
// lookaround and runs in time linear in the text it scans, so no pattern
// can make a scan take exponential time. Nothing in a pattern is ever
// evaluated: "{{7*7}}" or "${jndi:ldap://x}" match exactly those
// characters.
//
// Work is bounded twice: each message has at most MaxScanBytes of text
// scanned, and each request has a Budget of matching time. A rule whose
// scan did not finish is reported unchecked, and the caller applies its
// fail mode.
package rules

import (
	"errors"
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"
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
// a stream) the rules scan. A message with more text has every rule of its
// direction unchecked beyond that point.
const MaxScanBytes = 1 << 20

// StreamWindow is the least hold-back window of a stream: how many bytes
// of streamed text are kept back so that a match cut by a chunk boundary
// is still found whole. A set with long keywords holds back more (see
// Set.Window); a regex match longer than the window may be missed across
// chunk boundaries.
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
	plans  [2]*plan // by direction: request, response
	window int
}

type compiled struct {
	Rule
	// progs are the rule's regex patterns, as one alternation when it
	// compiles, else one program per pattern.
	progs []*program
}

// severity orders actions: the rules that block are checked first, then
// those that redact, then those that flag, so that a request whose budget
// runs out has had its strictest rules checked.
func severity(action string) int {
	switch action {
	case Block:
		return 0
	case Redact:
		return 1
	}
	return 2
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
		if c.Kind == KindKeyword {
			for _, k := range c.Patterns {
				// Folding can make a match's original text longer than the
				// keyword (full-width forms, zero-width characters).
				s.window = max(s.window, 4*len(k))
			}
		}
		s.rules = append(s.rules, c)
	}
	s.plans[0] = newPlan(s.rules, Request)
	s.plans[1] = newPlan(s.rules, Response)
	return s, errors.Join(errs...)
}

// MaxRegexInstructions caps the compiled program of a regex pattern that
// the admin API accepts. Go's regexp runs in time linear in the text, but
// the factor is the program's size: a pattern of n instructions costs up to
// about n × 20–60 ns per byte scanned (`\w{500}z` over 1 MiB of letters
// takes 17 s). 256 bounds any one pattern at a few seconds per MiB of text
// in the worst case, which the request's Budget then cuts short. Long word
// lists belong in a keyword rule, which has no such cost.
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
			if p == "" || foldKeyword(p, !r.CaseSensitive) == "" {
				return nil, errors.New("empty keyword")
			}
		}
	case KindRegex:
		flags := "(?i)"
		if r.CaseSensitive {
			flags = ""
		}
		alts := make([]string, len(r.Patterns))
		for i, p := range r.Patterns {
			prog, err := newProgram(flags + p)
			if err != nil {
				return nil, fmt.Errorf("pattern %d: %w", i, err)
			}
			c.progs = append(c.progs, prog)
			alts[i] = "(?:" + p + ")"
		}
		if len(alts) > 1 {
			// One pass for all the patterns of the rule. Should the
			// alternation not compile (too large), each pattern has its
			// own pass.
			if prog, err := newProgram(flags + strings.Join(alts, "|")); err == nil {
				c.progs = []*program{prog}
			}
		}
	case KindPII:
		for _, k := range r.PII {
			if _, ok := builtin[k]; !ok {
				return nil, fmt.Errorf("unknown pii kind %q", k)
			}
		}
	default:
		return nil, fmt.Errorf("unknown kind %q", r.Kind)
	}
	return c, nil
}

// plan is how the rules of one direction run: a list of tasks, each one
// pass over a text, in the order of the strictest action they serve.
type plan struct {
	rules []*compiled // of this direction, in creation order
	tasks []task
	// fold and lower are whether some task needs the text folded, and
	// folded and lower-cased.
	fold, lower bool
}

// A task is one pass over a text: a keyword automaton, a PII detector
// shared by the rules that name it, or the program of one regex rule.
type task struct {
	rules    []int // indexes in plan.rules of the rules it serves
	severity int
	ac       *automaton
	acLower  bool // ac runs over the folded, lower-cased text
	det      *detector
	prog     *program
}

func newPlan(all []*compiled, dir string) *plan {
	p := &plan{}
	for _, r := range all {
		if r.applies(dir) {
			p.rules = append(p.rules, r)
		}
	}
	if len(p.rules) == 0 {
		return p
	}
	var exact, lower []acEntry
	var exactRules, lowerRules []int
	dets := map[string]*task{}
	var detOrder []string
	for i, r := range p.rules {
		sev := severity(r.Action)
		switch r.Kind {
		case KindKeyword:
			for _, k := range r.Patterns {
				e := acEntry{rule: int32(i), kw: foldKeyword(k, !r.CaseSensitive)}
				if r.CaseSensitive {
					exact = append(exact, e)
				} else {
					lower = append(lower, e)
				}
			}
			if r.CaseSensitive {
				exactRules = append(exactRules, i)
			} else {
				lowerRules = append(lowerRules, i)
			}
		case KindRegex:
			for _, prog := range r.progs {
				p.tasks = append(p.tasks, task{rules: []int{i}, severity: sev, prog: prog})
			}
		case KindPII:
			for _, k := range r.PII {
				t, ok := dets[k]
				if !ok {
					t = &task{severity: sev, det: builtin[k]}
					dets[k] = t
					detOrder = append(detOrder, k)
				}
				if !slices.Contains(t.rules, i) {
					t.rules = append(t.rules, i)
				}
				t.severity = min(t.severity, sev)
			}
			p.fold = true
		}
	}
	addAC := func(entries []acEntry, rules []int, lowered bool) {
		if len(entries) == 0 {
			return
		}
		sev := 2
		for _, i := range rules {
			sev = min(sev, severity(p.rules[i].Action))
		}
		p.tasks = append(p.tasks, task{rules: rules, severity: sev, ac: newAutomaton(entries), acLower: lowered})
		if lowered {
			p.lower = true
		} else {
			p.fold = true
		}
	}
	addAC(exact, exactRules, false)
	addAC(lower, lowerRules, true)
	for _, k := range detOrder {
		p.tasks = append(p.tasks, *dets[k])
	}
	// Keyword passes are the cheapest: first among equals.
	slices.SortStableFunc(p.tasks, func(a, b task) int {
		if a.severity != b.severity {
			return a.severity - b.severity
		}
		return cost(a) - cost(b)
	})
	return p
}

func cost(t task) int {
	switch {
	case t.ac != nil:
		return 0
	case t.det != nil:
		return 1
	}
	return 2
}

// Len returns the number of compiled rules.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.rules)
}

func (s *Set) plan(dir string) *plan {
	if s == nil {
		return nil
	}
	if dir == Request {
		return s.plans[0]
	}
	return s.plans[1]
}

// Applies reports whether some rule applies to direction dir (Request or
// Response).
func (s *Set) Applies(dir string) bool {
	p := s.plan(dir)
	return p != nil && len(p.rules) > 0
}

// HasAction reports whether some rule of direction dir has the action.
func (s *Set) HasAction(dir, action string) bool {
	p := s.plan(dir)
	if p == nil {
		return false
	}
	for _, r := range p.rules {
		if r.Action == action {
			return true
		}
	}
	return false
}

// Window returns the hold-back window of a stream for this set: at least
// StreamWindow bytes, more when a keyword is long.
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

// Result is what a scan found.
type Result struct {
	// Hits are the hits in each text, ordered by start, then longest
	// first. Overlapping matches of one rule are one hit.
	Hits [][]Hit
	// Unchecked are the rules whose scan did not finish: the budget ran
	// out, or the message has more than MaxScanBytes of text. What they
	// found until then is in Hits.
	Unchecked []*Rule
	// Truncated is true when the message has more than MaxScanBytes of
	// text.
	Truncated bool
}

// Scan scans the texts of one message in direction dir within budget b
// (nil: unlimited). Texts past MaxScanBytes in all are not scanned.
func (s *Set) Scan(dir string, texts []string, b *Budget) *Result {
	res := &Result{Hits: make([][]Hit, len(texts))}
	p := s.plan(dir)
	if p == nil || len(p.rules) == 0 {
		return res
	}
	b.begin()
	defer b.end()
	total := 0
	for i, t := range texts {
		if left := MaxScanBytes - total; len(t) > left {
			cut := max(left, 0)
			for cut > 0 && !utf8.RuneStart(t[cut]) {
				cut--
			}
			texts = append(texts[:i:i], t[:cut])
			res.Truncated = true
			break
		}
		total += len(t)
	}
	unchecked := p.run(texts, make([]int, len(texts)), b, res.Hits)
	if res.Truncated {
		unchecked = p.rules
	}
	for _, r := range unchecked {
		res.Unchecked = append(res.Unchecked, &r.Rule)
	}
	return res
}

// scratch is a text with its folded forms, made when a task needs them.
type scratch struct {
	text              string
	folded, lowered   string
	foldMap, lowerMap *foldMap
	hasFold, hasLower bool
	spans             []span
}

func (sc *scratch) fold() (string, *foldMap) {
	if !sc.hasFold {
		sc.folded, sc.foldMap = foldText(sc.text, false)
		sc.hasFold = true
	}
	return sc.folded, sc.foldMap
}

func (sc *scratch) lowerOrFold(lower bool) (string, *foldMap) {
	if !lower {
		return sc.fold()
	}
	if !sc.hasLower {
		sc.lowered, sc.lowerMap = foldText(sc.text, true)
		sc.hasLower = true
	}
	return sc.lowered, sc.lowerMap
}

// run runs the plan's tasks over texts, task by task, adding to hits[i]
// the hits in texts[i] that end after from[i]. It returns the rules
// left unchecked when b ran out.
func (p *plan) run(texts []string, from []int, b *Budget, hits [][]Hit) []*compiled {
	scr := make([]scratch, len(texts))
	for i, t := range texts {
		scr[i].text = t
	}
	for ti := range p.tasks {
		t := &p.tasks[ti]
		for i := range texts {
			if len(texts[i]) == 0 {
				continue
			}
			if !p.runTask(t, &scr[i], from[i], b, &hits[i]) {
				return p.uncheckedFrom(ti)
			}
		}
	}
	for i := range hits {
		hits[i] = mergeHits(hits[i])
	}
	return nil
}

// uncheckedFrom returns the rules served by tasks[ti:], each once.
func (p *plan) uncheckedFrom(ti int) []*compiled {
	seen := make([]bool, len(p.rules))
	var out []*compiled
	for _, t := range p.tasks[ti:] {
		for _, i := range t.rules {
			if !seen[i] {
				seen[i] = true
				out = append(out, p.rules[i])
			}
		}
	}
	return out
}

// runTask runs one task over one text and appends its hits.
func (p *plan) runTask(t *task, sc *scratch, from int, b *Budget, hits *[]Hit) bool {
	if b.Exhausted() {
		return false
	}
	add := func(ri int, kind string, start, end int) {
		if end > start && start >= from {
			*hits = append(*hits, Hit{Rule: &p.rules[ri].Rule, Kind: kind, Start: start, End: end})
		}
	}
	switch {
	case t.ac != nil:
		hay, m := sc.lowerOrFold(t.acLower)
		return t.ac.find(hay, b, func(e *acEntry, start, end int) {
			add(int(e.rule), KindKeyword, m.start(start), m.end(end))
		})
	case t.det != nil:
		hay, m := sc.fold()
		if !b.charge(len(hay)) { // the prefilter's pass
			return false
		}
		var ok bool
		sc.spans, ok = t.det.find(sc.spans[:0], hay, b)
		for _, s := range sc.spans {
			for _, ri := range t.rules {
				add(ri, t.det.kind, m.start(s.start), m.end(s.end))
			}
		}
		return ok
	default:
		var ok bool
		sc.spans, ok = t.prog.findAll(sc.text, b, sc.spans[:0])
		for _, s := range sc.spans {
			add(t.rules[0], KindRegex, s.start, s.end)
		}
		return ok
	}
}

// mergeHits sorts hits by start, longest first, after joining the
// overlapping hits of each rule into one.
func mergeHits(hits []Hit) []Hit {
	if len(hits) < 2 {
		return hits
	}
	sortHits(hits)
	last := map[*Rule]int{} // index in out of each rule's last hit
	out := hits[:0]
	merged := false
	for _, h := range hits {
		if i, ok := last[h.Rule]; ok && h.Start < out[i].End {
			if h.End > out[i].End {
				out[i].End, merged = h.End, true
			}
			continue
		}
		last[h.Rule] = len(out)
		out = append(out, h)
	}
	if merged {
		sortHits(out)
	}
	return out
}

// sortHits orders hits by start, then longest first.
func sortHits(hits []Hit) {
	slices.SortStableFunc(hits, func(a, b Hit) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return b.End - a.End
	})
}

// sortSpans orders spans by start, then longest first.
func sortSpans(s []span) {
	slices.SortFunc(s, func(a, b span) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end
	})
}

// Placeholder is what a redacted match becomes: "[REDACTED:<kind>]".
func Placeholder(kind string) string { return "[REDACTED:" + kind + "]" }

// Apply returns text with the hits that keep is true for replaced by their
// placeholders. Overlapping hits are replaced as one, under the kind of
// the first (the earliest, then the longest) of them, and cover the union
// of their text. It returns text itself when nothing is replaced.
func Apply(text string, hits []Hit, keep func(Hit) bool) string {
	var b strings.Builder
	last, open := 0, false
	for _, h := range hits {
		if !keep(h) {
			continue
		}
		if open && h.Start < last {
			last = max(last, h.End) // joins the placeholder already written
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(text))
		}
		b.WriteString(text[last:h.Start])
		b.WriteString(Placeholder(h.Kind))
		last, open = h.End, true
	}
	if !open {
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
