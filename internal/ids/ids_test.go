package ids_test

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/sluicehq/sluice/internal/ids"
)

var secretRE = regexp.MustCompile(`^sk-sl-[0-9A-Za-z]{40}$`)

func TestNewSecretFormat(t *testing.T) {
	for i := range 100 {
		s := ids.NewSecret()
		if !secretRE.MatchString(s) {
			t.Fatalf("draw %d: got %q, want a match of %s", i, s, secretRE)
		}
		if !strings.HasPrefix(s, ids.TokenPrefix) {
			t.Fatalf("draw %d: got %q, want prefix %q", i, s, ids.TokenPrefix)
		}
	}
}

func TestNewSecretUnique(t *testing.T) {
	seen := make(map[string]bool, 1000)
	for range 1000 {
		s := ids.NewSecret()
		if seen[s] {
			t.Fatalf("got %q twice in 1000 draws, want unique secrets", s)
		}
		seen[s] = true
	}
	if got := len(seen); got != 1000 {
		t.Errorf("unique secrets: got %d, want 1000", got)
	}
}

func TestNewSecretAlphabet(t *testing.T) {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	counts := make(map[rune]int)
	const draws = 2000 // 80,000 characters: each of 62 expected ~1290 times
	for range draws {
		for _, c := range strings.TrimPrefix(ids.NewSecret(), ids.TokenPrefix) {
			counts[c]++
		}
	}
	if got := len(counts); got != 62 {
		t.Errorf("distinct characters: got %d, want 62", got)
	}
	for _, c := range alphabet {
		// A uniform draw gives ~1290 ± 36; a modulo bias of the first
		// characters or a missing one shows far outside [900, 1700].
		if n := counts[c]; n < 900 || n > 1700 {
			t.Errorf("character %q: got %d occurrences in %d characters, want about %d", c, n, draws*40, draws*40/62)
		}
	}
}

func TestHash(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"sk-sl-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcd", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			want := tt.want
			if want == "" {
				sum := sha256.Sum256([]byte(tt.in))
				want = hex.EncodeToString(sum[:])
			}
			if got := ids.Hash(tt.in); got != want {
				t.Errorf("Hash(%q): got %s, want %s", tt.in, got, want)
			}
		})
	}
	s := ids.NewSecret()
	if h := ids.Hash(s); len(h) != 64 || strings.Contains(h, s) {
		t.Errorf("Hash(secret): got %q, want 64 hex characters", h)
	}
}

func TestDisplay(t *testing.T) {
	tests := []struct {
		in         string
		wantPrefix string
		wantLast4  string
	}{
		{"sk-sl-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcd", "sk-sl-0123", "abcd"},
		{"short", "short", "hort"},
		{"abc", "abc", "abc"},
		{"", "", ""},
		{"0123456789", "0123456789", "6789"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, l := ids.Display(tt.in)
			if diff := cmp.Diff([2]string{tt.wantPrefix, tt.wantLast4}, [2]string{p, l}); diff != "" {
				t.Errorf("Display(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
	t.Run("new secret", func(t *testing.T) {
		s := ids.NewSecret()
		p, l := ids.Display(s)
		if len(p) != 10 || p != s[:10] {
			t.Errorf("prefix: got %q, want %q", p, s[:10])
		}
		if l != s[len(s)-4:] {
			t.Errorf("last4: got %q, want %q", l, s[len(s)-4:])
		}
	})
}

func TestNew(t *testing.T) {
	idRE := regexp.MustCompile(`^([a-z]+)_[0-9a-z]{26}$`)
	for _, prefix := range []string{"gw", "usr", "tok", "rule"} {
		t.Run(prefix, func(t *testing.T) {
			id := ids.New(prefix)
			m := idRE.FindStringSubmatch(id)
			if m == nil {
				t.Fatalf("New(%q): got %q, want a match of %s", prefix, id, idRE)
			}
			if m[1] != prefix {
				t.Errorf("New(%q): got prefix %q, want %q", prefix, m[1], prefix)
			}
			if id != strings.ToLower(id) {
				t.Errorf("New(%q): got %q, want lower case", prefix, id)
			}
		})
	}
	t.Run("time-ordered", func(t *testing.T) {
		prev := ids.New("gw")
		for range 10_000 {
			next := ids.New("gw")
			if !(prev < next) {
				t.Fatalf("consecutive ids: got %q then %q, want ascending", prev, next)
			}
			prev = next
		}
	})
}

func TestUUIDv7(t *testing.T) {
	prev := ids.UUIDv7()
	for range 1000 {
		s := ids.UUIDv7()
		u, err := uuid.Parse(s)
		if err != nil {
			t.Fatalf("UUIDv7: got %q, not a UUID: %v", s, err)
		}
		if u.Version() != 7 {
			t.Errorf("version: got %d, want 7", u.Version())
		}
		if !(prev < s) {
			t.Fatalf("consecutive UUIDs: got %q then %q, want ascending", prev, s)
		}
		prev = s
	}
}
