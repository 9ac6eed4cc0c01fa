package providertest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPieces(t *testing.T) {
	for _, tt := range []struct {
		s    string
		k    int
		want []string
	}{
		{"abcdef", 3, []string{"ab", "cd", "ef"}},
		{"héllo", 2, []string{"hé", "llo"}},
		{"ab", 3, []string{"", "a", "b"}},
	} {
		var got []string
		pieces(tt.s, tt.k, func(p string) { got = append(got, p) })
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("pieces(%q, %d) (-want +got):\n%s", tt.s, tt.k, diff)
		}
	}
}
