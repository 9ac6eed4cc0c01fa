// Package canary finds secrets where they must never be: log lines,
// stored rows, traces, answers. Tests plant canary secrets (New, or
// Register for the ones the system generates, such as API tokens), route
// every logger through Logger, and check any other text with Find; Main
// checks, once the tests of a package have run, every line any such
// logger or the default logger received, including the lines written
// after a test ended (by goroutines it left behind).
//
// It is a test helper: its registry of canaries and of the leaks seen is
// one per process on purpose, so that the process-level check sees what
// every test planted and every logger wrote.
package canary

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// publicPrefix is how much of a secret may be shown: a token's display
// prefix is its first 10 characters (CONTRACT §2); a key's last4 is shorter
// than a window.
const (
	publicPrefix = 10
	window       = 8
)

// shapes are secrets found by their shape, planted or not: a Sluice
// token beyond its display prefix, and a bearer credential.
var shapes = []*regexp.Regexp{
	regexp.MustCompile(`sk-sl-[A-Za-z0-9]{8,}`),
	regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}`),
}

// planted is a canary and how much of its start is public.
type planted struct {
	s      string
	public int
}

var reg struct {
	mu      sync.Mutex
	secrets []planted
	leaks   []string // every leak seen in the process, for Main
}

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// New returns a fresh canary secret, prefix followed by 32 random
// characters, and registers it; any 8 of the random characters found in a
// text are a leak (the prefix is not secret).
func New(prefix string) string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	s := prefix + string(b[:])
	plant(s, max(len(prefix), publicPrefix))
	return s
}

// Register plants secrets made elsewhere (tokens, passwords, keys). Each
// must be random past its first 10 characters: any 8 characters of that
// part found in a text are a leak.
func Register(secrets ...string) {
	for _, s := range secrets {
		plant(s, publicPrefix)
	}
}

func plant(s string, public int) {
	if len(s) < public+1 {
		return
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	reg.secrets = append(reg.secrets, planted{s, public})
}

// Find returns a description of each leak in text: a window of a planted
// secret, or a secret's shape. It returns nil when text is clean.
func Find(text string) []string {
	var out []string
	for _, re := range shapes {
		for _, m := range re.FindAllString(text, 3) {
			out = append(out, fmt.Sprintf("a secret shaped %q: %q", re, m))
		}
	}
	reg.mu.Lock()
	secrets := reg.secrets
	reg.mu.Unlock()
	for _, p := range secrets {
		s := p.s
		// Every window that holds at least one secret character.
		for i := max(p.public-window+1, 0); i+window <= len(s); i++ {
			if strings.Contains(text, s[i:i+window]) {
				out = append(out, fmt.Sprintf("%q, 8 characters of the canary %q", s[i:i+window], s))
				break
			}
		}
		if len(s) < window && strings.Contains(text, s) {
			out = append(out, fmt.Sprintf("the canary %q", s))
		}
	}
	return out
}

// Check fails tb for every leak in text; what names the text ("the
// answer", "record 3").
func Check(tb testing.TB, what, text string) {
	tb.Helper()
	for _, l := range Find(text) {
		tb.Errorf("%s leaks %s", what, l)
	}
}

// scanner is an io.Writer that checks every line written to it and
// passes it on.
type scanner struct {
	next io.Writer
	mu   sync.Mutex
	// leaks are the leaking lines this writer saw, until done.
	leaks []string
	done  bool
}

func (w *scanner) Write(p []byte) (int, error) {
	for _, line := range bytes.Split(bytes.TrimRight(p, "\n"), []byte("\n")) {
		found := Find(string(line))
		if len(found) == 0 {
			continue
		}
		report := fmt.Sprintf("log line %s\n\tleaks %s", line, strings.Join(found, "; "))
		reg.mu.Lock()
		reg.leaks = append(reg.leaks, report)
		reg.mu.Unlock()
		w.mu.Lock()
		if !w.done {
			w.leaks = append(w.leaks, report)
		}
		w.mu.Unlock()
	}
	return w.next.Write(p)
}

// Logger returns a logger for the code under test: every record, at every
// level, is formatted as JSON and checked for canaries; tb fails at its
// end for each leaking line. Lines logged after the test ended are left
// to Main.
func Logger(tb testing.TB) *slog.Logger {
	w := &scanner{next: io.Discard}
	tb.Cleanup(func() {
		w.mu.Lock()
		leaks := w.leaks
		w.done = true
		w.mu.Unlock()
		for _, l := range leaks {
			tb.Errorf("%s", l)
		}
	})
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug, AddSource: true}))
}

// Main runs the tests of a package with the process-level check: the
// default logger (and with it the standard log package) writes to stderr
// through the canary check, and once the tests ran, any leak seen by any
// logger of the process fails the run. Call it from TestMain:
//
//	func TestMain(m *testing.M) { canary.Main(m) }
func Main(m *testing.M) {
	os.Exit(Run(m, func() {}))
}

// Run is Main for a TestMain that has more to do: it runs the tests and
// then after, and returns the exit code instead of exiting.
func Run(m *testing.M, after func()) int {
	check := slog.NewJSONHandler(&scanner{next: io.Discard, done: true}, &slog.HandlerOptions{Level: slog.LevelDebug})
	slog.SetDefault(slog.New(tee{check: check, show: slog.NewTextHandler(os.Stderr, nil)}))
	code := m.Run()
	after()
	reg.mu.Lock()
	leaks := reg.leaks
	reg.mu.Unlock()
	if len(leaks) > 0 {
		fmt.Fprintf(os.Stderr, "canary: %d log lines of this test run leak a secret:\n", len(leaks))
		for _, l := range leaks {
			fmt.Fprintln(os.Stderr, l)
		}
		if code == 0 {
			code = 1
		}
	}
	return code
}

// tee sends each record to both handlers: the check sees every level, the
// terminal only what it saw before (Info and above).
type tee struct{ check, show slog.Handler }

func (t tee) Enabled(context.Context, slog.Level) bool { return true }

func (t tee) Handle(ctx context.Context, r slog.Record) error {
	err := t.check.Handle(ctx, r.Clone())
	if t.show.Enabled(ctx, r.Level) {
		err = t.show.Handle(ctx, r)
	}
	return err
}

func (t tee) WithAttrs(as []slog.Attr) slog.Handler {
	return tee{t.check.WithAttrs(as), t.show.WithAttrs(as)}
}

func (t tee) WithGroup(name string) slog.Handler {
	return tee{t.check.WithGroup(name), t.show.WithGroup(name)}
}
