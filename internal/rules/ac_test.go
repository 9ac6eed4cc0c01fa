package rules

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// naive finds every occurrence of every keyword, overlapping ones
// included, as "keyword@start".
func naive(hay string, kws []string) []string {
	var out []string
	for _, k := range kws {
		for i := 0; i+len(k) <= len(hay); i++ {
			if hay[i:i+len(k)] == k {
				out = append(out, fmt.Sprintf("%s@%d", k, i))
			}
		}
	}
	slices.Sort(out)
	return out
}

func acFind(kws []string, hay string) []string {
	entries := make([]acEntry, len(kws))
	for i, k := range kws {
		entries[i] = acEntry{rule: int32(i), kw: k}
	}
	var out []string
	newAutomaton(entries).find(hay, nil, func(e *acEntry, start, end int) {
		if hay[start:end] != e.kw {
			out = append(out, "WRONG "+e.kw)
		}
		out = append(out, fmt.Sprintf("%s@%d", e.kw, start))
	})
	slices.Sort(out)
	return out
}

func TestAutomaton(t *testing.T) {
	long := strings.Repeat("x", acMaxDepth) + "-tail"
	tests := []struct {
		kws []string
		hay string
	}{
		{[]string{"he", "she", "his", "hers"}, "ushers and his shed"},
		{[]string{"a", "aa", "aaa"}, "aaaa"},
		{[]string{long, strings.Repeat("x", acMaxDepth) + "-other"}, long + " " + strings.Repeat("x", acMaxDepth+3) + "-tail"},
		{[]string{"é", "日本"}, "café 日本語"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(naive(tt.hay, tt.kws), acFind(tt.kws, tt.hay)); diff != "" {
			t.Errorf("%q in %q (-naive +automaton):\n%s", tt.kws, tt.hay, diff)
		}
	}
}

// A keyword set of the largest size a gateway may hold (200 rules × 100
// keywords) is one pass.
func TestAutomatonManyKeywords(t *testing.T) {
	var rules []Rule
	for r := range 200 {
		var kws []string
		for k := range 100 {
			kws = append(kws, fmt.Sprintf("word%03d-%03d", r, k))
		}
		rules = append(rules, Rule{ID: fmt.Sprint(r), Direction: Both, Kind: KindKeyword, Patterns: kws, Action: Flag})
	}
	s := mustCompile(t, rules...)
	hits := s.Scan(Request, []string{"text with WORD017-042 and word199-099 in it"}, nil).Hits[0]
	if len(hits) != 2 || hits[0].Rule.ID != "17" || hits[1].Rule.ID != "199" {
		t.Errorf("hits %+v", hits)
	}
}

// FuzzAutomaton compares the automaton with a naive search.
func FuzzAutomaton(f *testing.F) {
	f.Add("he,she,his,hers", "ushers")
	f.Add("a,aa,"+strings.Repeat("b", 40), strings.Repeat("b", 45)+"aaa")
	f.Fuzz(func(t *testing.T, list, hay string) {
		var kws []string
		for _, k := range strings.Split(list, ",") {
			if k != "" && !slices.Contains(kws, k) {
				kws = append(kws, k)
			}
		}
		if len(kws) == 0 || len(hay) > 2048 {
			return
		}
		if diff := cmp.Diff(naive(hay, kws), acFind(kws, hay)); diff != "" {
			t.Fatalf("%q in %q (-naive +automaton):\n%s", kws, hay, diff)
		}
	})
}
