// Package ids makes identifiers and token secrets.
package ids

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
)

// New returns prefix + "_" + a lower-case ULID, e.g. "gw_01j9…". ULIDs are
// time-ordered, so listings by id are listings by creation.
func New(prefix string) string {
	return prefix + "_" + strings.ToLower(ulid.Make().String())
}

// UUIDv7 returns a time-ordered UUID, used for request logs.
func UUIDv7() string {
	return uuid.Must(uuid.NewV7()).String()
}

// TokenPrefix starts every token secret.
const TokenPrefix = "sk-sl-"

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewSecret returns a token secret: "sk-sl-" and 40 base62 characters
// (about 238 bits), drawn without modulo bias.
func NewSecret() string {
	var b strings.Builder
	b.Grow(len(TokenPrefix) + 40)
	b.WriteString(TokenPrefix)
	buf := make([]byte, 64)
	for b.Len() < len(TokenPrefix)+40 {
		if _, err := rand.Read(buf); err != nil {
			panic("crypto/rand: " + err.Error()) // never fails on supported platforms
		}
		for _, c := range buf {
			if c >= 248 { // 248 = 4*62: reject to keep the draw uniform
				continue
			}
			b.WriteByte(base62[c%62])
			if b.Len() == len(TokenPrefix)+40 {
				break
			}
		}
	}
	return b.String()
}

// Hash is the stored form of a token secret: hex SHA-256 of the whole secret.
func Hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Display returns the prefix (first 10 characters) and last 4 characters
// kept for display of a secret.
func Display(secret string) (prefix, last4 string) {
	prefix = secret
	if len(prefix) > 10 {
		prefix = prefix[:10]
	}
	last4 = secret
	if len(last4) > 4 {
		last4 = last4[len(last4)-4:]
	}
	return prefix, last4
}
