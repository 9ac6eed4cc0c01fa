package tokenize

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The token ids are OpenAI's (tiktoken's own test vectors and the OpenAI
// cookbook): they show that the embedded files are the real encodings.
func TestEncodingsAreOpenAIs(t *testing.T) {
	t.Parallel()
	c := New()
	for _, tc := range []struct {
		enc  *encoding
		text string
		want []int
	}{
		{&c.cl100k, "hello world", []int{15339, 1917}},
		{&c.cl100k, "tiktoken is great!", []int{83, 1609, 5963, 374, 2294, 0}},
		{&c.o200k, "hello world", []int{24912, 2375}},
		{&c.o200k, "tiktoken is great!", []int{83, 8251, 2488, 382, 2212, 0}},
	} {
		if diff := cmp.Diff(tc.want, tc.enc.get().EncodeOrdinary(tc.text)); diff != "" {
			t.Errorf("%s %q (-want +got):\n%s", tc.enc.name, tc.text, diff)
		}
	}
}

func TestCount(t *testing.T) {
	t.Parallel()
	c := New()
	for _, tc := range []struct {
		model, text string
		want        int
	}{
		{"gpt-4o-mini", "hello world", 2},
		{"gpt-4", "hello world", 2},
		{"claude-sonnet-4-5", "hello world", 2},
		{"gpt-4o", "tiktoken is great!", 6},
		{"gpt-3.5-turbo", "tiktoken is great!", 6},
		{"gpt-4o", "Hello, 世界! 🚀", 6},
		{"gpt-4", "Hello, 世界! 🚀", 10},
		// A special token in user text is ordinary text, not a panic.
		{"gpt-4", "<|endoftext|>", 7},
		{"gpt-4o", "", 0},
	} {
		if got := c.Count(tc.model, tc.text); got != tc.want {
			t.Errorf("Count(%q, %q) = %d, want %d", tc.model, tc.text, got, tc.want)
		}
	}
}

func TestEncoding(t *testing.T) {
	t.Parallel()
	for model, want := range map[string]string{
		"gpt-4o":                      O200kBase,
		"gpt-4o-mini-2024-07-18":      O200kBase,
		"openai/gpt-4.1-nano":         O200kBase,
		"gpt-4.5-preview":             O200kBase,
		"gpt-5":                       O200kBase,
		"GPT-5-mini":                  O200kBase,
		"chatgpt-4o-latest":           O200kBase,
		"o1":                          O200kBase,
		"o3-mini":                     O200kBase,
		"o4-mini-2025-04-16":          O200kBase,
		"openai/gpt-oss-120b":         O200kBase,
		"gpt-4":                       Cl100kBase,
		"gpt-4-turbo":                 Cl100kBase,
		"gpt-3.5-turbo":               Cl100kBase,
		"text-embedding-3-small":      Cl100kBase,
		"claude-sonnet-4-5":           Cl100kBase,
		"gemini-2.5-flash":            Cl100kBase,
		"llama-3.3-70b-versatile":     Cl100kBase,
		"ollama":                      Cl100kBase,
		"anthropic.claude-3-5-sonnet": Cl100kBase,
		"":                            Cl100kBase,
	} {
		if got := Encoding(model); got != want {
			t.Errorf("Encoding(%q) = %s, want %s", model, got, want)
		}
	}
}

// TestCountBounded: text past MaxBytes is not encoded but extrapolated, so
// three times the text counts three times the tokens of its head.
func TestCountBounded(t *testing.T) {
	t.Parallel()
	c := New()
	unit := "hello world "
	head := strings.Repeat(unit, MaxBytes/len(unit))
	n := c.Count("gpt-4", head)
	// "hello", " world", " hello", …, " world", " ".
	if want := 2*len(head)/len(unit) + 1; n != want {
		t.Fatalf("Count of %d bytes = %d, want %d", len(head), n, want)
	}
	long := strings.Repeat(head, 3)
	got := c.Count("gpt-4", long)
	if want := 3 * n; got < want-want/100 || got > want+want/100 {
		t.Errorf("Count of %d bytes = %d, want about %d", len(long), got, want)
	}
}

func TestBoundedCutsAtRune(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("a", MaxBytes-1) + "é" + "abc"
	if got := bounded(text); got != text[:MaxBytes-1] {
		t.Errorf("bounded kept %d bytes, want %d: the cut must not split the é", len(got), MaxBytes-1)
	}
	if short := "hello"; bounded(short) != short {
		t.Errorf("bounded(%q) = %q", short, bounded(short))
	}
}

// TestCountSegments: counting in segments gives exactly the encoder's
// count on ordinary text, and bounds the work on long runs of one class
// of characters, which the BPE merge handles in quadratic time.
func TestCountSegments(t *testing.T) {
	t.Parallel()
	c := New()
	var b strings.Builder
	for i := range 200 {
		b.WriteString("Line " + strings.Repeat("x", i%7) + ":  the quick, brown fox's jump\n\n\tover 12345 dogs… ")
	}
	prose := b.String()
	for _, model := range []string{"gpt-4o", "gpt-4"} {
		enc := &c.cl100k
		if Encoding(model) == O200kBase {
			enc = &c.o200k
		}
		if got, want := c.Count(model, prose), len(enc.get().EncodeOrdinary(prose)); got != want {
			t.Errorf("%s: Count of %d bytes of prose = %d, want the encoder's %d", model, len(prose), got, want)
		}
	}
	for _, run := range []string{"a", " ", "-", "é"} {
		text := strings.Repeat(run, 64<<10)
		start := time.Now()
		n := c.Count("gpt-4o", text)
		if d := time.Since(start); d > 10*time.Second || n < 1 || n > len(text) {
			t.Errorf("Count of 64 KiB of %q = %d in %v", run, n, d)
		}
	}
}

func TestCountConcurrent(t *testing.T) {
	t.Parallel()
	c := New()
	var wg sync.WaitGroup
	got := make([]int, 8)
	for i := range got {
		wg.Go(func() { got[i] = c.Count("gpt-4o", "hello world") })
	}
	wg.Wait()
	for i, n := range got {
		if n != 2 {
			t.Errorf("goroutine %d counted %d, want 2", i, n)
		}
	}
}

// TestCountCache: counts are kept and answered from the cache, per
// encoding, for Count and CountBytes alike; what the cache answers is
// what the encoder counts.
func TestCountCache(t *testing.T) {
	t.Parallel()
	c := New()
	filled := func() int {
		n := 0
		for i := range c.cache {
			if c.cache[i].Load() != 0 {
				n++
			}
		}
		return n
	}
	texts := []string{"hello world", strings.Repeat("Hello, 世界! 🚀 ", 10), strings.Repeat("tiktoken is great! ", 10), strings.Repeat("x", 5000)}
	for _, text := range texts {
		for _, model := range []string{"gpt-4o", "gpt-4"} {
			e := &c.cl100k
			if Encoding(model) == O200kBase {
				e = &c.o200k
			}
			want := e.count(text)
			for i := range 3 { // a miss, then hits
				if got := c.Count(model, text); got != want {
					t.Errorf("Count(%s, %.20q…) #%d = %d, want %d", model, text, i, got, want)
				}
				if got := c.CountBytes(model, []byte(text)); got != want {
					t.Errorf("CountBytes(%s, %.20q…) #%d = %d, want %d", model, text, i, got, want)
				}
			}
		}
	}
	if n := filled(); n != 2*len(texts) {
		t.Errorf("%d cache entries, want %d (each text in each encoding)", n, 2*len(texts))
	}
}

// BenchmarkCount is the cost of encoding a text (no cache).
func BenchmarkCount(b *testing.B) {
	c := New()
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20) // ~900 bytes
	c.Count("gpt-4o", text)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		c.o200k.count(text)
	}
}

// BenchmarkCountBytesCached is the cost of a text in bytes counted before.
func BenchmarkCountBytesCached(b *testing.B) {
	c := New()
	text := []byte(strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20))
	c.CountBytes("gpt-4o", text)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		c.CountBytes("gpt-4o", text)
	}
}

// BenchmarkCountCached is the cost of a text counted before.
func BenchmarkCountCached(b *testing.B) {
	c := New()
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20) // ~900 bytes
	c.Count("gpt-4o", text)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		c.Count("gpt-4o", text)
	}
}
