package mockprovider

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAppendString(t *testing.T) {
	for _, s := range []string{"plain", `q"uote\back`, "line\nbreak\ttab\r", "\x00\x1f", "héllo 世界 🙂", "bad \xff utf8", "<html>&"} {
		got := appendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Errorf("appendString(%q) = %s: invalid JSON: %v", s, got, err)
			continue
		}
		want, _ := json.Marshal(s)
		var wantBack string
		_ = json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Errorf("appendString(%q) decodes to %q, want %q", s, back, wantBack)
		}
	}
}

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
