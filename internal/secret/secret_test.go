package secret_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/secret"
)

// key returns a 32-byte key filled with b.
func key(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func newBox(t *testing.T, k []byte) *secret.Box {
	t.Helper()
	b, err := secret.NewBox(k)
	if err != nil {
		t.Fatalf("NewBox: %v", err)
	}
	return b
}

func TestNewBoxKeyLength(t *testing.T) {
	tests := []struct {
		name    string
		n       int
		wantErr bool
	}{
		{"empty", 0, true},
		{"16 bytes", 16, true},
		{"31 bytes", 31, true},
		{"32 bytes", 32, false},
		{"33 bytes", 33, true},
		{"64 bytes", 64, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := secret.NewBox(make([]byte, tt.n))
			if (err != nil) != tt.wantErr {
				t.Errorf("NewBox(%d bytes): got error %v, want error %v", tt.n, err, tt.wantErr)
			}
		})
	}
}

func TestSealOpenRoundTrip(t *testing.T) {
	b := newBox(t, key(1))
	tests := []struct {
		name  string
		plain string
	}{
		{"empty", ""},
		{"api key", "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"},
		{"colons", "a:b:c:d"},
		{"unicode", "ключ-🔑"},
		{"long", strings.Repeat("x", 10_000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sealed, err := b.Seal(tt.plain)
			if err != nil {
				t.Fatalf("Seal: %v", err)
			}
			if want := "v1:" + b.KeyID() + ":"; !strings.HasPrefix(sealed, want) {
				t.Errorf("sealed: got %q, want prefix %q", sealed, want)
			}
			if tt.plain != "" && strings.Contains(sealed, tt.plain) {
				t.Errorf("sealed value %q contains the plaintext", sealed)
			}
			got, err := b.Open(sealed)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if got.Reveal() != tt.plain {
				t.Errorf("Open: got %q, want %q", got.Reveal(), tt.plain)
			}
		})
	}
}

func TestSealIsRandomized(t *testing.T) {
	b := newBox(t, key(2))
	s1, err := b.Seal("same")
	if err != nil {
		t.Fatal(err)
	}
	s2, err := b.Seal("same")
	if err != nil {
		t.Fatal(err)
	}
	if s1 == s2 {
		t.Errorf("two seals of the same plaintext: got %q twice, want different values", s1)
	}
}

func TestKeyID(t *testing.T) {
	a, b := newBox(t, key(1)), newBox(t, key(2))
	if len(a.KeyID()) != 8 {
		t.Errorf("KeyID length: got %d (%q), want 8", len(a.KeyID()), a.KeyID())
	}
	if a.KeyID() == b.KeyID() {
		t.Errorf("KeyID of different keys: got %q for both, want different", a.KeyID())
	}
	if got := newBox(t, key(1)).KeyID(); got != a.KeyID() {
		t.Errorf("KeyID of the same key: got %q, want %q", got, a.KeyID())
	}
}

func TestOpenFailures(t *testing.T) {
	b := newBox(t, key(3))
	other := newBox(t, key(4))
	sealed, err := b.Seal("provider-key-123")
	if err != nil {
		t.Fatal(err)
	}
	fromOther, err := other.Seal("provider-key-123")
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.SplitN(sealed, ":", 3)
	raw, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatal(err)
	}
	enc := func(p []byte) string { return "v1:" + parts[1] + ":" + base64.StdEncoding.EncodeToString(p) }
	flip := func(i int) string {
		c := bytes.Clone(raw)
		c[i] ^= 0x01
		return enc(c)
	}

	tests := []struct {
		name   string
		sealed string
	}{
		{"empty", ""},
		{"plain text", "provider-key-123"},
		{"unknown version", "v2:" + parts[1] + ":" + parts[2]},
		{"missing payload", "v1:" + parts[1]},
		{"empty payload", "v1:" + parts[1] + ":"},
		{"bad base64", "v1:" + parts[1] + ":!!!not-base64!!!"},
		{"truncated to half the nonce", enc(raw[:6])},
		{"nonce only", enc(raw[:12])},
		{"truncated tag", enc(raw[:len(raw)-1])},
		{"truncated string", sealed[:len(sealed)-4]},
		{"tampered nonce", flip(0)},
		{"tampered ciphertext", flip(13)},
		{"tampered tag", flip(len(raw) - 1)},
		{"wrong key id", "v1:00000000:" + parts[2]},
		{"sealed by another key", fromOther},
		{"another key's payload under our key id", "v1:" + b.KeyID() + ":" + strings.SplitN(fromOther, ":", 3)[2]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := b.Open(tt.sealed)
			if err == nil {
				t.Fatalf("Open(%q): got %q and no error, want an error", tt.sealed, got.Reveal())
			}
			if got != "" {
				t.Errorf("Open(%q) on error: got %q, want empty", tt.sealed, got.Reveal())
			}
			if strings.Contains(err.Error(), "provider-key-123") {
				t.Errorf("error %q reveals the plaintext", err)
			}
		})
	}
}

func TestWithPrevious(t *testing.T) {
	oldBox := newBox(t, key(5))
	sealedOld, err := oldBox.Seal("old-secret")
	if err != nil {
		t.Fatal(err)
	}
	cur := newBox(t, key(6)).WithPrevious(oldBox)
	sealedNew, err := cur.Seal("new-secret")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sealedNew, "v1:"+cur.KeyID()+":") {
		t.Errorf("Seal after rotation: got %q, want the current key id %s", sealedNew, cur.KeyID())
	}
	tests := []struct {
		name   string
		sealed string
		want   string
	}{
		{"value of the old key", sealedOld, "old-secret"},
		{"value of the current key", sealedNew, "new-secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cur.Open(tt.sealed)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if got.Reveal() != tt.want {
				t.Errorf("Open: got %q, want %q", got.Reveal(), tt.want)
			}
		})
	}
	t.Run("value of a third key", func(t *testing.T) {
		third, err := newBox(t, key(7)).Seal("x")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cur.Open(third); err == nil {
			t.Errorf("Open(value of an unknown key): got no error, want one")
		}
	})
	t.Run("old box alone cannot open new values", func(t *testing.T) {
		if _, err := oldBox.Open(sealedNew); err == nil {
			t.Errorf("old Open(new value): got no error, want one")
		}
	})
}

func TestParseKey(t *testing.T) {
	k := make([]byte, 32)
	for i := range k {
		k[i] = byte(i * 7)
	}
	tests := []struct {
		name    string
		in      string
		want    []byte
		wantErr bool
	}{
		{"hex", hex.EncodeToString(k), k, false},
		{"upper hex", strings.ToUpper(hex.EncodeToString(k)), k, false},
		{"hex with newline", hex.EncodeToString(k) + "\n", k, false},
		{"base64", base64.StdEncoding.EncodeToString(k), k, false},
		{"base64 with spaces", "  " + base64.StdEncoding.EncodeToString(k) + " \n", k, false},
		{"empty", "", nil, true},
		{"short hex", hex.EncodeToString(k[:31]), nil, true},
		{"long hex", hex.EncodeToString(append(bytes.Clone(k), 0)), nil, true},
		{"short base64", base64.StdEncoding.EncodeToString(k[:16]), nil, true},
		{"raw 32 chars", strings.Repeat("a", 32), nil, true},
		{"garbage", "not a key at all", nil, true},
		{"url base64 of 32 bytes", base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, 32)), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := secret.ParseKey(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseKey(%q): got error %v, want error %v", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseKey(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestLoadOrCreateKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "dir", "master.key")
	k1, err := secret.LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatalf("first LoadOrCreateKeyFile: %v", err)
	}
	if len(k1) != 32 {
		t.Errorf("key length: got %d, want 32", len(k1))
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("stat key file: %v", err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("key file mode: got %o, want 600", got)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := secret.LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatalf("second LoadOrCreateKeyFile: %v", err)
	}
	if diff := cmp.Diff(k1, k2); diff != "" {
		t.Errorf("key read back (-first +second):\n%s", diff)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, after) {
		t.Errorf("second call rewrote the file: got %q, want %q", after, data)
	}
	// A value sealed with the created key opens with the key read back.
	sealed, err := newBox(t, k1).Seal("x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newBox(t, k2).Open(sealed); err != nil {
		t.Errorf("Open with the key read back: %v", err)
	}

	t.Run("corrupt file is refused", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "bad.key")
		if err := os.WriteFile(p, []byte("nope\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if k, err := secret.LoadOrCreateKeyFile(p); err == nil {
			t.Errorf("LoadOrCreateKeyFile(corrupt): got %x and no error, want an error", k)
		}
	})
	t.Run("existing operator key is used", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "given.key")
		want := key(9)
		if err := os.WriteFile(p, []byte(base64.StdEncoding.EncodeToString(want)), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := secret.LoadOrCreateKeyFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("key (-want +got):\n%s", diff)
		}
	})
}

const plaintext = "sk-live-TOPSECRET-0123456789"

func TestValueNeverPrints(t *testing.T) {
	v := secret.Value(plaintext)
	type holder struct {
		Key  secret.Value
		Name string
	}
	h := holder{Key: v, Name: "n"}

	tests := []struct {
		name string
		out  func() (string, error)
	}{
		{"%v", func() (string, error) { return fmt.Sprintf("%v", v), nil }},
		{"%s", func() (string, error) { return fmt.Sprintf("%s", v), nil }},
		{"%#v", func() (string, error) { return fmt.Sprintf("%#v", v), nil }},
		{"%+v", func() (string, error) { return fmt.Sprintf("%+v", v), nil }},
		{"%q", func() (string, error) { return fmt.Sprintf("%q", v), nil }},
		{"%x", func() (string, error) { return fmt.Sprintf("%x", v), nil }},
		{"Sprint", func() (string, error) { return fmt.Sprint(v), nil }},
		{"Println", func() (string, error) { return fmt.Sprintln(v), nil }},
		{"Errorf", func() (string, error) { return fmt.Errorf("key %v", v).Error(), nil }},
		{"struct %v", func() (string, error) { return fmt.Sprintf("%v", h), nil }},
		{"struct %+v", func() (string, error) { return fmt.Sprintf("%+v", h), nil }},
		{"struct %#v", func() (string, error) { return fmt.Sprintf("%#v", h), nil }},
		{"pointer %v", func() (string, error) { return fmt.Sprintf("%v", &v), nil }},
		{"slice %v", func() (string, error) { return fmt.Sprintf("%v", []secret.Value{v}), nil }},
		{"map %v", func() (string, error) { return fmt.Sprintf("%v", map[string]secret.Value{"k": v}), nil }},
		{"json.Marshal", func() (string, error) { b, err := json.Marshal(v); return string(b), err }},
		{"json.Marshal struct", func() (string, error) { b, err := json.Marshal(h); return string(b), err }},
		{"json.Marshal map", func() (string, error) {
			b, err := json.Marshal(map[string]any{"k": v})
			return string(b), err
		}},
		{"slog text", func() (string, error) { return logWith(slog.NewTextHandler, "key", v), nil }},
		{"slog json", func() (string, error) { return logWith(slog.NewJSONHandler, "key", v), nil }},
		{"slog text struct", func() (string, error) { return logWith(slog.NewTextHandler, "h", h), nil }},
		{"slog json struct", func() (string, error) { return logWith(slog.NewJSONHandler, "h", h), nil }},
		{"slog text group", func() (string, error) {
			return logWith(slog.NewTextHandler, "g", slog.GroupValue(slog.Any("key", v))), nil
		}},
		{"slog json pointer", func() (string, error) { return logWith(slog.NewJSONHandler, "key", &v), nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.out()
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if strings.Contains(got, plaintext) || strings.Contains(got, hex.EncodeToString([]byte(plaintext))) {
				t.Errorf("got %q, want no trace of the secret", got)
			}
			if !strings.Contains(got, "REDACTED") && !strings.Contains(got, hex.EncodeToString([]byte("[REDACTED]"))) {
				t.Errorf("got %q, want [REDACTED]", got)
			}
		})
	}
	if got := v.Reveal(); got != plaintext {
		t.Errorf("Reveal: got %q, want %q", got, plaintext)
	}
}

// logWith logs one record with attribute k=v through a new handler into a
// buffer and returns what was written.
func logWith[H slog.Handler](newHandler func(w io.Writer, o *slog.HandlerOptions) H, k string, v any) string {
	var buf bytes.Buffer
	slog.New(newHandler(&buf, nil)).Info("msg", k, v)
	return buf.String()
}

// TestValueWrongVerb checks verbs that do not apply to strings: fmt reports
// them as %!d(secret.Value=…) and prints the operand without its String
// method, so only a fmt.Formatter keeps the secret out.
func TestValueWrongVerb(t *testing.T) {
	v := secret.Value(plaintext)
	for _, verb := range []string{"%d", "%t", "%f"} {
		t.Run(verb, func(t *testing.T) {
			if got := fmt.Sprintf(verb, v); strings.Contains(got, plaintext) {
				t.Errorf("Sprintf(%q): got %q, want no trace of the secret", verb, got)
			}
		})
	}
}
