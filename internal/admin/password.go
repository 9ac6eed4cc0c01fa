package admin

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"

	"github.com/sluicehq/sluice/internal/apierr"
)

// Password hashing: argon2id with the OWASP minimum parameters (19 MiB,
// two passes, one lane), a 16-byte random salt and a 32-byte key, stored
// in the PHC string format so that the parameters travel with the hash and
// can be raised later without invalidating stored passwords.
const (
	argonMemoryKiB = 19456
	argonTime      = 2
	argonThreads   = 1
	argonSaltLen   = 16
	argonKeyLen    = 32

	minPasswordLen = 12  // characters
	maxPasswordLen = 256 // bytes; bounds the work an attacker can ask for
)

// dummyHash is the hash of a random password nobody knows. Sign-ins for an
// unknown email (or a user without a password) verify against it, so that
// their timing matches a wrong password for a real user.
const dummyHash = "$argon2id$v=19$m=19456,t=2,p=1$EmPBOlilmga3KYOJ6ZLKcg$QcaXYwvlgZzKJpOPw8cGciXlI4LrtrpOKFco2KjT67Q"

// redacted replaces secrets in audit changes.
const redacted = "[REDACTED]"

// checkPassword validates a new password.
func checkPassword(pw string) error {
	if !utf8.ValidString(pw) {
		return apierr.Invalid("password", "password is not valid UTF-8")
	}
	if utf8.RuneCountInString(pw) < minPasswordLen {
		return apierr.Invalid("password", "password must be at least %d characters", minPasswordLen)
	}
	if len(pw) > maxPasswordLen {
		return apierr.Invalid("password", "password is longer than %d bytes", maxPasswordLen)
	}
	return nil
}

// hashPassword returns the argon2id PHC string of pw.
func hashPassword(pw string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password salt: %w", err)
	}
	key := argon2.IDKey([]byte(pw), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemoryKiB, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// verifyPassword reports whether pw matches the PHC string hash. The
// comparison of the derived keys takes constant time. A malformed hash never
// matches.
func verifyPassword(hash, pw string) bool {
	h, ok := parsePHC(hash)
	if !ok {
		return false
	}
	got := argon2.IDKey([]byte(pw), h.salt, h.time, h.memory, h.threads, uint32(len(h.key)))
	return subtle.ConstantTimeCompare(got, h.key) == 1
}

// phc is a parsed argon2id PHC string.
type phc struct {
	memory, time uint32
	threads      uint8
	salt, key    []byte
}

// parsePHC reads "$argon2id$v=19$m=…,t=…,p=…$salt$key". Parameters outside
// sane bounds are refused, so that a tampered row cannot turn a sign-in
// into a denial of service.
func parsePHC(s string) (phc, bool) {
	var h phc
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return h, false
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return h, false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &h.memory, &h.time, &h.threads); err != nil {
		return h, false
	}
	if h.memory < 8 || h.memory > 1<<20 || h.time < 1 || h.time > 16 || h.threads < 1 || h.threads > 16 {
		return h, false
	}
	b64 := base64.RawStdEncoding
	var err error
	if h.salt, err = b64.DecodeString(parts[4]); err != nil || len(h.salt) < 8 {
		return h, false
	}
	if h.key, err = b64.DecodeString(parts[5]); err != nil || len(h.key) < 16 || len(h.key) > 64 {
		return h, false
	}
	return h, true
}
