// Package respcache is the exact-match response cache: a key derived from
// where a request goes and what it says, and stores of complete answers —
// in process (bounded by bytes) or in Redis (shared by replicas).
//
// The key covers the tenant, the gateway, the operation, the provider and
// model, and the request body in canonical form, so two gateways — or two
// tenants — never share an entry, and bodies that differ only in key
// order, white space, string escapes or the stream flag share one.
package respcache

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/llm"
)

// Key identifies a cached answer: a SHA-256.
type Key [32]byte

// String returns the key in hex.
func (k Key) String() string { return hex.EncodeToString(k[:]) }

// Scope is where a request goes. Every field is part of the key.
type Scope struct {
	TenantID  string
	GatewayID string
	// Op is the operation ("chat", "completions", "embeddings").
	Op string
	// Provider and Model are the target the answer comes from; for a
	// gateway route, the route's name and its targets.
	Provider string
	Model    string
}

// ignoredFields are top-level request fields that do not change the
// answer's content: whether it is streamed, how, and the end-user id.
var ignoredFields = []string{"stream", "stream_options", "user"}

// maxDepth bounds the nesting of a body the key is computed over.
const maxDepth = 128

// ErrBody is returned by NewKey for a body that is not a JSON object.
var ErrBody = errors.New("cache: body is not a JSON object")

// NewKey returns the key of a request: SHA-256 over the scope and the
// canonical JSON of body without the ignored fields. Canonical JSON has
// object keys sorted (recursively), no white space, strings re-encoded
// one way, and numbers as written (1.0 and 1 differ).
func NewKey(s Scope, body []byte) (Key, error) {
	var p fastjson.Parser
	v, err := p.ParseBytes(body)
	if err != nil {
		return Key{}, fmt.Errorf("%w: %v", ErrBody, err)
	}
	if v.Type() != fastjson.TypeObject {
		return Key{}, ErrBody
	}
	h := sha256.New()
	for _, f := range []string{"sluice-cache-v1", s.TenantID, s.GatewayID, s.Op, s.Provider, s.Model} {
		writeField(h, f)
	}
	buf := make([]byte, 0, len(body))
	buf, err = canonical(buf, v, 0, true)
	if err != nil {
		return Key{}, err
	}
	h.Write(buf)
	var k Key
	h.Sum(k[:0])
	return k, nil
}

// writeField writes s length-prefixed, so that fields cannot run into
// each other ("ab"+"c" ≠ "a"+"bc").
func writeField(h hash.Hash, s string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}

func canonical(dst []byte, v *fastjson.Value, depth int, top bool) ([]byte, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d", ErrBody, maxDepth)
	}
	switch v.Type() {
	case fastjson.TypeObject:
		o, _ := v.Object()
		type member struct {
			key string
			val *fastjson.Value
		}
		members := make([]member, 0, o.Len())
		o.Visit(func(k []byte, val *fastjson.Value) {
			if top && slices.Contains(ignoredFields, string(k)) {
				return
			}
			members = append(members, member{string(k), val})
		})
		slices.SortFunc(members, func(a, b member) int {
			switch {
			case a.key < b.key:
				return -1
			case a.key > b.key:
				return 1
			}
			return 0
		})
		dst = append(dst, '{')
		for i, m := range members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, m.key)
			dst = append(dst, ':')
			var err error
			if dst, err = canonical(dst, m.val, depth+1, false); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	case fastjson.TypeArray:
		dst = append(dst, '[')
		for i, item := range v.GetArray() {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = canonical(dst, item, depth+1, false); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case fastjson.TypeString:
		return appendString(dst, string(v.GetStringBytes())), nil
	}
	// Numbers keep their text; true, false and null are literals.
	return v.MarshalTo(dst), nil
}

// appendString appends s as a JSON string in the one canonical form:
// only '"', '\\' and control characters escaped.
func appendString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		dst = utf8.AppendRune(dst, r) // invalid bytes become U+FFFD
		i += n
	}
	return append(dst, '"')
}

// Entry is a cached answer.
type Entry struct {
	// Body is the complete answer in the OpenAI schema (a chat
	// completion, a text completion or an embeddings list), as the client
	// received it.
	Body []byte
	// Provider and Model are who answered.
	Provider string
	Model    string
	// Usage is what the answer cost upstream, for the saving of a hit.
	Usage llm.Usage
}

// size is the memory an entry holds, roughly.
func (e *Entry) size() int { return len(e.Body) + len(e.Provider) + len(e.Model) + 96 }

// Store keeps answers for a time. Get and Set never fail the request: a
// store that cannot answer reports a miss, and a Set that cannot store
// is dropped.
type Store interface {
	// Get returns the entry of k, if it is stored and has not expired.
	// The entry is shared: callers must not modify it.
	Get(ctx context.Context, k Key) (*Entry, bool)
	// Set stores e under k for ttl. The store owns e afterwards.
	Set(ctx context.Context, k Key, e *Entry, ttl time.Duration)
}

// header is the encoded form of an entry's fields other than the body.
type header struct {
	Provider string    `json:"provider"`
	Model    string    `json:"model"`
	Usage    llm.Usage `json:"usage"`
}

// encode returns e as bytes: a JSON header line, then the body.
func encode(e *Entry) []byte {
	h, _ := json.Marshal(header{Provider: e.Provider, Model: e.Model, Usage: e.Usage}) // plain fields: cannot fail
	out := make([]byte, 0, len(h)+1+len(e.Body))
	out = append(out, h...)
	out = append(out, '\n')
	return append(out, e.Body...)
}

// decode reverses encode.
func decode(b []byte) (*Entry, error) {
	i := slices.Index(b, '\n')
	if i < 0 {
		return nil, errors.New("cache: entry without header")
	}
	var h header
	if err := json.Unmarshal(b[:i], &h); err != nil {
		return nil, fmt.Errorf("cache: entry header: %w", err)
	}
	return &Entry{Body: b[i+1:], Provider: h.Provider, Model: h.Model, Usage: h.Usage}, nil
}
