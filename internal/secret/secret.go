// Package secret seals provider keys at rest with AES-256-GCM and keeps
// secrets out of logs: a Value prints as [REDACTED] however it is printed.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// Value is a secret string. It never prints, marshals or logs its content.
type Value string

const redacted = "[REDACTED]"

// String returns [REDACTED].
func (Value) String() string { return redacted }

// GoString returns [REDACTED].
func (Value) GoString() string { return redacted }

// MarshalJSON writes "[REDACTED]".
func (Value) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// Format prints [REDACTED] for every verb, so that no formatting of a
// Value (%d, %x, %q included) shows its content.
func (Value) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// LogValue makes slog print [REDACTED].
func (Value) LogValue() slog.Value { return slog.StringValue(redacted) }

// Reveal returns the secret itself, for the one place that must send it.
func (v Value) Reveal() string { return string(v) }

// Box seals and opens secrets with a 256-bit master key. Sealed values carry
// the key id, so a rotation can tell which key sealed them.
type Box struct {
	aead  cipher.AEAD
	keyID string
	prev  *Box // older key, for opening values sealed before a rotation
}

// ErrNoKey is returned when a master key is required but none was given.
var ErrNoKey = errors.New("SLUICE_MASTER_KEY is required with this store")

// NewBox returns a Box for key, which must be 32 bytes.
func NewBox(key []byte) (*Box, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("master key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("aes: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("gcm: %w", err)
	}
	sum := sha256.Sum256(key)
	return &Box{aead: aead, keyID: hex.EncodeToString(sum[:4])}, nil
}

// WithPrevious lets the box open values sealed with an older key.
func (b *Box) WithPrevious(prev *Box) *Box { b.prev = prev; return b }

// ParseKey decodes a master key given as 64 hex characters or standard
// base64 of 32 bytes.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if k, err := hex.DecodeString(s); err == nil && len(k) == 32 {
		return k, nil
	}
	if k, err := base64.StdEncoding.DecodeString(s); err == nil && len(k) == 32 {
		return k, nil
	}
	return nil, errors.New("master key must be 32 bytes as 64 hex characters or base64")
}

// LoadOrCreateKeyFile reads the key file at path, creating it with a new
// random key and mode 0600 when it does not exist.
func LoadOrCreateKeyFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		return ParseKey(string(data))
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read master key file: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generate master key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create master key file: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		return nil, fmt.Errorf("write master key file: %w", err)
	}
	return key, f.Sync()
}

// Seal encrypts plaintext; the result is "v1:<key id>:<base64(nonce|ciphertext)>".
func (b *Box) Seal(plaintext string) (string, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("nonce: %w", err)
	}
	out := b.aead.Seal(nonce, nonce, []byte(plaintext), []byte(b.keyID))
	return "v1:" + b.keyID + ":" + base64.StdEncoding.EncodeToString(out), nil
}

// Open decrypts a value made by Seal.
func (b *Box) Open(sealed string) (Value, error) {
	parts := strings.SplitN(sealed, ":", 3)
	if len(parts) != 3 || parts[0] != "v1" {
		return "", errors.New("sealed value has an unknown format")
	}
	if parts[1] != b.keyID {
		if b.prev != nil {
			return b.prev.Open(sealed)
		}
		return "", fmt.Errorf("sealed with key %s, not the current master key", parts[1])
	}
	raw, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(raw) < b.aead.NonceSize() {
		return "", errors.New("sealed value is corrupt")
	}
	ns := b.aead.NonceSize()
	pt, err := b.aead.Open(nil, raw[:ns], raw[ns:], []byte(b.keyID))
	if err != nil {
		return "", errors.New("sealed value does not authenticate with the master key")
	}
	return Value(pt), nil
}

// KeyID returns the id of the box's key.
func (b *Box) KeyID() string { return b.keyID }
