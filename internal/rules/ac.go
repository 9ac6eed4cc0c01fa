package rules

import (
	"slices"
	"strings"
)

// An automaton finds every occurrence of a set of keywords in one pass
// over a text (Aho–Corasick), whatever the number of keywords: a gateway
// may have 200 rules of 100 keywords each, which as separate searches
// would be 20,000 passes over every text.
//
// The trie holds at most acMaxDepth bytes of each keyword, which bounds
// its size at 32 nodes per keyword; a longer keyword is found by its
// first acMaxDepth bytes and then compared whole.
type automaton struct {
	// Node n's edges are edgeByte/edgeTo[edgeStart[n]:edgeStart[n+1]],
	// sorted by byte. Node 0 is the root, whose transitions are also in
	// the dense root table.
	edgeStart []int32
	edgeByte  []byte
	edgeTo    []int32
	root      [256]int32
	fail      []int32
	// dict is the nearest node on the fail chain that ends a keyword, or
	// -1; depth is the length of the node's string.
	dict  []int32
	depth []int32
	// The keywords ending at node n are entries[outStart[n]:outStart[n+1]].
	outStart []int32
	entries  []acEntry
}

// acEntry is one keyword of one rule.
type acEntry struct {
	rule int32  // index of the rule in its plan
	kw   string // the folded keyword
}

// acMaxDepth is the most bytes of a keyword the trie holds.
const acMaxDepth = 32

// newAutomaton builds the automaton of entries (keywords already folded,
// none empty).
func newAutomaton(entries []acEntry) *automaton {
	// Build the trie with a map of (node, byte) → child.
	type key struct {
		node int32
		c    byte
	}
	child := map[key]int32{}
	depth := []int32{0}
	ends := [][]int32{nil} // entries ending at each node
	for i, e := range entries {
		n := int32(0)
		for j := 0; j < len(e.kw) && j < acMaxDepth; j++ {
			k := key{n, e.kw[j]}
			next, ok := child[k]
			if !ok {
				next = int32(len(depth))
				child[k] = next
				depth = append(depth, depth[n]+1)
				ends = append(ends, nil)
			}
			n = next
		}
		ends[n] = append(ends[n], int32(i))
	}
	nodes := len(depth)
	a := &automaton{depth: depth, fail: make([]int32, nodes), dict: make([]int32, nodes)}
	// Edges grouped by node, sorted by byte.
	edges := make([]key, 0, len(child))
	for k := range child {
		edges = append(edges, k)
	}
	slices.SortFunc(edges, func(x, y key) int {
		if x.node != y.node {
			return int(x.node - y.node)
		}
		return int(x.c) - int(y.c)
	})
	a.edgeStart = make([]int32, nodes+1)
	a.edgeByte = make([]byte, len(edges))
	a.edgeTo = make([]int32, len(edges))
	for i, k := range edges {
		a.edgeStart[k.node+1]++
		a.edgeByte[i] = k.c
		a.edgeTo[i] = child[k]
	}
	for n := 1; n <= nodes; n++ {
		a.edgeStart[n] += a.edgeStart[n-1]
	}
	for i := a.edgeStart[0]; i < a.edgeStart[1]; i++ {
		a.root[a.edgeByte[i]] = a.edgeTo[i]
	}
	// Outputs in node order.
	a.outStart = make([]int32, nodes+1)
	for n, es := range ends {
		a.outStart[n+1] = a.outStart[n] + int32(len(es))
		for _, i := range es {
			a.entries = append(a.entries, entries[i])
		}
	}
	// Fail and dictionary links, breadth first.
	a.dict[0] = -1
	queue := make([]int32, 0, nodes)
	for i := a.edgeStart[0]; i < a.edgeStart[1]; i++ {
		v := a.edgeTo[i]
		a.fail[v], a.dict[v] = 0, -1
		queue = append(queue, v)
	}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for i := a.edgeStart[u]; i < a.edgeStart[u+1]; i++ {
			c, v := a.edgeByte[i], a.edgeTo[i]
			a.fail[v] = a.step(a.fail[u], c)
			f := a.fail[v]
			if a.outStart[f+1] > a.outStart[f] {
				a.dict[v] = f
			} else {
				a.dict[v] = a.dict[f]
			}
			queue = append(queue, v)
		}
	}
	return a
}

// edge returns node n's child by c, or -1.
func (a *automaton) edge(n int32, c byte) int32 {
	lo, hi := a.edgeStart[n], a.edgeStart[n+1]
	for lo < hi {
		m := int32(uint32(lo+hi) >> 1)
		switch b := a.edgeByte[m]; {
		case b == c:
			return a.edgeTo[m]
		case b < c:
			lo = m + 1
		default:
			hi = m
		}
	}
	return -1
}

// step returns the state after reading c in state n.
func (a *automaton) step(n int32, c byte) int32 {
	for n != 0 {
		if t := a.edge(n, c); t >= 0 {
			return t
		}
		n = a.fail[n]
	}
	return a.root[c]
}

// acBlock is how many bytes the automaton reads between two charges to
// the budget.
const acBlock = 4096

// find calls emit for each occurrence of each keyword in hay (overlapping
// ones included), with the byte offsets of the occurrence. It charges the
// bytes read and compared to b and returns false when b runs out before
// the end of hay.
func (a *automaton) find(hay string, b *Budget, emit func(e *acEntry, start, end int)) bool {
	var n int32
	work, charged := 0, 0
	for i := 0; i < len(hay); i++ {
		if i-charged == acBlock {
			if !b.charge(acBlock + work) {
				return false
			}
			work, charged = 0, i
		}
		n = a.step(n, hay[i])
		for o := n; o > 0; o = a.dict[o] {
			d := int(a.depth[o])
			for k := a.outStart[o]; k < a.outStart[o+1]; k++ {
				e := &a.entries[k]
				start := i + 1 - d
				if len(e.kw) > d {
					// Only the first acMaxDepth bytes were matched.
					work += len(e.kw)
					if work >= 1<<16 {
						// Many long keywords share a prefix that
						// recurs in the text: charge as it goes.
						if !b.charge(work) {
							return false
						}
						work = 0
					}
					if !strings.HasPrefix(hay[start:], e.kw) {
						continue
					}
				}
				emit(e, start, start+len(e.kw))
			}
		}
	}
	return b.charge(len(hay) - charged + work)
}
