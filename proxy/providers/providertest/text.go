package providertest

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/internal/jsonstr"
)

// Text helpers shared by the wire formats: the answer, token counts,
// stream pieces, embeddings and JSON encoding by appending to a buffer.

// answerPrefix starts every answer; it is 3 words.
const answerPrefix = "Hello from mock: "

// maxEcho is how many characters (runes) of the last user message the
// answer repeats.
const maxEcho = 100

// echo returns the first maxEcho runes of s.
func echo(s string) string {
	n := 0
	for i := range s {
		if n == maxEcho {
			return s[:i]
		}
		n++
	}
	return s
}

// toolArguments is the arguments of the mock's tool calls, in the wire
// formats that call tools: {"text":<the echoed text>}.
func toolArguments(text string) string {
	return `{"text":` + string(jsonstr.Append(nil, text)) + `}`
}

// jsonAnswer is the answer of a request for JSON output, in the wire
// formats that have a JSON mode: {"text":"Hello from mock: <text>"}.
func jsonAnswer(text string) string { return toolArguments(answerPrefix + text) }

// answerWord fills long answers (Step.AnswerTokens): one word, one token.
const answerWord = "word"

// longAnswer is the answer of a Step with AnswerTokens, for a request whose
// maximum output is limit (0: none): the text after answerPrefix, the
// tokens of the whole answer, and whether the cap cut it.
func longAnswer(st Step, limit int) (text string, tokens int, cut bool) {
	tokens = st.AnswerTokens
	if limit > 0 && tokens > limit {
		tokens, cut = limit, true
	}
	tokens = max(tokens, words(answerPrefix))
	n := tokens - words(answerPrefix)
	if n == 0 {
		return "", tokens, cut
	}
	return strings.Repeat(answerWord+" ", n-1) + answerWord, tokens, cut
}

// words counts the white-space-separated words of s, the mock's tokens.
func words(s string) int {
	n, in := 0, false
	for _, r := range s {
		if unicode.IsSpace(r) {
			in = false
		} else if !in {
			in = true
			n++
		}
	}
	return n
}

// pieces calls yield with s cut into k pieces of (nearly) equal rune
// counts, never inside a rune; pieces are empty when s has fewer than k
// runes. Concatenated, they are s.
func pieces(s string, k int, yield func(string)) {
	n := utf8.RuneCountInString(s)
	start, pos, r := 0, 0, 0
	for i := 1; i <= k; i++ {
		for target := i * n / k; r < target; r++ {
			_, size := utf8.DecodeRuneInString(s[pos:])
			pos += size
		}
		yield(s[start:pos])
		start = pos
	}
}

// embeddingDims is the length of every mock embedding.
const embeddingDims = 8

// embedding derives a unit vector from a hash of text, so that equal texts
// get equal vectors (cosine similarity 1) and different texts almost
// always different ones.
func embedding(text string) [embeddingDims]float32 {
	x := uint64(14695981039346656037) // FNV-1a, inline: no allocation
	for i := 0; i < len(text); i++ {
		x ^= uint64(text[i])
		x *= 1099511628211
	}
	var v [embeddingDims]float64
	var norm float64
	for i := range v {
		x = splitmix64(x)
		v[i] = float64(x>>11)/(1<<53)*2 - 1
		norm += v[i] * v[i]
	}
	norm = math.Sqrt(norm)
	var out [embeddingDims]float32
	for i := range v {
		out[i] = float32(v[i] / norm)
	}
	return out
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// appendEmbedding appends vec as a JSON array of numbers or, with base64,
// as the base64 string of its little-endian float32s (OpenAI's
// encoding_format "base64").
func appendEmbedding(b []byte, vec [embeddingDims]float32, asBase64 bool) []byte {
	if asBase64 {
		var raw [embeddingDims * 4]byte
		for i, f := range vec {
			binary.LittleEndian.PutUint32(raw[i*4:], math.Float32bits(f))
		}
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, raw[:])
		return append(b, '"')
	}
	b = append(b, '[')
	for i, f := range vec {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(f), 'g', -1, 32)
	}
	return append(b, ']')
}

// setRawBody answers body as is, typed by its first byte.
func setRawBody(ctx *fasthttp.RequestCtx, body string) {
	ct := "text/plain; charset=utf-8"
	trimmed := strings.TrimLeft(body, " \t\r\n")
	if trimmed != "" {
		switch trimmed[0] {
		case '{', '[':
			ct = "application/json"
		case '<':
			ct = "text/html; charset=utf-8"
		}
	}
	ctx.SetContentType(ct)
	ctx.SetBodyString(body)
}
