package canary

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	key := New("sk-test-canary-")
	tok := "sk-sl-" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd"
	Register(tok)
	for _, tc := range []struct {
		text string
		leak bool
	}{
		{"nothing here", false},
		{"key " + key, true},
		{"partial " + key[len(key)-9:len(key)-1], true},
		{"the prefix sk-test-canary- alone", false},
		{"token prefix " + tok[:10] + "… last4 " + tok[len(tok)-4:], false},
		{"token " + tok[:18], true},
		{`{"msg":"bad","auth":"Bearer abcdefgh12345"}`, true},
		{`must be "Bearer <token>"`, false},
		{"Bearer [REDACTED]", false},
		{"an unplanted token sk-sl-ZZZZZZZZZZZZZZZZ", true},
	} {
		if got := len(Find(tc.text)) > 0; got != tc.leak {
			t.Errorf("Find(%q) found a leak: %v, want %v (%v)", tc.text, got, tc.leak, Find(tc.text))
		}
	}
}

// TestScanner checks the writer behind Logger and Main: a leaking line is
// reported to its logger's test while it runs, and to the process always.
func TestScanner(t *testing.T) {
	key := New("canary-key-")
	var out bytes.Buffer
	w := &scanner{next: &out}
	log := slog.New(slog.NewJSONHandler(w, nil))
	log.Info("fine", "n", 1)
	log.Error("upstream refused", "key", key)
	if len(w.leaks) != 1 || !strings.Contains(w.leaks[0], "upstream refused") {
		t.Fatalf("leaks %q, want the one line", w.leaks)
	}
	if !strings.Contains(out.String(), `"msg":"fine"`) {
		t.Errorf("lines are not passed on: %q", out.String())
	}
	w.done = true
	log.Error("after the test", "key", key)
	if len(w.leaks) != 1 {
		t.Errorf("a line after the test was reported to the test")
	}
	reg.mu.Lock()
	n := 0
	for _, l := range reg.leaks {
		if strings.Contains(l, key) {
			n++
		}
	}
	// These leaks were planted: take them out of the process's list.
	kept := reg.leaks[:0]
	for _, l := range reg.leaks {
		if !strings.Contains(l, key) {
			kept = append(kept, l)
		}
	}
	reg.leaks = kept
	reg.mu.Unlock()
	if n != 2 {
		t.Errorf("the process saw %d leaking lines, want 2", n)
	}
}
