// Package tokenize counts tokens offline with OpenAI's BPE encodings, for
// the gateway's usage estimate when a provider reports no usage.
package tokenize

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// MaxBytes is the most text one Count call encodes. Longer text is counted
// on its first MaxBytes and extrapolated linearly, so that an estimate
// costs at most a bounded amount of CPU (BPE over 1 MiB takes a fraction
// of a second) however large the request or answer.
const MaxBytes = 1 << 20

// maxSegment bounds the text one encoder call sees. tiktoken's BPE merge
// is quadratic in the length of a pre-tokenized piece, and a piece is as
// long as a run of letters, of punctuation or of spaces: 1 MiB of
// "aaaa…" (a base64 blob in a prompt) would take hours. Counting the text
// in segments bounds every piece; a segment ends before a space that
// follows a non-space, where the encodings' pre-tokenizer splits anyway,
// so ordinary text counts exactly the same. Only a run longer than
// maxSegment/2 bytes is cut inside, costing about a token per cut.
const maxSegment = 512

// The encodings Count chooses from.
const (
	O200kBase  = tiktoken.MODEL_O200K_BASE
	Cl100kBase = tiktoken.MODEL_CL100K_BASE
)

// setLoader guards tiktoken.SetBpeLoader. The loader is a package-level
// variable of tiktoken-go, written without synchronisation and read by
// every encoding load, so it is set exactly once, before any Counter can
// load: with tiktoken's default loader an encoding would be downloaded
// from the Internet, which the gateway must never do.
var setLoader sync.Once

// Counter counts tokens. Its encodings are loaded on first use (parsing
// the embedded BPE ranks takes a few hundred milliseconds and tens of MB),
// so a gateway whose providers always report usage never pays for them.
// A Counter is safe for concurrent use.
//
// BPE is slow (about 2 MB/s: a 1 KiB prompt costs some 0.5 ms of CPU), and
// the gateway counts prompts on every request under a hard budget or a
// tokens-per-minute limit, where most of a prompt — a system prompt, the
// earlier turns of a conversation — was counted before, and even a short
// text costs some 30 us and 40 allocations to encode. So a Counter
// remembers the counts of the texts it counted in a direct-mapped cache:
// cacheSlots atomic words, each holding a 40-bit tag of the text's hash
// and its count. A lookup takes no lock and allocates
// nothing; a collision only overwrites an older entry (a miss later).
type Counter struct {
	o200k, cl100k encoding
	seed          maphash.Seed
	cache         []atomic.Uint64 // cacheSlots entries: tag<<countBits | count+1, 0 when empty
}

// The count cache (see Counter).
const (
	// cacheSlots is a power of two: 64 Ki entries, 512 KiB.
	cacheSlots = 1 << 16
	// countBits holds count+1; a larger count is not cached.
	countBits = 24
)

// encoding is one lazily loaded BPE encoding.
type encoding struct {
	name string
	once sync.Once
	enc  *tiktoken.Tiktoken // nil when the encoding failed to load
}

// New returns a Counter. It loads nothing yet.
func New() *Counter {
	setLoader.Do(func() { tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader()) })
	return &Counter{o200k: encoding{name: O200kBase}, cl100k: encoding{name: Cl100kBase},
		seed: maphash.MakeSeed(), cache: make([]atomic.Uint64, cacheSlots)}
}

// Warm loads both encodings now, so that the first request that needs a
// count does not pay for parsing the BPE ranks (a few hundred
// milliseconds, longer on a busy core). A server calls it once at start,
// off the request path; Count works without it.
func (c *Counter) Warm() {
	c.o200k.get()
	c.cl100k.get()
}

func (e *encoding) get() *tiktoken.Tiktoken {
	e.once.Do(func() {
		// The BPE files are embedded in the loader module: an error here
		// is a broken build, and Count falls back to a byte heuristic.
		e.enc, _ = tiktoken.GetEncoding(e.name)
	})
	return e.enc
}

// Encoding returns the name of the encoding Count uses for model:
// o200k_base for the GPT-4o, GPT-4.1, GPT-4.5, GPT-5 and o-series models,
// cl100k_base for every other model. Other vendors' tokenizers are not
// public or not offline; cl100k_base is within some 10–20% of them on
// English text, which is what an estimate flagged usage_estimated needs.
func Encoding(model string) string {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:] // "openai/gpt-4o", an OpenRouter id
	}
	model = strings.ToLower(model)
	switch {
	case strings.Contains(model, "gpt-4o"), strings.Contains(model, "gpt-4.1"),
		strings.Contains(model, "gpt-4.5"), strings.Contains(model, "gpt-5"),
		strings.Contains(model, "gpt-oss"):
		return O200kBase
	case len(model) >= 2 && model[0] == 'o' && model[1] >= '1' && model[1] <= '9':
		return O200kBase // o1, o3-mini, o4-mini, …
	}
	return Cl100kBase
}

// Count returns the number of tokens of text for model (see Encoding).
// Special tokens such as <|endoftext|> count as ordinary text, as a
// provider counts them in user content. Text longer than MaxBytes is
// counted on its first MaxBytes and extrapolated linearly.
func (c *Counter) Count(model, text string) int {
	if text == "" {
		return 0
	}
	e, slot, tag := c.entry(model, maphash.String(c.seed, text))
	if n, ok := cached(slot, tag); ok {
		return n
	}
	return remember(slot, tag, e.count(text))
}

// CountBytes is Count of a text held in bytes (a request's, as parsed):
// a text counted before costs neither a copy nor an allocation.
func (c *Counter) CountBytes(model string, text []byte) int {
	if len(text) == 0 {
		return 0
	}
	e, slot, tag := c.entry(model, maphash.Bytes(c.seed, text))
	if n, ok := cached(slot, tag); ok {
		return n
	}
	return remember(slot, tag, e.count(string(text)))
}

// entry returns model's encoding and the cache slot and tag of a text
// whose hash is h.
func (c *Counter) entry(model string, h uint64) (*encoding, *atomic.Uint64, uint64) {
	e := &c.cl100k
	if Encoding(model) == O200kBase {
		e = &c.o200k
		h ^= 0x9e3779b97f4a7c15 // the same text in the other encoding is another entry
	}
	return e, &c.cache[h&(cacheSlots-1)], h >> countBits
}

// cached returns the count a slot holds for tag.
func cached(slot *atomic.Uint64, tag uint64) (int, bool) {
	if v := slot.Load(); v != 0 && v>>countBits == tag {
		return int(v&(1<<countBits-1)) - 1, true
	}
	return 0, false
}

// remember stores n in slot under tag (when it fits) and returns it.
func remember(slot *atomic.Uint64, tag uint64, n int) int {
	if n+1 < 1<<countBits {
		slot.Store(tag<<countBits | uint64(n+1))
	}
	return n
}

// count encodes text (see Count).
func (e *encoding) count(text string) int {
	head := bounded(text)
	var n int
	if enc := e.get(); enc != nil {
		for rest := head; len(rest) > 0; {
			end := segmentEnd(rest)
			n += len(enc.EncodeOrdinary(rest[:end]))
			rest = rest[end:]
		}
	} else {
		n = (len(head) + 3) / 4 // about four bytes a token in English
	}
	if len(head) < len(text) {
		n = int(int64(n) * int64(len(text)) / int64(len(head)))
	}
	return n
}

// bounded returns text cut to at most MaxBytes, at a rune boundary.
func bounded(text string) string {
	if len(text) <= MaxBytes {
		return text
	}
	cut := MaxBytes
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut]
}

// segmentEnd returns the length of the next segment of text (see
// maxSegment).
func segmentEnd(text string) int {
	if len(text) <= maxSegment {
		return len(text)
	}
	for i := maxSegment; i > maxSegment/2; i-- {
		if text[i] == ' ' && !isSpace(text[i-1]) {
			return i
		}
	}
	i := maxSegment
	for i > 0 && !utf8.RuneStart(text[i]) {
		i--
	}
	return i
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }
